//! numcodecs `Delta`: the first element, then the differences between neighbours.

use super::alloc;
use super::numeric::{load, promote, store, ArrayCast, ElemType, Kind, Num, NumType};
use super::{converted_len, count, num_dtype};
use crate::codec::config::Config;
use crate::codec::filter::{check_len, Filter};
use crate::error::{Error, Result};
use serde_json::{json, Map, Value};

/// `{"id": "delta", "dtype": "<i4", "astype": "<i4"}`.
///
/// As in numcodecs: differences are computed in `dtype` (integers wrap; booleans use `!=`),
/// then cast to `astype`; the first element is assigned as a NumPy scalar (a signed `astype`
/// refuses a first value out of its range). Decoding is NumPy's `cumsum` with `out=`: the
/// running sum is kept in the promotion of `astype` and `dtype` and each element cast to
/// `dtype` (so booleans accumulate with `or`, and mismatched types need not round-trip).
#[derive(Debug, Clone)]
pub struct Delta {
    dtype: NumType,
    astype: NumType,
    /// The type `cumsum` accumulates in.
    acc: NumType,
}

impl Delta {
    /// Reads `dtype` (required) and `astype` (default `dtype`).
    pub(crate) fn from_config(obj: &Map<String, Value>) -> Result<(Delta, ElemType)> {
        let cfg = Config::filter(obj, "delta");
        let dtype = num_dtype(&cfg, "dtype", None)?;
        let astype = num_dtype(&cfg, "astype", Some(dtype))?;
        let acc = promote(astype, dtype);
        Ok((Delta { dtype, astype, acc }, ElemType::Num(astype)))
    }
}

impl Delta {
    /// `dtype` and `astype` are the same integer type: the common case, done on raw bits.
    fn same_integers(&self) -> bool {
        self.dtype == self.astype && matches!(self.dtype.kind, Kind::Int | Kind::UInt)
    }
}

