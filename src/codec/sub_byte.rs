//! The unused bits of sub-byte values (`int2`, `int4`, `uint2`, `uint4`, `float6_*`,
//! `float4_e2m1fn`): the first byte step of their chunks, before `bytes` or `packbits`.
//! Encoding refuses a byte that is no value of the type (an `int4` of 9 would read back as
//! -7); decoding ignores the upper bits, as the types' specs say, sign-filling them for the
//! signed integers, so every element reads as the value its low bits hold.

use super::filter::{check_len, Filter};
use super::filters::copy;
use crate::dtype::SmallType;
use crate::error::{Error, Result};
use serde_json::{json, Value};

/// The step for elements of one sub-byte type.
#[derive(Debug, Clone, Copy)]
pub struct SubByteValues {
    kind: SmallType,
}

impl SubByteValues {
    /// The step for `kind`, if its values leave bits unused.
    pub fn for_type(kind: SmallType) -> Option<SubByteValues> {
        kind.is_sub_byte().then_some(SubByteValues { kind })
    }
}

impl Filter for SubByteValues {
    fn id(&self) -> &'static str {
        self.kind.name()
    }

    fn config(&self) -> Value {
        json!({"id": self.kind.name()})
    }

    fn encode(&self, input: &[u8]) -> Result<Vec<u8>> {
        if let Some((index, why)) = input
            .iter()
            .enumerate()
            .find_map(|(i, &b)| Some((i, self.kind.invalid_byte(b)?)))
        {
            return Err(Error::InvalidArgument(format!(
                "element {index} of the chunk: {why}"
            )));
        }
        copy(input)
    }

    fn decode(&self, input: &[u8], max_len: usize) -> Result<Vec<u8>> {
        check_len(self.kind.name(), input.len(), max_len)?;
        let mut out = copy(input)?;
        for b in &mut out {
            *b = self.kind.normalize(*b);
        }
        Ok(out)
    }

    fn encoded_len(&self, decoded_len: usize) -> Option<usize> {
        Some(decoded_len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_writes_and_normalizes_reads() {
        let int4 = SubByteValues::for_type(SmallType::from_name("int4").unwrap()).unwrap();
        assert_eq!(int4.encode(&[0xf8, 7, 0]).unwrap(), [0xf8, 7, 0]);
        match int4.encode(&[0, 1, 9]) {
            Err(Error::InvalidArgument(m)) => {
                assert_eq!(m, "element 2 of the chunk: 9 is outside int4 [-8, 7]")
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(int4.decode(&[0x08, 0x37], 2).unwrap(), [0xf8, 0x07]);
        assert!(int4.decode(&[0; 3], 2).is_err());
        assert!(SubByteValues::for_type(SmallType::from_name("float8_e4m3").unwrap()).is_none());
    }
}
