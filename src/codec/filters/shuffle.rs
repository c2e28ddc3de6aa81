//! numcodecs `Shuffle`: byte shuffling (byte k of every element, then byte k + 1, ...).

use super::{alloc, copy};
use crate::codec::config::Config;
use crate::codec::filter::{check_len, ragged, Filter};
use crate::error::Result;
use serde_json::{json, Map, Value};

/// `{"id": "shuffle", "elementsize": 4}`. An element size of 1 or less copies the bytes.
#[derive(Debug, Clone)]
pub struct Shuffle {
    elementsize: i64,
}

impl Shuffle {
    /// Reads `elementsize` (an integer, default 4).
    pub(crate) fn from_config(obj: &Map<String, Value>) -> Result<Shuffle> {
        let cfg = Config::filter(obj, "shuffle");
        Ok(Shuffle {
            elementsize: cfg.int("elementsize", 4, i64::MIN..=i64::MAX)?,
        })
    }

    /// The element size when shuffling applies to `input` (`None`: plain copy).
    fn size(&self, input: &[u8], decoding: bool) -> Result<Option<usize>> {
        if self.elementsize <= 1 {
            return Ok(None);
        }
        let size = usize::try_from(self.elementsize).unwrap_or(usize::MAX);
        if !input.len().is_multiple_of(size) {
            let what = format!("{size}-byte");
            return Err(ragged("shuffle", input.len(), &what, decoding));
        }
        Ok(Some(size))
    }
}

impl Filter for Shuffle {
    fn id(&self) -> &'static str {
        "shuffle"
    }

    fn config(&self) -> Value {
        json!({"id": "shuffle", "elementsize": self.elementsize})
    }

    fn encode(&self, input: &[u8]) -> Result<Vec<u8>> {
        let Some(size) = self.size(input, false)? else {
            return copy(input);
        };
        let count = input.len() / size;
        let mut out = alloc(input.len())?;
        for (i, element) in input.chunks_exact(size).enumerate() {
            for (k, &b) in element.iter().enumerate() {
                out[k * count + i] = b;
            }
        }
        Ok(out)
    }

    fn decode(&self, input: &[u8], max_len: usize) -> Result<Vec<u8>> {
        check_len("shuffle", input.len(), max_len)?;
        let Some(size) = self.size(input, true)? else {
            return copy(input);
        };
        let count = input.len() / size;
        let mut out = alloc(input.len())?;
        for (i, element) in out.chunks_exact_mut(size).enumerate() {
            for (k, b) in element.iter_mut().enumerate() {
                *b = input[k * count + i];
            }
        }
        Ok(out)
    }

    fn encoded_len(&self, decoded_len: usize) -> Option<usize> {
        let ok = self.elementsize <= 1 || decoded_len.is_multiple_of(self.elementsize as usize);
        ok.then_some(decoded_len)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use crate::error::Error;
    use serde_json::json;

    #[test]
    fn matches_numcodecs_fixtures() {
        let f = ok(json!({"id": "shuffle"}), "<i4");
        assert_eq!(f.config(), json!({"id": "shuffle", "elementsize": 4}));
        // numcodecs.Shuffle(elementsize=4).encode(np.arange(6, dtype='<i4')) (0.15.2, 0.16.6)
        let (enc, dec) = round_trip(&*f, &i4(&[0, 1, 2, 3, 4, 5]));
        assert_eq!(
            enc,
            unhex("000102030405000000000000000000000000000000000000")
        );
        assert_eq!(dec, i4(&[0, 1, 2, 3, 4, 5]));
        // Shuffle(elementsize=3).encode(np.frombuffer(bytes(range(12)), '|u1'))
        let f = ok(json!({"id": "shuffle", "elementsize": 3}), "|u1");
        let input: Vec<u8> = (0..12).collect();
        let (enc, dec) = round_trip(&*f, &input);
        assert_eq!(enc, unhex("000306090104070a0205080b"));
        assert_eq!(dec, input);
        for size in [-3, 0, 1] {
            let f = ok(json!({"id": "shuffle", "elementsize": size}), "<i2");
            assert_eq!(round_trip(&*f, &input), (input.clone(), input.clone()));
        }
    }

    #[test]
    fn rejects_ragged_input_and_bad_config() {
        let f = ok(json!({"id": "shuffle", "elementsize": 8}), "<f8");
        assert!(matches!(f.encode(&[0; 12]), Err(Error::InvalidMetadata(_))));
        assert_corrupt(f.decode(&[0; 12], 12), "shuffle");
        assert_corrupt(f.decode(&[0; 16], 8), "shuffle");
        assert_eq!(f.encoded_len(12), None);
        assert_invalid(
            json!({"id": "shuffle", "elementsize": "4"}),
            "<f8",
            "elementsize",
        );
        assert_invalid(
            json!({"id": "shuffle", "elementsize": 4.0}),
            "<f8",
            "elementsize",
        );
    }
}
