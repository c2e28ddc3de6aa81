//! numcodecs `Quantize`: floats rounded to a power-of-two step fine enough for `digits`
//! decimal digits.

use super::numeric::{map_elements, ElemType, Kind, Num, NumType, PyScalar};
use super::{converted_len, count, num_dtype};
use crate::codec::config::Config;
use crate::codec::filter::{check_len, Filter};
use crate::error::{Error, Result};
use serde_json::{json, Map, Value};

/// `{"id": "quantize", "digits": 3, "dtype": "<f8", "astype": "<f8"}`.
///
/// `scale = 2**bits` with `bits = ceil(log2(10**-exp))`, `exp = floor/ceil(log10(10**-digits))`
/// computed in Python floats (the same libm calls), then `np.around(scale * arr) / scale`
/// in `dtype`'s precision, cast to `astype`. Decoding only casts back.
#[derive(Debug, Clone)]
pub struct Quantize {
    digits: Value,
    dtype: NumType,
    astype: NumType,
    /// The scale in `dtype`, or why Python cannot compute it.
    scale: std::result::Result<Num, String>,
}

impl Quantize {
    /// Reads `digits` (a number) and `dtype` (required) and `astype` (default `dtype`); both
    /// types must be floats.
    pub(crate) fn from_config(obj: &Map<String, Value>) -> Result<(Quantize, ElemType)> {
        let cfg = Config::filter(obj, "quantize");
        let digits = cfg.required("digits")?;
        let d = PyScalar::from_json(digits).ok_or_else(|| cfg.invalid("digits", "a number"))?;
        let dtype = num_dtype(&cfg, "dtype", None)?;
        let astype = num_dtype(&cfg, "astype", Some(dtype))?;
        for (key, t) in [("dtype", dtype), ("astype", astype)] {
            if t.kind != Kind::Float {
                return Err(cfg.invalid(key, "a floating point type"));
            }
        }
        let arith = dtype.to_native();
        let scale = scale_for(d).map(|s| {
            arith
                .weak(PyScalar::Float(s))
                .expect("float types take any number")
        });
        let filter = Quantize {
            digits: digits.clone(),
            dtype,
            astype,
            scale,
        };
        Ok((filter, ElemType::Num(astype)))
    }
}

/// Python's `x ** y` for floats: OverflowError when a finite power overflows.
fn py_pow(x: f64, y: f64) -> std::result::Result<f64, String> {
    let r = x.powf(y);
    if r.is_infinite() {
        Err(format!("{x} ** {y}: numerical result out of range"))
    } else {
        Ok(r)
    }
}

/// numcodecs' scale for `digits`, step by step as its Python code computes it.
fn scale_for(digits: PyScalar) -> std::result::Result<f64, String> {
    let d = match digits {
        PyScalar::Int(i) => i as f64,
        PyScalar::Float(x) => x,
    };
    let precision = py_pow(10.0, -d)?;
    if precision <= 0.0 {
        return Err(format!("log10({precision}): math domain error"));
    }
    let exp = precision.log10();
    let exp = if exp < 0.0 { exp.floor() } else { exp.ceil() };
    let p = py_pow(10.0, -exp)?;
    if p <= 0.0 {
        return Err(format!("log2({p}): math domain error"));
    }
    py_pow(2.0, p.log2().ceil())
}

impl Filter for Quantize {
    fn id(&self) -> &'static str {
        "quantize"
    }

    fn config(&self) -> Value {
        json!({
            "id": "quantize",
            "digits": self.digits,
            "dtype": self.dtype.typestr(),
            "astype": self.astype.typestr(),
        })
    }

    fn encode(&self, input: &[u8]) -> Result<Vec<u8>> {
        let scale = *self.scale.as_ref().map_err(|m| {
            Error::InvalidMetadata(format!("quantize filter: cannot compute the scale: {m}"))
        })?;
        count("quantize", input, self.dtype, false)?;
        let t = self.dtype.to_native();
        map_elements(input, self.dtype, t, self.astype, |x| {
            t.div(t.rint(t.mul(scale, x)), scale)
        })
    }

    fn decode(&self, input: &[u8], max_len: usize) -> Result<Vec<u8>> {
        let n = count("quantize", input, self.astype, true)?;
        check_len("quantize", n * self.dtype.size, max_len)?;
        map_elements(input, self.astype, self.astype, self.dtype, |v| v)
    }

    fn encoded_len(&self, decoded_len: usize) -> Option<usize> {
        converted_len(decoded_len, self.dtype, self.astype)
    }
}

