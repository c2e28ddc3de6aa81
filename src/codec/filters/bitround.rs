//! numcodecs `BitRound`: float mantissas rounded to `keepbits` bits (Klöwer et al. 2021).

use super::copy;
use super::numeric::{load, store, ElemType, Kind, NumType};
use crate::codec::config::Config;
use crate::codec::filter::{check_len, Filter};
use crate::error::{Error, Result};
use serde_json::{json, Map, Value};

/// `{"id": "bitround", "keepbits": 10}`.
///
/// Encoding rounds the mantissa of each float (half to even, on the bit pattern) and, as in
/// numcodecs, returns the result as integers of the same width; decoding returns its input.
/// The float type is the filter's input type (the array's, or the previous filter's output).
/// numcodecs only encodes native-order float16/32/64 arrays (other byte orders fail with
/// KeyError) and `keepbits` up to the mantissa width; such configurations still decode.
#[derive(Debug, Clone)]
pub struct BitRound {
    keepbits: u64,
    /// What encoding does, or why numcodecs cannot encode.
    plan: std::result::Result<Plan, Refusal>,
}

#[derive(Debug, Clone, Copy)]
enum Plan {
    /// `keepbits` is the whole mantissa: numcodecs returns the input unchanged.
    Identity,
    /// Round element bit patterns of `ty` keeping all but `maskbits` mantissa bits.
    Round { ty: NumType, maskbits: u32 },
}

#[derive(Debug, Clone)]
enum Refusal {
    Unsupported(String),
    Invalid(String),
}

impl BitRound {
    /// Reads `keepbits` (required, a non-negative integer) for input of type `input`.
    pub(crate) fn from_config(
        obj: &Map<String, Value>,
        input: &ElemType,
    ) -> Result<(BitRound, ElemType)> {
        let cfg = Config::filter(obj, "bitround");
        let keepbits = cfg
            .required("keepbits")?
            .as_u64()
            .ok_or_else(|| cfg.invalid("keepbits", "a non-negative integer"))?;
        let (plan, output) = match input {
            ElemType::Num(t) if t.kind == Kind::Float => {
                let bits: u64 = match t.size {
                    2 => 10,
                    4 => 23,
                    _ => 52,
                };
                if *t != t.to_native() {
                    let msg = format!(
                        "numcodecs can only bit-round floats in the machine's byte order, not {}",
                        t.typestr()
                    );
                    (Err(Refusal::Unsupported(msg)), input.clone())
                } else if keepbits == bits {
                    (Ok(Plan::Identity), input.clone())
                } else if keepbits > bits {
                    let msg = format!(
                        "keepbits {keepbits} is more than {bits}, the mantissa bits of {}",
                        t.typestr()
                    );
                    (Err(Refusal::Invalid(msg)), input.clone())
                } else {
                    let maskbits = (bits - keepbits) as u32;
                    let int = NumType {
                        kind: Kind::Int,
                        ..*t
                    };
                    (Ok(Plan::Round { ty: *t, maskbits }), ElemType::Num(int))
                }
            }
            other => {
                let msg = format!(
                    "only float arrays (16-64 bit) can be bit-rounded, not {}",
                    other.typestr()
                );
                (Err(Refusal::Invalid(msg)), input.clone())
            }
        };
        Ok((BitRound { keepbits, plan }, output))
    }
}

impl Filter for BitRound {
    fn id(&self) -> &'static str {
        "bitround"
    }

    fn config(&self) -> Value {
        json!({"id": "bitround", "keepbits": self.keepbits})
    }

    fn encode(&self, input: &[u8]) -> Result<Vec<u8>> {
        let (ty, maskbits) = match &self.plan {
            Ok(Plan::Identity) => return copy(input),
            Ok(Plan::Round { ty, maskbits }) => (*ty, *maskbits),
            Err(Refusal::Unsupported(m)) => {
                return Err(Error::Unsupported(format!("bitround filter: {m}")))
            }
            Err(Refusal::Invalid(m)) => {
                return Err(Error::InvalidMetadata(format!("bitround filter: {m}")))
            }
        };
        super::count("bitround", input, ty, false)?;
        let width = 8 * ty.size as u32;
        let all = u64::MAX >> (64 - width);
        let mask = (all >> maskbits) << maskbits & all;
        let half_quantum = (1u64 << (maskbits - 1)) - 1;
        let mut out = copy(input)?;
        for e in out.chunks_exact_mut(ty.size) {
            let bits = load(e, ty.big);
            let rounded = bits
                .wrapping_add((bits >> maskbits) & 1)
                .wrapping_add(half_quantum)
                & mask;
            store(rounded, e, ty.big);
        }
        Ok(out)
    }

    fn decode(&self, input: &[u8], max_len: usize) -> Result<Vec<u8>> {
        check_len("bitround", input.len(), max_len)?;
        copy(input)
    }

    fn encoded_len(&self, decoded_len: usize) -> Option<usize> {
        Some(decoded_len)
    }
}