impl Filter for Delta {
    fn id(&self) -> &'static str {
        "delta"
    }

    fn config(&self) -> Value {
        json!({"id": "delta", "dtype": self.dtype.typestr(), "astype": self.astype.typestr()})
    }

    fn encode(&self, input: &[u8]) -> Result<Vec<u8>> {
        let n = count("delta", input, self.dtype, false)?;
        let (from, to) = (self.dtype, self.astype);
        if self.same_integers() {
            // What the general loop computes, on the raw bits.
            let mut out = alloc(input.len())?;
            let mut prev = 0u64;
            for (src, dst) in input
                .chunks_exact(from.size)
                .zip(out.chunks_exact_mut(to.size))
            {
                let cur = load(src, from.big);
                store(cur.wrapping_sub(prev), dst, to.big);
                prev = cur;
            }
            return Ok(out);
        }
        let mut out = alloc(n * to.size)?;
        // `enc[0] = arr[0]`, then `enc[1:] = np.diff(arr)` (one cast of n - 1 elements).
        let mut diffs = ArrayCast::new(from, to, n.saturating_sub(1));
        let mut prev: Option<Num> = None;
        for (src, dst) in input
            .chunks_exact(from.size)
            .zip(out.chunks_exact_mut(to.size))
        {
            let cur = from.read(src);
            match prev {
                None => {
                    let first = to.assign(cur, from).map_err(|m| {
                        Error::InvalidArgument(format!(
                            "delta filter: the first value cannot be stored as {}: {m}",
                            to.typestr()
                        ))
                    })?;
                    to.write(first, dst);
                }
                Some(p) => diffs.write(from.sub(cur, p), dst),
            }
            prev = Some(cur);
        }
        Ok(out)
    }

    fn decode(&self, input: &[u8], max_len: usize) -> Result<Vec<u8>> {
        let n = count("delta", input, self.astype, true)?;
        check_len("delta", n * self.dtype.size, max_len)?;
        let (from, to, acc_t) = (self.astype, self.dtype, self.acc);
        let mut out = alloc(n * to.size)?;
        if self.same_integers() {
            let mut acc = 0u64;
            for (src, dst) in input
                .chunks_exact(from.size)
                .zip(out.chunks_exact_mut(to.size))
            {
                acc = acc.wrapping_add(load(src, from.big));
                store(acc, dst, to.big);
            }
            return Ok(out);
        }
        let mut cast = ArrayCast::new(acc_t, to, n);
        let element_nan_first = acc_t.cumsum_prefers_element_nan(n);
        let mut acc: Option<Num> = None;
        for (src, dst) in input
            .chunks_exact(from.size)
            .zip(out.chunks_exact_mut(to.size))
        {
            let v = acc_t.convert(from.read(src), from);
            let sum = match acc {
                None => v,
                Some(a) => acc_t.cumsum_step(a, v, element_nan_first),
            };
            cast.write(sum, dst);
            acc = Some(sum);
        }
        Ok(out)
    }

    fn encoded_len(&self, decoded_len: usize) -> Option<usize> {
        converted_len(decoded_len, self.dtype, self.astype)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use crate::error::Error;
    use serde_json::json;

    #[test]
    fn config_defaults_astype_to_dtype() {
        let f = ok(json!({"id": "delta", "dtype": "<i4"}), "<i4");
        assert_eq!(
            f.config(),
            json!({"id": "delta", "dtype": "<i4", "astype": "<i4"})
        );
        let f = ok(
            json!({"id": "delta", "dtype": "i2", "astype": "<u1"}),
            "<i2",
        );
        assert_eq!(
            f.config(),
            json!({"id": "delta", "dtype": "<i2", "astype": "|u1"})
        );
        assert_eq!(
            output_type(
                json!({"id": "delta", "dtype": "<i4", "astype": ">i8"}),
                "<i4"
            ),
            ">i8"
        );
    }

    #[test]
    fn matches_numcodecs_fixtures() {
        // numcodecs.Delta(dtype='<i4', astype='<i2')
        //   .encode(np.array([100, 105, 95, 1000, -5, -70000], '<i4'))  (0.15.2 and 0.16.6)
        // The last difference (-69995) wraps in int16, so decoding does not give it back.
        let f = ok(
            json!({"id": "delta", "dtype": "<i4", "astype": "<i2"}),
            "<i4",
        );
        let input = i4(&[100, 105, 95, 1000, -5, -70000]);
        let (enc, dec) = round_trip(&*f, &input);
        assert_eq!(enc, unhex("64000500f6ff890313fc95ee"));
        assert_eq!(
            dec,
            unhex("64000000690000005f000000e8030000fbffffff90eeffff")
        );

        // Delta(dtype='>f8', astype='>f4').encode(np.array([1.5, nan, -0.25, inf, 3.0], '>f8'))
        // and its decode: NaN and infinities propagate.
        let f = ok(
            json!({"id": "delta", "dtype": ">f8", "astype": ">f4"}),
            ">f8",
        );
        let input: Vec<u8> = [1.5, f64::NAN, -0.25, f64::INFINITY, 3.0]
            .iter()
            .flat_map(|v: &f64| v.to_be_bytes())
            .collect();
        let (enc, dec) = round_trip(&*f, &input);
        assert_eq!(enc, unhex("3fc000007fc000007fc000007f800000ff800000"));
        assert_eq!(
            dec,
            unhex(
                "3ff80000000000007ff80000000000007ff80000000000007ff80000000000007ff8000000000000"
            )
        );

        // Delta(dtype='|u1').encode(np.array([5, 3, 250, 0], '|u1')): differences wrap.
        let f = ok(json!({"id": "delta", "dtype": "|u1"}), "|u1");
        let (enc, dec) = round_trip(&*f, &[5, 3, 250, 0]);
        assert_eq!(enc, unhex("05fef706"));
        assert_eq!(dec, [5, 3, 250, 0]);

        // Delta(dtype='<f2').decode(np.array([2048, 1, 1, 0.5], '<f2')): each float16 sum
        // rounds (2048 + 1 is a tie, kept at 2048).
        let f = ok(json!({"id": "delta", "dtype": "<f2"}), "<f2");
        assert_eq!(
            f.decode(&unhex("0068003c003c0038"), 8).unwrap(),
            unhex("0068006800680068")
        );

        // Delta(dtype='<c8').encode(np.array([1+2j, 3.5-1j, -2+0.25j], '<c8'))
        let f = ok(json!({"id": "delta", "dtype": "<c8"}), "<c8");
        let input = f4(&[1.0, 2.0, 3.5, -1.0, -2.0, 0.25]);
        let (enc, dec) = round_trip(&*f, &input);
        assert_eq!(
            enc,
            unhex("0000803f0000004000002040000040c00000b0c00000a03f")
        );
        assert_eq!(dec, input);
    }

    #[test]
    fn booleans_use_not_equal_and_decode_with_or() {
        // Delta(dtype='|b1').encode(np.array([True, False, False, True, True])) and its
        // decode, which NumPy's cumsum over booleans turns into a running "or".
        let f = ok(json!({"id": "delta", "dtype": "|b1"}), "|b1");
        let (enc, dec) = round_trip(&*f, &[1, 0, 0, 1, 1]);
        assert_eq!(enc, unhex("0101000100"));
        assert_eq!(dec, unhex("0101010101"));
    }

    #[test]
    fn first_value_must_fit_a_signed_astype() {
        let f = ok(
            json!({"id": "delta", "dtype": "<i4", "astype": "|i1"}),
            "<i4",
        );
        let err = f.encode(&i4(&[300, 301])).unwrap_err();
        assert!(
            matches!(err, Error::InvalidArgument(ref m) if m.contains("delta")),
            "{err}"
        );
        // Later differences wrap silently, and unsigned types wrap the first value too.
        assert_eq!(f.encode(&i4(&[1, 301])).unwrap(), [1, 44]);
        let f = ok(
            json!({"id": "delta", "dtype": "<i4", "astype": "|u1"}),
            "<i4",
        );
        assert_eq!(f.encode(&i4(&[300, 301])).unwrap(), [44, 1]);
    }

    #[test]
    fn checks_sizes() {
        let f = ok(
            json!({"id": "delta", "dtype": "|i1", "astype": "<i8"}),
            "|i1",
        );
        let enc = f.encode(&[1, 2, 3]).unwrap();
        assert_eq!(enc.len(), 24);
        assert_eq!(f.decode(&enc, 3).unwrap(), [1, 2, 3]);
        assert_corrupt(f.decode(&enc[..23], 3), "delta");
        let f = ok(
            json!({"id": "delta", "dtype": "<i8", "astype": "|i1"}),
            "<i8",
        );
        // Ten one-byte values decode to 80 bytes: refused for a 79-byte chunk.
        assert_corrupt(f.decode(&[0; 10], 79), "delta");
        assert!(matches!(f.encode(&[0; 7]), Err(Error::InvalidMetadata(_))));
        assert_eq!(f.encoded_len(7), None);
        assert_eq!(f.encode(&[]).unwrap(), Vec::<u8>::new());
    }

    #[test]
    fn rejects_bad_config() {
        assert_invalid(json!({"id": "delta"}), "<i4", "dtype");
        assert_invalid(json!({"id": "delta", "dtype": "<i3"}), "<i4", "dtype");
        assert_invalid(json!({"id": "delta", "dtype": 4}), "<i4", "dtype");
        assert_invalid(json!({"id": "delta", "dtype": "|O"}), "<i4", "dtype");
        assert_invalid(json!({"id": "delta", "dtype": "<U3"}), "<i4", "dtype");
        assert_invalid(
            json!({"id": "delta", "dtype": "<i4", "astype": "int"}),
            "<i4",
            "astype",
        );
    }
}