#[cfg(test)]
#[allow(clippy::approx_constant)]
mod tests {
    use super::super::testutil::*;
    use crate::error::Error;
    use serde_json::json;

    #[test]
    fn matches_numcodecs_fixtures() {
        let linspace = f8(&(0..10).map(|i| f64::from(i) / 9.0).collect::<Vec<_>>());
        // numcodecs.Quantize(digits=d, dtype='<f8').encode(np.linspace(0, 1, 10)), d = 1, 2, 3
        // (0.15.2 and 0.16.6; the values of numcodecs' docstring).
        for (digits, hex) in [
            (
                1,
                "0000000000000000000000000000c03f000000000000d03f000000000000d43f000000000000dc3f\
                 000000000000e23f000000000000e63f000000000000e83f000000000000ec3f000000000000f03f",
            ),
            (
                2,
                "0000000000000000000000000000bc3f000000000000cc3f000000000080d53f000000000080dc3f\
                 0000000000c0e13f000000000040e53f000000000000e93f000000000080ec3f000000000000f03f",
            ),
            (
                3,
                "0000000000000000000000000080bc3f000000000080cc3f000000000050d53f000000000070dc3f\
                 0000000000c8e13f000000000058e53f0000000000e0e83f000000000070ec3f000000000000f03f",
            ),
        ] {
            let f = ok(
                json!({"id": "quantize", "digits": digits, "dtype": "<f8"}),
                "<f8",
            );
            let hex: String = hex.split_whitespace().collect();
            let (enc, dec) = round_trip(&*f, &linspace);
            assert_eq!(enc, unhex(&hex), "digits {digits}");
            assert_eq!(dec, enc);
        }
        // Quantize(digits=2, dtype='<f4', astype='<f2')
        //   .encode(np.array([3.14159, -2.71828, 1e-3, 12345.678], '<f4')) and its decode.
        let f = ok(
            json!({"id": "quantize", "digits": 2, "dtype": "<f4", "astype": "<f2"}),
            "<f4",
        );
        let (enc, dec) = round_trip(&*f, &f4(&[3.14159, -2.71828, 1e-3, 12345.678]));
        assert_eq!(enc, unhex("484270c100000772"));
        assert_eq!(dec, unhex("0000494000002ec00000000000e04046"));
        // Quantize(digits=2.5, dtype='<f8').encode(np.array([3.14159, -2.71828]))
        let f = ok(
            json!({"id": "quantize", "digits": 2.5, "dtype": "<f8"}),
            "<f8",
        );
        assert_eq!(
            f.encode(&f8(&[3.14159, -2.71828])).unwrap(),
            unhex("00000000002209400000000000c005c0")
        );
        assert_eq!(
            f.config(),
            json!({"id": "quantize", "digits": 2.5, "dtype": "<f8", "astype": "<f8"})
        );
    }

    #[test]
    fn digits_python_cannot_handle_fail_to_encode_only() {
        // numcodecs: digits=400 -> ValueError (log10 of 0.0); 320 and -400 -> OverflowError.
        for digits in [400, 320, -400] {
            let f = ok(
                json!({"id": "quantize", "digits": digits, "dtype": "<f8"}),
                "<f8",
            );
            let err = f.encode(&f8(&[1.0])).unwrap_err();
            assert!(
                matches!(err, Error::InvalidMetadata(ref m) if m.contains("quantize")),
                "{err}"
            );
            assert_eq!(f.decode(&f8(&[1.0]), 8).unwrap(), f8(&[1.0]));
        }
    }

    #[test]
    fn rejects_bad_config() {
        assert_invalid(
            json!({"id": "quantize", "digits": 2, "dtype": "<i4"}),
            "<i4",
            "dtype",
        );
        assert_invalid(
            json!({"id": "quantize", "digits": 2, "dtype": "<f4", "astype": "<c8"}),
            "<f4",
            "astype",
        );
        assert_invalid(
            json!({"id": "quantize", "digits": "2", "dtype": "<f4"}),
            "<f4",
            "digits",
        );
        assert_invalid(json!({"id": "quantize", "dtype": "<f4"}), "<f4", "digits");
    }
}
