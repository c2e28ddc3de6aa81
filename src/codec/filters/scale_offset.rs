//! The registered Zarr v3 `scale_offset` codec (zarr-extensions `codecs/scale_offset`):
//! `(x - offset) * scale` on encode, `x / scale + offset` on decode, in the input type.

use super::numeric::{ElemType, Kind, Num, NumType};
use super::{check_keys, count, real_type, v3_name, v3_scalar};
use crate::codec::filter::{check_len, Filter};
use crate::error::{Error, Result};
use serde_json::{json, Map, Value};

/// `{"name": "scale_offset", "configuration": {"offset": 5, "scale": 0.1}}`.
///
/// `offset` (default 0) and `scale` (default 1) are written with the v3 fill-value encoding
/// of the input type and computed in that type, as the spec requires:
///
/// * floats: IEEE arithmetic in the type, as NumPy does it (float16 through float32 and
///   rounded back); overflow to infinity and NaN are values like any other, as in
///   zarr-python's `ScaleOffset`;
/// * integers: exact arithmetic where every intermediate and final value must fit the type
///   (the spec: "If any intermediate or final value ... is not representable in that data
///   type, implementations MUST treat this as an error"), and decoding divides exactly: a
///   stored value that is not a multiple of `scale` is an error, as in zarr-python's
///   `ScaleOffset` (which refuses a non-zero remainder rather than truncating).
///
/// A zero `scale` is refused (zarr-python's `validate` does too).
#[derive(Debug, Clone)]
pub struct ScaleOffset {
    /// The input (and output) type.
    ty: NumType,
    offset: Num,
    scale: Num,
    /// The codec's JSON as written back.
    canonical: Value,
}

impl ScaleOffset {
    /// Reads `offset` and `scale` (both optional) for input elements of type `input`;
    /// refuses other keys, values that are not valid for the type, and a zero `scale`.
    pub(crate) fn from_v3(
        config: &Map<String, Value>,
        input: &ElemType,
    ) -> Result<(ScaleOffset, ElemType)> {
        check_keys("scale_offset", config, &["offset", "scale"])?;
        let ty = real_type("scale_offset", input)?;
        let value = |key: &str, default: Num| -> Result<Num> {
            let Some(v) = config.get(key) else {
                return Ok(default);
            };
            v3_scalar(v, ty).ok_or_else(|| {
                Error::InvalidMetadata(format!(
                    "scale_offset codec: \"{key}\" must be a {} scalar in the v3 fill-value encoding, got {v}",
                    v3_name(ty)
                ))
            })
        };
        let (zero, one) = match ty.kind {
            Kind::Int => (Num::I(0), Num::I(1)),
            Kind::UInt => (Num::U(0), Num::U(1)),
            _ => (Num::F(0.0), Num::F(1.0)),
        };
        let offset = value("offset", zero)?;
        let scale = value("scale", one)?;
        if scale == zero || scale == Num::F(-0.0) {
            return Err(Error::InvalidMetadata(
                "scale_offset codec: \"scale\" must not be zero".into(),
            ));
        }
        // As zarr-python's `to_dict`: keys holding the identity are left out (a float -0.0
        // offset is kept: subtracting it turns -0.0 into +0.0).
        let mut cfg = Map::new();
        for (key, identity) in [("offset", 0.0), ("scale", 1.0)] {
            if let Some(v) = config.get(key) {
                let is_identity = v.as_f64() == Some(identity)
                    && !(identity == 0.0 && v.as_f64().is_some_and(f64::is_sign_negative));
                if !is_identity {
                    cfg.insert(key.into(), v.clone());
                }
            }
        }
        let canonical = if cfg.is_empty() {
            json!({"name": "scale_offset"})
        } else {
            json!({"name": "scale_offset", "configuration": cfg})
        };
        let filter = ScaleOffset {
            ty,
            offset,
            scale,
            canonical,
        };
        Ok((filter, ElemType::Num(ty)))
    }

    /// `v` as an exact integer (`ty` is an integer type).
    fn int(v: Num) -> i128 {
        match v {
            Num::I(i) => i.into(),
            Num::U(u) => u.into(),
            _ => unreachable!("scale_offset: an integer type holds integers"),
        }
    }

