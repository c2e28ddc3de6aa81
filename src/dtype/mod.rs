//! The data type model: NumPy type strings (`"<f8"`, `"|b1"`, ...) as Zarr v2 stores them.

use crate::error::{Error, Result};

mod fill_value;

pub use fill_value::FillValue;

/// The kind of values an array holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataTypeKind {
    /// `b`: one byte, 0 or 1.
    Bool,
    /// `i`: signed integer.
    Int,
    /// `u`: unsigned integer.
    UInt,
    /// `f`: IEEE 754 float (2, 4 or 8 bytes).
    Float,
    /// `c`: complex, two floats (real, imaginary).
    Complex,
}

/// The byte order of stored values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ByteOrder {
    /// `<`
    Little,
    /// `>`
    Big,
    /// `|`: single bytes, order does not apply.
    NotApplicable,
}

impl ByteOrder {
    /// The order of the machine the library runs on.
    pub const NATIVE: ByteOrder = if cfg!(target_endian = "little") {
        ByteOrder::Little
    } else {
        ByteOrder::Big
    };
}

/// A Zarr v2 data type: kind, size in bytes and stored byte order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataType {
    /// What the values are.
    pub kind: DataTypeKind,
    /// Size of one element in bytes.
    pub size: usize,
    /// Byte order of stored elements.
    pub order: ByteOrder,
}

impl DataType {
    /// Parses a `.zarray` `dtype` value. Only the simple type strings are supported so far;
    /// the other NumPy kinds are [`Error::Unsupported`], anything else [`Error::InvalidMetadata`].
    pub fn parse(value: &serde_json::Value) -> Result<DataType> {
        let text = value.as_str().ok_or_else(|| match value {
            serde_json::Value::Array(_) => {
                Error::Unsupported(format!("structured data type {value}"))
            }
            _ => Error::InvalidMetadata(format!("dtype must be a string, got {value}")),
        })?;
        Self::parse_typestr(text)
    }

    /// Parses a NumPy type string such as `"<i4"`.
    pub fn parse_typestr(text: &str) -> Result<DataType> {
        let invalid =
            || Error::InvalidMetadata(format!("dtype {text:?} is not a NumPy type string"));
        let mut chars = text.chars();
        let order = match chars.next().ok_or_else(invalid)? {
            '<' => ByteOrder::Little,
            '>' => ByteOrder::Big,
            '|' => ByteOrder::NotApplicable,
            _ => return Err(invalid()),
        };
        let kind_char = chars.next().ok_or_else(invalid)?;
        let size_text = chars.as_str();
        let kind = match kind_char {
            'b' => DataTypeKind::Bool,
            'i' => DataTypeKind::Int,
            'u' => DataTypeKind::UInt,
            'f' => DataTypeKind::Float,
            'c' => DataTypeKind::Complex,
            'S' | 'U' | 'V' | 'M' | 'm' | 'O' => {
                return Err(Error::Unsupported(format!("dtype {text:?}")));
            }
            _ => return Err(invalid()),
        };
        let size: usize = size_text.parse().map_err(|_| invalid())?;
        let valid_sizes: &[usize] = match kind {
            DataTypeKind::Bool => &[1],
            DataTypeKind::Int | DataTypeKind::UInt => &[1, 2, 4, 8],
            DataTypeKind::Float => &[2, 4, 8],
            DataTypeKind::Complex => &[8, 16],
        };
        if !valid_sizes.contains(&size) {
            return Err(Error::Unsupported(format!(
                "dtype {text:?} (no such item size)"
            )));
        }
        // Single-byte types have no byte order; NumPy writes them with '|'.
        let order = if size == 1 {
            ByteOrder::NotApplicable
        } else {
            order
        };
        if order == ByteOrder::NotApplicable && size > 1 {
            return Err(invalid());
        }
        Ok(DataType { kind, size, order })
    }

    /// The canonical NumPy type string, as zarr-python writes it.
    pub fn typestr(&self) -> String {
        let order = match self.order {
            ByteOrder::Little => '<',
            ByteOrder::Big => '>',
            ByteOrder::NotApplicable => '|',
        };
        let kind = match self.kind {
            DataTypeKind::Bool => 'b',
            DataTypeKind::Int => 'i',
            DataTypeKind::UInt => 'u',
            DataTypeKind::Float => 'f',
            DataTypeKind::Complex => 'c',
        };
        format!("{order}{kind}{}", self.size)
    }

    /// The size of the unit whose bytes are reversed to change byte order: the element,
    /// or each half of a complex value.
    pub fn swap_unit(&self) -> usize {
        match self.kind {
            DataTypeKind::Complex => self.size / 2,
            _ => self.size,
        }
    }

    /// The swap unit when stored values must be byte-swapped to or from native order, or
    /// `None` when the stored order is already native.
    pub fn byte_swap(&self) -> Option<usize> {
        let swaps = self.order != ByteOrder::NotApplicable && self.order != ByteOrder::NATIVE;
        (swaps && self.swap_unit() > 1).then(|| self.swap_unit())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_simple_typestr() {
        for (text, kind, size) in [
            ("|b1", DataTypeKind::Bool, 1),
            ("|i1", DataTypeKind::Int, 1),
            ("|u1", DataTypeKind::UInt, 1),
            ("<i8", DataTypeKind::Int, 8),
            (">u2", DataTypeKind::UInt, 2),
            ("<f2", DataTypeKind::Float, 2),
            (">f8", DataTypeKind::Float, 8),
            ("<c8", DataTypeKind::Complex, 8),
            (">c16", DataTypeKind::Complex, 16),
        ] {
            let dt = DataType::parse_typestr(text).unwrap();
            assert_eq!((dt.kind, dt.size), (kind, size), "{text}");
            assert_eq!(dt.typestr(), text);
        }
        assert_eq!(DataType::parse_typestr("<i1").unwrap().typestr(), "|i1");
    }

    #[test]
    fn swap_units() {
        let native = if cfg!(target_endian = "little") {
            "<"
        } else {
            ">"
        };
        let foreign = if native == "<" { ">" } else { "<" };
        assert_eq!(
            DataType::parse_typestr(&format!("{native}f8"))
                .unwrap()
                .byte_swap(),
            None
        );
        assert_eq!(
            DataType::parse_typestr(&format!("{foreign}f8"))
                .unwrap()
                .byte_swap(),
            Some(8)
        );
        assert_eq!(
            DataType::parse_typestr(&format!("{foreign}c8"))
                .unwrap()
                .byte_swap(),
            Some(4)
        );
        assert_eq!(DataType::parse_typestr("|u1").unwrap().byte_swap(), None);
    }

    #[test]
    fn rejects_bad_typestrs() {
        for bad in ["", "f8", "<x4", "<i3", "<f16", "|i4", "<i", "<i-1"] {
            assert!(DataType::parse_typestr(bad).is_err(), "{bad}");
        }
        assert!(matches!(
            DataType::parse_typestr("<U10"),
            Err(Error::Unsupported(_))
        ));
        assert!(matches!(
            DataType::parse(&serde_json::json!([["a", "<i4"]])),
            Err(Error::Unsupported(_))
        ));
        assert!(matches!(
            DataType::parse(&serde_json::json!(4)),
            Err(Error::InvalidMetadata(_))
        ));
    }
}