#[cfg(test)]
#[allow(clippy::approx_constant)]
mod tests {
    use super::super::testutil::*;
    use crate::error::Error;
    use serde_json::json;

    fn br(keepbits: u64, input: &str) -> Box<dyn Filter> {
        ok(json!({"id": "bitround", "keepbits": keepbits}), input)
    }
    use crate::codec::filter::Filter;

    #[test]
    fn matches_numcodecs_fixtures() {
        // numcodecs.BitRound(keepbits=k).encode(np.array([3.14159, -2.71828, 1e-3, 12345.678,
        // inf, nan], '<f4')) for k = 5 and 0 (0.15.2 and 0.16.6): NaN rounds into the sign bit
        // at k = 0, as numcodecs' integer arithmetic wraps.
        let input = f4(&[3.14159, -2.71828, 1e-3, 12345.678, f32::INFINITY, f32::NAN]);
        let (enc, dec) = round_trip(&*br(5, "<f4"), &input);
        assert_eq!(
            enc,
            unhex("0000484000002cc00000843a000040460000807f0000c07f")
        );
        assert_eq!(dec, enc);
        assert_eq!(
            br(0, "<f4").encode(&input).unwrap(),
            unhex("00008040000000c00000803a000080460000807f00000080")
        );
        // BitRound(keepbits=20).encode(np.array([3.14159, -2.71828, 1e-3, 12345.678], '<f8'))
        assert_eq!(
            br(20, "<f8")
                .encode(&f8(&[3.14159, -2.71828, 1e-3, 12345.678]))
                .unwrap(),
            unhex("00000000fa210940000000000abf05c0000000004e62503f00000000d71cc840")
        );
        // BitRound(keepbits=3).encode(np.array([3.14159, -2.71828, 1e-3, 12345.678], '<f2'))
        assert_eq!(
            br(3, "<f2").encode(&unhex("484270c119140772")).unwrap(),
            unhex("804280c100140072")
        );
    }

    #[test]
    fn output_type_and_identity() {
        assert_eq!(
            output_type(json!({"id": "bitround", "keepbits": 5}), "<f4"),
            "<i4"
        );
        assert_eq!(
            output_type(json!({"id": "bitround", "keepbits": 23}), "<f4"),
            "<f4"
        );
        let input = f4(&[3.14159, f32::NAN]);
        assert_eq!(br(23, "<f4").encode(&input).unwrap(), input);
        assert_eq!(
            br(52, "<f8").config(),
            json!({"id": "bitround", "keepbits": 52})
        );
    }

    #[test]
    fn refuses_to_encode_what_numcodecs_refuses_but_decodes() {
        for (keepbits, input, unsupported) in [
            (24, "<f4", false),
            (5, "<i4", false),
            (5, "<c8", false),
            (5, ">f4", true),
        ] {
            let f = br(keepbits, input);
            let err = f.encode(&[0; 8]).unwrap_err();
            match err {
                Error::Unsupported(m) if unsupported => assert!(m.contains("bitround"), "{m}"),
                Error::InvalidMetadata(m) if !unsupported => assert!(m.contains("bitround"), "{m}"),
                other => panic!("{keepbits} {input}: {other:?}"),
            }
            assert_eq!(f.decode(&[1; 8], 8).unwrap(), [1; 8]);
        }
        assert_corrupt(br(5, "<f4").decode(&[0; 8], 4), "bitround");
    }

    #[test]
    fn rejects_bad_config() {
        assert_invalid(json!({"id": "bitround"}), "<f4", "keepbits");
        assert_invalid(json!({"id": "bitround", "keepbits": -1}), "<f4", "keepbits");
        assert_invalid(
            json!({"id": "bitround", "keepbits": 2.5}),
            "<f4",
            "keepbits",
        );
    }
}