    /// `v` as a value of `ty` when it fits.
    fn fit(&self, v: Option<i128>) -> Option<Num> {
        let (lo, hi) = self.ty.int_range();
        let v = v.filter(|v| (lo..=hi).contains(v))?;
        Some(match self.ty.kind {
            Kind::Int => Num::I(v as i64),
            _ => Num::U(v as u64),
        })
    }

    /// Applies `f` to every element of `input`, writing the results in the same type.
    fn map(&self, input: &[u8], mut f: impl FnMut(Num) -> Result<Num>) -> Result<Vec<u8>> {
        let size = self.ty.size;
        let mut out = super::alloc(input.len())?;
        for (src, dst) in input.chunks_exact(size).zip(out.chunks_exact_mut(size)) {
            self.ty.write(f(self.ty.read(src))?, dst);
        }
        Ok(out)
    }

    /// Formats a value of `ty` for messages.
    fn show(v: Num) -> String {
        match v {
            Num::I(i) => i.to_string(),
            Num::U(u) => u.to_string(),
            Num::F(x) => format!("{x:?}"),
            other => format!("{other:?}"),
        }
    }
}

impl Filter for ScaleOffset {
    fn id(&self) -> &'static str {
        "scale_offset"
    }

    fn config(&self) -> Value {
        self.canonical.clone()
    }

    fn encode(&self, input: &[u8]) -> Result<Vec<u8>> {
        count("scale_offset", input, self.ty, false)?;
        let (ty, offset, scale) = (self.ty, self.offset, self.scale);
        if ty.kind == Kind::Float {
            return self.map(input, |x| Ok(ty.mul(ty.sub(x, offset), scale)));
        }
        let (o, s) = (Self::int(offset), Self::int(scale));
        self.map(input, |x| {
            let xi = Self::int(x);
            let refuse = |what: String| {
                Error::InvalidArgument(format!(
                    "scale_offset codec: cannot encode {xi} (offset {o}, scale {s}): {what} is out of range for {}",
                    v3_name(ty)
                ))
            };
            let d = self
                .fit(xi.checked_sub(o))
                .ok_or_else(|| refuse(format!("{xi} - {o}")))?;
            self.fit(Self::int(d).checked_mul(s))
                .ok_or_else(|| refuse(format!("({xi} - {o}) * {s}")))
        })
    }

    fn decode(&self, input: &[u8], max_len: usize) -> Result<Vec<u8>> {
        let n = count("scale_offset", input, self.ty, true)?;
        check_len("scale_offset", n * self.ty.size, max_len)?;
        let (ty, offset, scale) = (self.ty, self.offset, self.scale);
        if ty.kind == Kind::Float {
            return self.map(input, |x| Ok(ty.add(ty.div(x, scale), offset)));
        }
        let (o, s) = (Self::int(offset), Self::int(scale));
        self.map(input, |x| {
            let xi = Self::int(x);
            let corrupt = |what: String| {
                Error::CorruptChunk(format!(
                    "scale_offset codec: cannot decode the stored {} value {} (offset {o}, scale {s}): {what}",
                    v3_name(ty),
                    Self::show(x)
                ))
            };
            if xi % s != 0 {
                return Err(corrupt(format!(
                    "it is not a multiple of {s}, so {xi} / {s} is not an integer"
                )));
            }
            let q = self
                .fit(Some(xi / s))
                .ok_or_else(|| corrupt(format!("{xi} / {s} is out of range")))?;
            self.fit(Self::int(q).checked_add(o)).ok_or_else(|| {
                corrupt(format!(
                    "{xi} / {s} + {o} is out of range for {}",
                    v3_name(ty)
                ))
            })
        })
    }

    fn encoded_len(&self, decoded_len: usize) -> Option<usize> {
        decoded_len
            .is_multiple_of(self.ty.size)
            .then_some(decoded_len)
    }
}

#[cfg(test)]
mod tests {
    use super::super::numeric::ElemType;
    use super::super::testutil::*;
    use crate::codec::filter::Filter;
    use crate::error::{Error, Result};
    use serde_json::{json, Value};

