//! numcodecs `FixedScaleOffset`: `round((x - offset) * scale)` stored as `astype`.

use super::numeric::{
    map_elements, true_divide_type, weak_result, ElemType, Num, NumType, PyScalar,
};
use super::{converted_len, count, num_dtype};
use crate::codec::config::Config;
use crate::codec::filter::{check_len, Filter};
use crate::error::{Error, Result};
use serde_json::{json, Map, Value};

/// `{"id": "fixedscaleoffset", "offset": 1000, "scale": 10, "dtype": "<f8", "astype": "|u1"}`.
///
/// Computed as NumPy 2 computes `np.around((arr - offset) * scale).astype(astype)` and
/// `((enc / scale) + offset).astype(dtype)`: `offset` and `scale` are Python numbers, so
/// their JSON form matters. An integer keeps integer arrays in integer arithmetic (which
/// wraps, and must fit the type: NumPy raises OverflowError otherwise); a float makes them
/// float64. Float arrays compute in their own precision (float16 too). Rounding is half to
/// even.
#[derive(Debug, Clone)]
pub struct FixedScaleOffset {
    /// `offset` and `scale` as written, for the configuration.
    offset_json: Value,
    scale_json: Value,
    dtype: NumType,
    astype: NumType,
    /// How to encode, or why NumPy cannot.
    encoder: std::result::Result<Steps, String>,
    decoder: Steps,
}

/// Two arithmetic steps: `first_op(cast(x, t1), a)` then `second_op(cast(.., t2), b)`.
#[derive(Debug, Clone, Copy)]
struct Steps {
    t1: NumType,
    a: Num,
    t2: NumType,
    b: Num,
}

impl FixedScaleOffset {
    /// Reads `offset`, `scale` and `dtype` (required) and `astype` (default `dtype`).
    pub(crate) fn from_config(obj: &Map<String, Value>) -> Result<(FixedScaleOffset, ElemType)> {
        let cfg = Config::filter(obj, "fixedscaleoffset");
        let number = |key: &str| -> Result<(Value, PyScalar)> {
            let v = cfg.required(key)?;
            let s = PyScalar::from_json(v).ok_or_else(|| cfg.invalid(key, "a number"))?;
            Ok((v.clone(), s))
        };
        let (offset_json, offset) = number("offset")?;
        let (scale_json, scale) = number("scale")?;
        let dtype = num_dtype(&cfg, "dtype", None)?;
        let astype = num_dtype(&cfg, "astype", Some(dtype))?;
        let encoder = (|| -> std::result::Result<Steps, String> {
            let t1 = weak_result(dtype, offset);
            let t2 = weak_result(t1, scale);
            Ok(Steps {
                t1,
                a: t1.weak(offset)?,
                t2,
                b: t2.weak(scale)?,
            })
        })();
        let d1 = true_divide_type(astype);
        let d2 = weak_result(d1, offset);
        let float = |t: NumType, s| t.weak(s).expect("float types take any number");
        let decoder = Steps {
            t1: d1,
            a: float(d1, scale),
            t2: d2,
            b: float(d2, offset),
        };
        let filter = FixedScaleOffset {
            offset_json,
            scale_json,
            dtype,
            astype,
            encoder,
            decoder,
        };
        Ok((filter, ElemType::Num(astype)))
    }
}

