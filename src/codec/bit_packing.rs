//! The v3 `packbits` codec (zarr-extensions `codecs/packbits`): an array→bytes codec that keeps
//! bits `first_bit..=last_bit` of every element component and stores them back to back.
//!
//! The components (two for complex numbers, one otherwise) are taken in their little-endian
//! representation, in chunk order; component `i` occupies bits `[i·b, (i+1)·b)` of the output,
//! where `b = last_bit - first_bit + 1`, and bit `j` of the sequence is bit `j % 8` (counted
//! from the least significant) of byte `j / 8`. The sequence is padded with zero bits to whole
//! bytes; with `padding_encoding` `first_byte` or `last_byte`, one more byte before or after
//! it holds the number of padding bits. Decoding shifts the bits back to `first_bit` and
//! sign-extends signed integers (zero-extends everything else) to the component's width.
//!
//! zarrs 0.23 leaves the padding byte out when every bit of byte-sized components is kept (it
//! writes what `bytes` would); such chunks are one byte short of the spec's length, so they are
//! read as well, while writes follow the spec.
//!
//! It runs as the first byte step of the chunk's pipeline: its input is the chunk's elements in
//! little-endian order, as the `bytes` codec would store them.

use super::filter::Filter;
use super::filters::alloc;
use super::filters::numeric::{ElemType, Kind};
use crate::error::{Error, Result};
use serde_json::{json, Map, Value};

/// Where the number of padding bits is recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Padding {
    None,
    FirstByte,
    LastByte,
}

impl Padding {
    const NAMES: [(&'static str, Padding); 3] = [
        ("none", Padding::None),
        ("first_byte", Padding::FirstByte),
        ("last_byte", Padding::LastByte),
    ];

    fn name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|(_, p)| *p == self)
            .expect("named")
            .0
    }

    /// The bytes it adds to the packed bits.
    fn extra(self) -> usize {
        usize::from(self != Padding::None)
    }
}

/// The `packbits` codec bound to an element type and a chunk's element count.
#[derive(Debug, Clone)]
pub struct BitPacking {
    padding: Padding,
    /// The configuration's `first_bit` and `last_bit` as given (`None`: absent or `null`).
    given: (Option<u32>, Option<u32>),
    /// Elements in a chunk.
    count: usize,
    /// Components per element (2 for complex numbers).
    components: usize,
    /// Bytes of one component in the decoded chunk.
    component_bytes: usize,
    /// Bits of one component (`N`; 1 for `bool`, 2, 4 or 6 for the sub-byte types).
    component_bits: u32,
    /// Decoding sign-extends (signed integers).
    signed: bool,
    /// The lowest bit kept.
    first_bit: u32,
    /// The number of bits kept per component (`b`).
    width: u32,
}

/// The bits below `n` set.
fn low_bits(n: u32) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1 << n) - 1
    }
}

