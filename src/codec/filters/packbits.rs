//! numcodecs `PackBits`: booleans packed eight to a byte after a byte counting the padding.

use super::alloc;
use crate::codec::filter::{check_len, Filter};
use crate::error::{Error, Result};
use serde_json::{json, Value};

/// `{"id": "packbits"}`.
///
/// Every input byte is one boolean (numcodecs views its input as `bool`, so a non-zero byte
/// of any type packs as 1); bits are packed most significant first (`np.packbits`) after a
/// byte holding the number of padding bits in the last byte. Decoding yields 0/1 bytes and,
/// like NumPy slicing, an empty result when the padding count exceeds the bits present.
#[derive(Debug, Clone, Copy)]
pub struct PackBits;

impl Filter for PackBits {
    fn id(&self) -> &'static str {
        "packbits"
    }

    fn config(&self) -> Value {
        json!({"id": "packbits"})
    }

    fn encode(&self, input: &[u8]) -> Result<Vec<u8>> {
        let mut out = alloc(1 + input.len().div_ceil(8))?;
        out[0] = ((8 - input.len() % 8) % 8) as u8;
        for (byte, bits) in out[1..].iter_mut().zip(input.chunks(8)) {
            *byte = bits
                .iter()
                .enumerate()
                .fold(0, |acc, (i, &b)| acc | (u8::from(b != 0) << (7 - i)));
        }
        Ok(out)
    }

    fn decode(&self, input: &[u8], max_len: usize) -> Result<Vec<u8>> {
        let (&padding, packed) = input.split_first().ok_or_else(|| {
            Error::CorruptChunk("packbits filter: empty input has no padding count".into())
        })?;
        let len = (packed.len() * 8).saturating_sub(padding.into());
        check_len("packbits", len, max_len)?;
        let mut out = alloc(len)?;
        for (i, b) in out.iter_mut().enumerate() {
            *b = (packed[i / 8] >> (7 - i % 8)) & 1;
        }
        Ok(out)
    }

    fn encoded_len(&self, decoded_len: usize) -> Option<usize> {
        Some(1 + decoded_len.div_ceil(8))
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use serde_json::json;

    #[test]
    fn matches_numcodecs_fixtures() {
        let f = ok(json!({"id": "packbits"}), "|b1");
        assert_eq!(f.config(), json!({"id": "packbits"}));
        assert_eq!(output_type(json!({"id": "packbits"}), "|b1"), "|u1");
        // numcodecs.PackBits().encode(np.array([True, False, False, True])) (its docstring).
        let (enc, dec) = round_trip(&*f, &[1, 0, 0, 1]);
        assert_eq!(enc, [4, 144]);
        assert_eq!(dec, [1, 0, 0, 1]);
        // PackBits().encode(np.array([1,0,1,1,0,0,0,1, 0,1,1,1,1,1,1,1], bool)): no padding.
        let bits = [1, 0, 1, 1, 0, 0, 0, 1, 0, 1, 1, 1, 1, 1, 1, 1];
        assert_eq!(round_trip(&*f, &bits), (unhex("00b17f"), bits.to_vec()));
        // PackBits().encode(np.frombuffer(bytes([2, 0, 0, 0, 255, 1, 0, 3, 7]), '|u1')):
        // any non-zero byte is True.
        let (enc, dec) = round_trip(&*f, &[2, 0, 0, 0, 255, 1, 0, 3, 7]);
        assert_eq!(enc, unhex("078d80"));
        assert_eq!(dec, [1, 0, 0, 0, 1, 1, 0, 1, 1]);
        assert_eq!(f.encode(&[]).unwrap(), [0]);
    }

    #[test]
    fn decodes_odd_padding_like_numpy_slicing() {
        let f = ok(json!({"id": "packbits"}), "|b1");
        // PackBits().decode(np.array([9, 255, 255], 'u1')) -> 7 Trues; [200, 255] -> empty.
        assert_eq!(f.decode(&[9, 255, 255], 100).unwrap(), [1; 7]);
        assert_eq!(f.decode(&[200, 255], 100).unwrap(), Vec::<u8>::new());
        assert_eq!(f.decode(&[0], 100).unwrap(), Vec::<u8>::new());
        assert_corrupt(f.decode(&[], 100), "packbits");
        // A thousand packed bytes are 8000 booleans: refused for a 100-byte chunk.
        assert_corrupt(f.decode(&[0; 1001], 100), "packbits");
    }
}