impl Filter for FixedScaleOffset {
    fn id(&self) -> &'static str {
        "fixedscaleoffset"
    }

    fn config(&self) -> Value {
        json!({
            "id": "fixedscaleoffset",
            "scale": self.scale_json,
            "offset": self.offset_json,
            "dtype": self.dtype.typestr(),
            "astype": self.astype.typestr(),
        })
    }

    fn encode(&self, input: &[u8]) -> Result<Vec<u8>> {
        let s = self.encoder.as_ref().map_err(|m| {
            Error::InvalidMetadata(format!("fixedscaleoffset filter: cannot encode: {m}"))
        })?;
        count("fixedscaleoffset", input, self.dtype, false)?;
        let dtype = self.dtype;
        map_elements(input, dtype, s.t2, self.astype, |x| {
            let y = s.t1.sub(s.t1.convert(x, dtype), s.a);
            s.t2.rint(s.t2.mul(s.t2.convert(y, s.t1), s.b))
        })
    }

    fn decode(&self, input: &[u8], max_len: usize) -> Result<Vec<u8>> {
        let n = count("fixedscaleoffset", input, self.astype, true)?;
        check_len("fixedscaleoffset", n * self.dtype.size, max_len)?;
        let s = self.decoder;
        let astype = self.astype;
        map_elements(input, astype, s.t2, self.dtype, |e| {
            let y = s.t1.div(s.t1.convert(e, astype), s.a);
            s.t2.add(s.t2.convert(y, s.t1), s.b)
        })
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

    fn fso(
        offset: serde_json::Value,
        scale: serde_json::Value,
        dtype: &str,
        astype: &str,
    ) -> Box<dyn Filter> {
        let config = json!({"id": "fixedscaleoffset", "offset": offset, "scale": scale,
            "dtype": dtype, "astype": astype});
        ok(config, dtype)
    }
    use crate::codec::filter::Filter;

    #[test]
    fn config_keeps_numbers_as_written() {
        let f = ok(
            json!({"id": "fixedscaleoffset", "offset": 2, "scale": 1e-5, "dtype": "<f4"}),
            "<f4",
        );
        assert_eq!(
            f.config(),
            json!({"id": "fixedscaleoffset", "scale": 1e-5, "offset": 2, "dtype": "<f4", "astype": "<f4"})
        );
        let f = fso(json!(10.0), json!(2), "<i4", "<i2");
        assert_eq!(f.config()["offset"].to_string(), "10.0");
        assert_eq!(f.config()["scale"].to_string(), "2");
    }

    #[test]
    fn matches_numcodecs_fixtures() {
        // numcodecs.FixedScaleOffset(offset=1000, scale=10, dtype='<f8', astype='|u1')
        //   .encode(np.linspace(1000, 1001, 10)) and its decode (0.15.2 and 0.16.6).
        let f = fso(json!(1000), json!(10), "<f8", "|u1");
        let input = f8(&(0..10)
            .map(|i| 1000.0 + f64::from(i) / 9.0)
            .collect::<Vec<_>>());
        let (enc, dec) = round_trip(&*f, &input);
        assert_eq!(enc, unhex("0001020304060708090a"));
        assert_eq!(
            dec,
            unhex(
                "0000000000408f40cdcccccccc408f409a99999999418f406666666666428f403333333333438f40\
                 cdcccccccc448f409a99999999458f406666666666468f403333333333478f400000000000488f40"
            )
        );

        // FixedScaleOffset(offset=5, scale=10, dtype='<i2').encode(np.array([1000, -3000, 7], '<i2')):
        // integer offset and scale keep int16 arithmetic, which wraps.
        let f = fso(json!(5), json!(10), "<i2", "<i2");
        assert_eq!(
            f.encode(&unhex("e80348f40700")).unwrap(),
            unhex("de269e8a1400")
        );

        // FixedScaleOffset(offset=0.5, scale=2, dtype='<i4', astype='|i1')
        //   .encode(np.array([0, 1, 2, 3, -1, 100], '<i4')): float64 arithmetic, rounding half
        // to even, and a cast that wraps (199 -> -57).
        let f = fso(json!(0.5), json!(2), "<i4", "|i1");
        assert_eq!(
            f.encode(&i4(&[0, 1, 2, 3, -1, 100])).unwrap(),
            unhex("ff010305fdc7")
        );

        // FixedScaleOffset(offset=1000.5, scale=3.3, dtype='<f2', astype='<i2')
        //   .encode(np.array([1000, 1001, 1002.5, 999, 1004], '<f2')) and its decode: the
        // arithmetic is done in float16.
        let f = fso(json!(1000.5), json!(3.3), "<f2", "<i2");
        let (enc, dec) = round_trip(&*f, &unhex("d063d263d563ce63d863"));
        assert_eq!(enc, unhex("feff02000700fbff0c00"));
        assert_eq!(dec, unhex("d063d263d563ce63d863"));

        // FixedScaleOffset(offset=1.5, scale=3.1, dtype='<c8').encode / .decode of
        // np.array([1+2j, 2.25-1j], '<c8').
        let f = fso(json!(1.5), json!(3.1), "<c8", "<c8");
        let input = f4(&[1.0, 2.0, 2.25, -1.0]);
        assert_eq!(
            f.encode(&input).unwrap(),
            unhex("000000c00000c04000000040000040c0")
        );
        assert_eq!(
            f.decode(&input, 16).unwrap(),
            unhex("534ae93f4b29253f9d730e404b29a5be")
        );
    }

    #[test]
    fn integer_offset_must_fit_integer_dtype_to_encode() {
        // numcodecs raises OverflowError encoding, but decodes:
        // FixedScaleOffset(offset=40000, scale=10, dtype='<i2').decode(np.array([1000, -7], '<i2'))
        let f = fso(json!(40000), json!(10), "<i2", "<i2");
        let err = f.encode(&[0, 0]).unwrap_err();
        assert!(
            matches!(err, Error::InvalidMetadata(ref m) if m.contains("40000")),
            "{err}"
        );
        assert_eq!(f.decode(&unhex("e803f9ff"), 4).unwrap(), unhex("a49c3f9c"));
    }

    #[test]
    fn checks_sizes() {
        let f = fso(json!(0), json!(1), "<f8", "|u1");
        assert_corrupt(f.decode(&[1, 2, 3], 23), "fixedscaleoffset");
        assert_eq!(f.decode(&[1, 2, 3], 24).unwrap().len(), 24);
        assert!(matches!(f.encode(&[0; 9]), Err(Error::InvalidMetadata(_))));
    }

    #[test]
    fn rejects_bad_config() {
        let base = json!({"id": "fixedscaleoffset", "offset": 0, "scale": 1, "dtype": "<f8"});
        for (key, bad) in [
            ("offset", json!("1")),
            ("scale", json!(null)),
            ("dtype", json!("<f3")),
            ("astype", json!([])),
        ] {
            let mut c = base.clone();
            c[key] = bad;
            assert_invalid(c, "<f8", key);
        }
        let mut c = base.clone();
        c.as_object_mut().unwrap().remove("scale");
        assert_invalid(c, "<f8", "scale");
    }
}
