//! numcodecs `AsType`: a cast between two numeric types.

use super::numeric::{cast_directly, map_elements, ElemType, NumType};
use super::{converted_len, count, num_dtype};
use crate::codec::config::Config;
use crate::codec::filter::{check_len, Filter};
use crate::error::Result;
use serde_json::{json, Map, Value};

/// `{"id": "astype", "encode_dtype": "<f4", "decode_dtype": "<f8"}`: NumPy's `astype` each
/// way (lossy when `encode_dtype` is narrower).
#[derive(Debug, Clone)]
pub struct AsType {
    encode_dtype: NumType,
    decode_dtype: NumType,
}

impl AsType {
    /// Reads `encode_dtype` and `decode_dtype` (both required).
    pub(crate) fn from_config(obj: &Map<String, Value>) -> Result<(AsType, ElemType)> {
        let cfg = Config::filter(obj, "astype");
        let encode_dtype = num_dtype(&cfg, "encode_dtype", None)?;
        let decode_dtype = num_dtype(&cfg, "decode_dtype", None)?;
        let filter = AsType {
            encode_dtype,
            decode_dtype,
        };
        Ok((filter, ElemType::Num(encode_dtype)))
    }
}

impl Filter for AsType {
    fn id(&self) -> &'static str {
        "astype"
    }

    fn config(&self) -> Value {
        json!({
            "id": "astype",
            "encode_dtype": self.encode_dtype.typestr(),
            "decode_dtype": self.decode_dtype.typestr(),
        })
    }

    fn encode(&self, input: &[u8]) -> Result<Vec<u8>> {
        count("astype", input, self.decode_dtype, false)?;
        let (from, to) = (self.decode_dtype, self.encode_dtype);
        cast_directly(input, from, to).unwrap_or_else(|| map_elements(input, from, from, to, |v| v))
    }

    fn decode(&self, input: &[u8], max_len: usize) -> Result<Vec<u8>> {
        let n = count("astype", input, self.encode_dtype, true)?;
        check_len("astype", n * self.decode_dtype.size, max_len)?;
        let (from, to) = (self.encode_dtype, self.decode_dtype);
        cast_directly(input, from, to).unwrap_or_else(|| map_elements(input, from, from, to, |v| v))
    }

    fn encoded_len(&self, decoded_len: usize) -> Option<usize> {
        converted_len(decoded_len, self.decode_dtype, self.encode_dtype)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use serde_json::json;

    #[test]
    fn matches_numcodecs_fixtures() {
        // numcodecs.AsType(encode_dtype='<f2', decode_dtype='<f8')
        //   .encode(np.array([1.0, 0.1, 65519.0, 65520.0, 1e-8, -2049.0]))  (0.15.2 and 0.16.6):
        // round half to even, overflow to infinity, underflow to zero.
        let f = ok(
            json!({"id": "astype", "encode_dtype": "<f2", "decode_dtype": "<f8"}),
            "<f8",
        );
        let input = f8(&[1.0, 0.1, 65519.0, 65520.0, 1e-8, -2049.0]);
        let (enc, dec) = round_trip(&*f, &input);
        assert_eq!(enc, unhex("003c662eff7b007c000000e8"));
        assert_eq!(
            dec,
            f8(&[1.0, 0.0999755859375, 65504.0, f64::INFINITY, 0.0, -2048.0])
        );
        assert_eq!(
            f.config(),
            json!({"id": "astype", "encode_dtype": "<f2", "decode_dtype": "<f8"})
        );
        assert_eq!(output_type(f.config(), "<f8"), "<f2");

        // AsType(encode_dtype='>u2', decode_dtype='<i8').decode(np.array([1, 65535, 300], '>u2'))
        let f = ok(
            json!({"id": "astype", "encode_dtype": ">u2", "decode_dtype": "<i8"}),
            "<i8",
        );
        assert_eq!(
            f.decode(&unhex("0001ffff012c"), 24).unwrap(),
            unhex("0100000000000000ffff0000000000002c01000000000000")
        );

        // AsType(encode_dtype='|i1', decode_dtype='<f8').encode(np.array([1.9, -1.9, 300.7, nan])):
        // truncation, then C's wrap-around for values out of range.
        let f = ok(
            json!({"id": "astype", "encode_dtype": "|i1", "decode_dtype": "<f8"}),
            "<f8",
        );
        assert_eq!(
            f.encode(&f8(&[1.9, -1.9, 300.7, f64::NAN])).unwrap(),
            unhex("01ff2c00")
        );
    }

    #[test]
    fn checks_sizes_and_config() {
        let f = ok(
            json!({"id": "astype", "encode_dtype": "<f8", "decode_dtype": "|u1"}),
            "|u1",
        );
        assert_corrupt(f.decode(&[0; 16], 1), "astype");
        assert_corrupt(f.decode(&[0; 15], 2), "astype");
        assert_invalid(
            json!({"id": "astype", "encode_dtype": "<f8"}),
            "<f8",
            "decode_dtype",
        );
        assert_invalid(
            json!({"id": "astype", "decode_dtype": "<f8"}),
            "<f8",
            "encode_dtype",
        );
    }
}
