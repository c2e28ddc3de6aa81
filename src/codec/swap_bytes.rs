//! The `bytes` codec's byte order for elements that array→array filters produce: filters work in
//! native order, so a non-native `endian` after them is a byte step reversing each unit.

use super::filter::Filter;
use super::filters::numeric::{ElemType, Kind};
use crate::error::{Error, Result};
use serde_json::{json, Value};

/// Reverses every `unit`-byte group of a chunk (native ⇄ the other byte order).
#[derive(Debug, Clone, Copy)]
pub struct SwapBytes {
    unit: usize,
}

impl SwapBytes {
    /// The step that stores elements of type `elem` in the non-native byte order (`None` when
    /// they have no byte order: one-byte types).
    pub fn for_elements(elem: &ElemType) -> Result<Option<SwapBytes>> {
        let unit = match elem {
            ElemType::Num(t) if t.kind == Kind::Complex => t.size / 2,
            ElemType::Num(t) => t.size,
            ElemType::Unicode { .. } => 4,
            ElemType::Other { size: 1 } => 1,
            ElemType::Small(t) => t.size(),
            other => {
                return Err(Error::Unsupported(format!(
                    "a non-native \"endian\" for elements of type {} after array→array filters",
                    other.typestr()
                )))
            }
        };
        Ok((unit > 1).then_some(SwapBytes { unit }))
    }

    fn swapped(&self, input: &[u8]) -> Result<Vec<u8>> {
        if !input.len().is_multiple_of(self.unit) {
            return Err(Error::CorruptChunk(format!(
                "bytes codec: {} bytes are not a whole number of {}-byte elements",
                input.len(),
                self.unit
            )));
        }
        let mut out = super::filters::copy(input)?;
        out.chunks_exact_mut(self.unit).for_each(<[u8]>::reverse);
        Ok(out)
    }
}

impl Filter for SwapBytes {
    fn id(&self) -> &'static str {
        "bytes"
    }

    fn config(&self) -> Value {
        let endian = if cfg!(target_endian = "big") {
            "little"
        } else {
            "big"
        };
        json!({"id": "bytes", "endian": endian})
    }

    fn encode(&self, input: &[u8]) -> Result<Vec<u8>> {
        self.swapped(input)
    }

    fn decode(&self, input: &[u8], max_len: usize) -> Result<Vec<u8>> {
        super::filter::check_len("bytes", input.len(), max_len)?;
        self.swapped(input)
    }

    fn encoded_len(&self, decoded_len: usize) -> Option<usize> {
        decoded_len.is_multiple_of(self.unit).then_some(decoded_len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reverses_each_component() {
        let c8 = ElemType::parse("<c8").unwrap();
        let swap = SwapBytes::for_elements(&c8).unwrap().unwrap();
        assert_eq!(
            swap.encode(&[1, 2, 3, 4, 5, 6, 7, 8]).unwrap(),
            [4, 3, 2, 1, 8, 7, 6, 5]
        );
        assert_eq!(swap.decode(&[4, 3, 2, 1], 4).unwrap(), [1, 2, 3, 4]);
        assert!(matches!(
            swap.decode(&[1, 2, 3], 8),
            Err(Error::CorruptChunk(_))
        ));
        assert!(matches!(
            swap.decode(&[0; 8], 4),
            Err(Error::CorruptChunk(_))
        ));
        assert!(SwapBytes::for_elements(&ElemType::parse("|u1").unwrap())
            .unwrap()
            .is_none());
        let records = ElemType::Other { size: 8 };
        assert!(matches!(
            SwapBytes::for_elements(&records),
            Err(Error::Unsupported(_))
        ));
    }
}