impl BitPacking {
    /// The codec for chunks of `count` elements of type `elem` (what the array→array codecs
    /// before it produce), from its v3 configuration; also returns the completed configuration.
    pub fn from_config(
        config: &Map<String, Value>,
        elem: &ElemType,
        count: usize,
    ) -> Result<(BitPacking, Value)> {
        let padding = match config.get("padding_encoding") {
            None | Some(Value::Null) => Padding::None,
            Some(v) => Padding::NAMES
                .iter()
                .find(|(name, _)| v == name)
                .map(|(_, p)| *p)
                .ok_or_else(|| {
                    Error::InvalidMetadata(format!(
                        "\"padding_encoding\" must be \"none\", \"first_byte\" or \"last_byte\", got {v}"
                    ))
                })?,
        };
        // Components per element, their bytes and bits, and whether they are signed.
        let (components, size, component_bits, signed) = match elem {
            ElemType::Num(t) if t.kind == Kind::Complex => (2, t.size / 2, 4 * t.size as u32, false),
            ElemType::Num(t) if t.kind == Kind::Bool => (1, 1, 1, false),
            ElemType::Num(t) => (1, t.size, 8 * t.size as u32, t.kind == Kind::Int),
            ElemType::Small(t) => (1, t.size(), t.bits(), t.signed()),
            other => {
                return Err(Error::Unsupported(format!(
                    "the packbits codec on elements of type {} (it packs booleans, integers, floats, complex numbers and the small types)",
                    other.typestr()
                )))
            }
        };
        let bit = |key: &str| -> Result<Option<u32>> {
            match config.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(v) => v
                    .as_u64()
                    .filter(|&n| n < u64::from(component_bits))
                    .map(|n| Some(n as u32))
                    .ok_or_else(|| {
                        Error::InvalidMetadata(format!(
                            "\"{key}\" must be null or an integer from 0 to {} (the bits of a component of {}), got {v}",
                            component_bits - 1,
                            elem.typestr()
                        ))
                    }),
            }
        };
        let given = (bit("first_bit")?, bit("last_bit")?);
        let first_bit = given.0.unwrap_or(0);
        let last_bit = given.1.unwrap_or(component_bits - 1);
        if last_bit < first_bit {
            return Err(Error::InvalidMetadata(format!(
                "\"last_bit\" ({last_bit}) is less than \"first_bit\" ({first_bit})"
            )));
        }
        let codec = BitPacking {
            padding,
            given,
            count,
            components,
            component_bytes: size,
            component_bits,
            signed,
            first_bit,
            width: last_bit - first_bit + 1,
        };
        let canonical = json!({"name": "packbits", "configuration": codec.configuration()});
        Ok((codec, canonical))
    }

    /// The v3 configuration object.
    fn configuration(&self) -> Value {
        json!({
            "padding_encoding": self.padding.name(),
            "first_bit": self.given.0,
            "last_bit": self.given.1,
        })
    }

    fn decoded_len(&self) -> usize {
        self.count * self.components * self.component_bytes
    }

    fn packed_bits(&self) -> usize {
        self.count * self.components * self.width as usize
    }

    /// Every bit of components a whole number of bytes wide is kept (the `bytes` codec's
    /// layout, padding aside).
    fn keeps_whole_components(&self) -> bool {
        self.component_bits.is_multiple_of(8) && self.width == self.component_bits
    }

    /// Decodes the packed bits `body` (exactly `packed_bits` rounded up to bytes).
    fn unpack(&self, body: &[u8], max_len: usize) -> Result<Vec<u8>> {
        let len = self.decoded_len();
        super::filter::check_len("packbits", len, max_len)?;
        let mut out = alloc(len)?;
        let mask = low_bits(self.width);
        // Signed values extend over their bytes (an `int4` is an `int8` in memory).
        let extension =
            low_bits(8 * self.component_bytes as u32) & !low_bits(self.first_bit + self.width);
        let (mut acc, mut held, mut bytes) = (0u128, 0u32, body.iter());
        for component in out.chunks_exact_mut(self.component_bytes) {
            while held < self.width {
                // Never exhausted: the caller checked the body's length.
                acc |= u128::from(*bytes.next().expect("length checked")) << held;
                held += 8;
            }
            let field = acc as u64 & mask;
            (acc, held) = (acc >> self.width, held - self.width);
            let mut value = field << self.first_bit;
            if self.signed && field >> (self.width - 1) & 1 == 1 {
                value |= extension;
            }
            component.copy_from_slice(&value.to_le_bytes()[..component.len()]);
        }
        Ok(out)
    }

    /// The number of zero bits that complete the last byte.
    fn padding_bits(&self) -> u8 {
        ((8 - self.packed_bits() % 8) % 8) as u8
    }
}