    /// Builds the codec for input of the NumPy type `input`.
    fn build(config: Value, input: &str) -> Result<Box<dyn Filter>> {
        let t = ElemType::parse(input).expect("a type string");
        let cfg = config.as_object().expect("an object").clone();
        super::super::build_v3("scale_offset", &cfg, &t).map(|(f, out, _)| {
            assert_eq!(out, t, "scale_offset keeps the type");
            f
        })
    }

    fn so(config: Value, input: &str) -> Box<dyn Filter> {
        build(config.clone(), input).unwrap_or_else(|e| panic!("{config}: {e}"))
    }

    fn i1(v: &[i8]) -> Vec<u8> {
        v.iter().map(|&x| x as u8).collect()
    }

    fn u8s(v: &[u64]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn f2(v: &[f32]) -> Vec<u8> {
        v.iter()
            .flat_map(|&x| half::f16::from_f32(x).to_le_bytes())
            .collect()
    }

    #[test]
    fn float_arithmetic_in_the_input_type() {
        // float32: (x - 5) * 0.1 with 0.1 rounded to float32 and every step in float32.
        let f = so(json!({"offset": 5, "scale": 0.1}), "<f4");
        let x = [5.0f32, 6.0, 15.0, -1.0, f32::NAN, f32::INFINITY];
        let expected: Vec<f32> = x.iter().map(|v| (v - 5.0) * 0.1f32).collect();
        let enc = f.encode(&f4(&x)).unwrap();
        assert_eq!(enc, f4(&expected));
        assert_eq!(expected[1], 0.1f32);
        let dec = f.decode(&enc, enc.len()).unwrap();
        let back: Vec<f32> = expected.iter().map(|v| v / 0.1f32 + 5.0).collect();
        assert_eq!(dec, f4(&back));
        // float64 with a NaN offset, a hex scale: every value becomes NaN.
        let f = so(
            json!({"offset": "NaN", "scale": "0x4000000000000000"}),
            "<f8",
        );
        let enc = f.encode(&f8(&[1.0, -2.0])).unwrap();
        assert!(enc
            .chunks(8)
            .all(|c| f64::from_le_bytes(c.try_into().unwrap()).is_nan()));
        // Overflow to infinity is a value, not an error.
        let f = so(json!({"scale": 1e300}), "<f8");
        assert_eq!(
            f.encode(&f8(&[1e10, -1e10])).unwrap(),
            f8(&[f64::INFINITY, f64::NEG_INFINITY])
        );
        // float16 as NumPy computes it: the offset 2048.5 is read as the float16 2048, and
        // (1000 - 1000.5) * 2 is exact.
        let f = so(json!({"offset": 2048.5, "scale": 2}), "<f2");
        assert_eq!(f.encode(&f2(&[2048.0, 2050.0])).unwrap(), f2(&[0.0, 4.0]));
        let f = so(json!({"offset": 1000.5, "scale": 2}), "<f2");
        assert_eq!(f.encode(&f2(&[1000.0, 1002.0])).unwrap(), f2(&[-1.0, 3.0]));
    }

    #[test]
    fn integer_arithmetic_is_exact_and_checked() {
        // int8: (x - (-10)) * 2, and back.
        let f = so(json!({"offset": -10, "scale": 2}), "|i1");
        let (enc, dec) = round_trip(&*f, &i1(&[-10, 0, 53, -74]));
        assert_eq!(enc, i1(&[0, 20, 126, -128]));
        assert_eq!(dec, i1(&[-10, 0, 53, -74]));
        // (54 + 10) * 2 = 128 does not fit int8: an error naming the codec and the value.
        match f.encode(&i1(&[1, 54])) {
            Err(Error::InvalidArgument(m)) => {
                assert!(
                    m.contains("scale_offset") && m.contains("54") && m.contains("int8"),
                    "{m}"
                )
            }
            other => panic!("{other:?}"),
        }
        // The intermediate x - offset must fit too: 28 - (-100) = 128 overflows int8, although
        // the final 128 * -1 = -128 would fit (zarr-python checks only the final value).
        let f = so(json!({"offset": -100, "scale": -1}), "|i1");
        assert!(
            matches!(f.encode(&i1(&[28])), Err(Error::InvalidArgument(m)) if m.contains("28 - -100")),
        );
        assert_eq!(f.encode(&i1(&[27, -100])).unwrap(), i1(&[-127, 0]));
        // Unsigned: below zero is out of range.
        let f = so(json!({"offset": 1000}), "<u2");
        assert_eq!(
            f.encode(&1000u16.to_le_bytes()).unwrap(),
            0u16.to_le_bytes()
        );
        assert!(matches!(
            f.encode(&999u16.to_le_bytes()),
            Err(Error::InvalidArgument(_))
        ));
        // uint64 beyond int64, without overflow in the computation.
        let f = so(json!({"offset": 1, "scale": 2}), "<u8");
        assert_eq!(f.encode(&u8s(&[(1 << 62) + 1])).unwrap(), u8s(&[1 << 63]));
        assert!(matches!(
            f.encode(&u8s(&[(1 << 63) + 1])),
            Err(Error::InvalidArgument(_))
        ));
        let f = so(json!({"offset": 18446744073709551615u64}), "<u8");
        assert_eq!(f.encode(&u8s(&[u64::MAX])).unwrap(), u8s(&[0]));
        assert_eq!(f.decode(&u8s(&[0]), 8).unwrap(), u8s(&[u64::MAX]));
        assert_corrupt(f.decode(&u8s(&[1]), 8), "scale_offset");
    }

    #[test]
    fn integer_decode_divides_exactly() {
        let f = so(json!({"offset": 3, "scale": 4}), "<i4");
        assert_eq!(f.decode(&i4(&[8, -8, 0]), 12).unwrap(), i4(&[5, 1, 3]));
        // 7 / 4 is not an integer: the stored value is corrupt.
        assert_corrupt(f.decode(&i4(&[8, 7]), 8), "scale_offset");
        // A negative scale: -128 / -1 = 128 does not fit int8.
        let f = so(json!({"offset": -1, "scale": -1}), "|i1");
        assert_corrupt(f.decode(&i1(&[-128]), 1), "scale_offset");
        assert_eq!(f.decode(&i1(&[5]), 1).unwrap(), i1(&[-6]));
    }

    #[test]
    fn defaults_and_canonical_form() {
        let f = so(json!({}), "<i4");
        assert_eq!(f.config(), json!({"name": "scale_offset"}));
        let (enc, _) = round_trip(&*f, &i4(&[1, -2]));
        assert_eq!(enc, i4(&[1, -2]));
        let f = so(json!({"offset": 0, "scale": 1.0}), "<f8");
        assert_eq!(f.config(), json!({"name": "scale_offset"}));
        let f = so(json!({"offset": 2, "scale": 1}), "<f8");
        assert_eq!(
            f.config(),
            json!({"name": "scale_offset", "configuration": {"offset": 2}})
        );
        let f = so(json!({"offset": -0.0, "scale": "NaN"}), "<f8");
        assert_eq!(
            f.config(),
            json!({"name": "scale_offset", "configuration": {"offset": -0.0, "scale": "NaN"}})
        );
        assert_eq!(f.encoded_len(16), Some(16));
        assert_eq!(f.encoded_len(15), None);
    }

    #[test]
    fn refuses_bad_configurations_naming_the_key() {
        for (config, input, key) in [
            (json!({"offset": 1, "factor": 2}), "<f8", "factor"),
            (json!({"offset": 1.5}), "<i4", "offset"),
            (json!({"offset": 300}), "|u1", "offset"),
            (json!({"offset": -1}), "|u1", "offset"),
            (json!({"scale": "1"}), "<f8", "scale"),
            (json!({"scale": "0x3f80"}), "<f4", "scale"),
            (json!({"scale": null}), "<f8", "scale"),
            (json!({"scale": 0}), "<i4", "scale"),
            (json!({"scale": -0.0}), "<f4", "scale"),
        ] {
            match build(config.clone(), input) {
                Err(Error::InvalidMetadata(m)) => {
                    assert!(
                        m.contains("scale_offset") && m.contains(key),
                        "{config}: {m}"
                    )
                }
                other => panic!("{config}: expected InvalidMetadata, got {other:?}"),
            }
        }
        for input in ["|b1", "<c8", "<U3"] {
            assert!(
                matches!(build(json!({}), input), Err(Error::InvalidMetadata(_))),
                "{input}"
            );
        }
    }
}