impl Filter for BitPacking {
    fn id(&self) -> &'static str {
        "packbits"
    }

    fn config(&self) -> Value {
        let mut config = self.configuration();
        config["id"] = json!("packbits");
        config
    }

    fn encode(&self, input: &[u8]) -> Result<Vec<u8>> {
        if input.len() != self.decoded_len() {
            return Err(Error::InvalidArgument(format!(
                "packbits codec: {} bytes to encode, expected a chunk of {}",
                input.len(),
                self.decoded_len()
            )));
        }
        let packed = self.packed_bits().div_ceil(8);
        let mut out = alloc(packed + self.padding.extra())?;
        let body = match self.padding {
            Padding::None => &mut out[..],
            Padding::FirstByte => &mut out[1..],
            Padding::LastByte => &mut out[..packed],
        };
        let (mask, mut acc, mut held, mut next) = (low_bits(self.width), 0u128, 0u32, 0);
        for component in input.chunks_exact(self.component_bytes) {
            let mut le = [0u8; 8];
            le[..component.len()].copy_from_slice(component);
            let field = (u64::from_le_bytes(le) >> self.first_bit) & mask;
            acc |= u128::from(field) << held;
            held += self.width;
            while held >= 8 {
                body[next] = acc as u8;
                (acc, held, next) = (acc >> 8, held - 8, next + 1);
            }
        }
        if held > 0 {
            body[next] = acc as u8;
        }
        match self.padding {
            Padding::None => {}
            Padding::FirstByte => out[0] = self.padding_bits(),
            Padding::LastByte => out[packed] = self.padding_bits(),
        }
        Ok(out)
    }

    fn decode(&self, input: &[u8], max_len: usize) -> Result<Vec<u8>> {
        let packed = self.packed_bits().div_ceil(8);
        let expected = packed + self.padding.extra();
        if input.len() == packed && self.keeps_whole_components() {
            // zarrs (0.23) stores such chunks as the `bytes` codec would, without the padding
            // byte; a chunk exactly one byte short of the spec's length can only be that.
            return self.unpack(input, max_len);
        }
        if input.len() != expected {
            return Err(Error::CorruptChunk(format!(
                "packbits codec: chunk holds {} bytes, expected {expected}",
                input.len()
            )));
        }
        let (body, recorded) = match self.padding {
            Padding::None => (input, None),
            Padding::FirstByte => (&input[1..], Some(input[0])),
            Padding::LastByte => (&input[..packed], Some(input[packed])),
        };
        if let Some(recorded) = recorded.filter(|&r| r != self.padding_bits()) {
            return Err(Error::CorruptChunk(format!(
                "packbits codec: the padding byte says {recorded} bits, expected {}",
                self.padding_bits()
            )));
        }
        self.unpack(body, max_len)
    }

    fn encoded_len(&self, decoded_len: usize) -> Option<usize> {
        (decoded_len == self.decoded_len())
            .then(|| self.packed_bits().div_ceil(8) + self.padding.extra())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::filters::numeric::ElemType;

    fn codec(config: Value, typestr: &str, count: usize) -> Result<BitPacking> {
        let elem = ElemType::parse(typestr).expect("a type string");
        BitPacking::from_config(config.as_object().unwrap(), &elem, count).map(|(c, _)| c)
    }

    fn round_trip(config: Value, typestr: &str, input: &[u8]) -> (Vec<u8>, Vec<u8>) {
        let size = ElemType::parse(typestr).unwrap().size();
        let c = codec(config, typestr, input.len() / size).unwrap();
        let enc = c.encode(input).unwrap();
        assert_eq!(c.encoded_len(input.len()), Some(enc.len()));
        let dec = c.decode(&enc, input.len()).unwrap();
        (enc, dec)
    }

    fn le<T: Copy, const N: usize>(values: &[T], bytes: fn(T) -> [u8; N]) -> Vec<u8> {
        values.iter().flat_map(|&v| bytes(v)).collect()
    }

    #[test]
    fn packs_booleans_least_significant_bit_first() {
        let bools = [1, 0, 1, 1, 0, 0, 0, 1, 1];
        let (enc, dec) = round_trip(json!({}), "|b1", &bools);
        assert_eq!((enc, dec), (vec![0x8d, 0x01], bools.to_vec()));
        let first = json!({"padding_encoding": "first_byte"});
        assert_eq!(round_trip(first, "|b1", &bools).0, [7, 0x8d, 0x01]);
        let last = json!({"padding_encoding": "last_byte"});
        assert_eq!(round_trip(last, "|b1", &bools).0, [0x8d, 0x01, 7]);
    }

    #[test]
    fn keeps_the_chosen_bits_and_sign_extends_signed_integers() {
        // int8 as int4: -1, 7, -8, 3 keep their low nibbles.
        let config = json!({"first_bit": 0, "last_bit": 3});
        let (enc, dec) = round_trip(config, "|i1", &[0xff, 7, 0xf8, 3]);
        assert_eq!((enc, dec), (vec![0x7f, 0x38], vec![0xff, 7, 0xf8, 3]));
        // A signed 12-bit field in an int32 extends through all four bytes.
        let values = le(&[-5i32, 2047, -2048], i32::to_le_bytes);
        let (enc, dec) = round_trip(json!({"last_bit": 11}), "<i4", &values);
        assert_eq!(enc.len(), 5);
        assert_eq!(dec, values);
        // Unsigned and shifted: bits 4..=11 of 0xabcd are 0xbc, decoded back in place.
        let config = json!({"first_bit": 4, "last_bit": 11});
        let (enc, dec) = round_trip(config, "<u2", &le(&[0xabcdu16], u16::to_le_bytes));
        assert_eq!((enc, dec), (vec![0xbc], le(&[0x0bc0u16], u16::to_le_bytes)));
        // A float keeps its top half (bfloat16-like); the lower bits decode as zeros.
        let config = json!({"first_bit": 16});
        let values = le(&[1.0f32 + 1e-6, -2.5], f32::to_le_bytes);
        let (enc, dec) = round_trip(config, "<f4", &values);
        assert_eq!(enc, [0x80, 0x3f, 0x20, 0xc0]);
        assert_eq!(dec, le(&[1.0f32, -2.5], f32::to_le_bytes));
    }

    #[test]
    fn all_bits_of_wide_types_are_their_little_endian_bytes() {
        let values = le(&[1.5f64, -0.0, f64::MAX], f64::to_le_bytes);
        assert_eq!(
            round_trip(json!({}), "<f8", &values),
            (values.clone(), values.clone())
        );
        // complex64: each of the two float32 components is packed on its own.
        let c = le(&[1.0f32, -1.0, 0.5, 2.0], f32::to_le_bytes);
        let (enc, dec) = round_trip(json!({"first_bit": 16, "last_bit": 31}), "<c8", &c);
        assert_eq!(enc, [0x80, 0x3f, 0x80, 0xbf, 0x00, 0x3f, 0x00, 0x40]);
        assert_eq!(dec, c);
        // zarrs' form of full-width chunks, without the padding byte, reads the same.
        let c = codec(json!({"padding_encoding": "last_byte"}), "<f8", 3).unwrap();
        assert_eq!(c.encode(&values).unwrap()[24], 0);
        assert_eq!(c.decode(&values, 24).unwrap(), values);
        let i64s = le(&[i64::MIN, -1, 3], i64::to_le_bytes);
        let (_, dec) = round_trip(json!({"last_bit": 63}), "<i8", &i64s);
        assert_eq!(dec, i64s);
    }

    #[test]
    fn refuses_bad_configurations_naming_the_key() {
        let bad = |config: Value, typestr: &str, key: &str| match codec(config.clone(), typestr, 4)
        {
            Err(Error::InvalidMetadata(m)) => assert!(m.contains(key), "{config}: {m}"),
            other => panic!("{config}: {other:?}"),
        };
        bad(
            json!({"padding_encoding": "start"}),
            "|u1",
            "padding_encoding",
        );
        bad(json!({"last_bit": 8}), "|u1", "last_bit");
        bad(json!({"first_bit": -1}), "<u2", "first_bit");
        bad(json!({"first_bit": 1.5}), "<u2", "first_bit");
        bad(json!({"first_bit": 1}), "|b1", "first_bit");
        bad(json!({"first_bit": 5, "last_bit": 4}), "<u2", "last_bit");
        assert!(
            matches!(codec(json!({}), "<U3", 4), Err(Error::Unsupported(m)) if m.contains("packbits"))
        );
    }

    #[test]
    fn refuses_corrupt_chunks() {
        let c = codec(json!({"padding_encoding": "first_byte"}), "|b1", 9).unwrap();
        let corrupt = |input: &[u8], what: &str| match c.decode(input, 9) {
            Err(Error::CorruptChunk(m)) => assert!(m.contains("packbits") && m.contains(what)),
            other => panic!("{input:?}: {other:?}"),
        };
        corrupt(&[7, 0x8d], "2 bytes, expected 3");
        corrupt(&[7, 0x8d, 1, 0], "4 bytes");
        corrupt(&[3, 0x8d, 1], "padding byte says 3");
        assert_eq!(
            c.decode(&[7, 0x8d, 1], 9).unwrap(),
            [1, 0, 1, 1, 0, 0, 0, 1, 1]
        );
        assert!(matches!(
            c.decode(&[7, 0x8d, 1], 8),
            Err(Error::CorruptChunk(_))
        ));
    }
}
