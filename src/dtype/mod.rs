//! The data type model: NumPy type strings (`"<f8"`, `"|S5"`, `"<M8[ns]"`, ...) and structured
//! (record) types, as Zarr v2 stores them in `.zarray`.

use crate::error::{Error, Result};
use serde_json::Value;

mod byte_swap;
mod fill_value;
pub(crate) mod long_double;
mod numpy_str;
mod object;
mod pickle;
mod pickled;
pub mod small_float;
mod small_type;
mod structured;
mod time_unit;
pub mod utf32;
pub mod v3;

pub use byte_swap::ByteSwap;
pub use fill_value::{float_of, FillValue};
pub use numpy_str::python_tuple;
pub use object::{ItemForm, ObjectCodec, OBJECT_CODEC_IDS};
pub use small_float::SmallFloat;
pub use small_type::SmallType;
pub use structured::{select_fields, Field, FieldRanges};
pub use time_unit::{TimeUnit, Unit};

/// The kind of values an array holds.
#[derive(Debug, Clone, PartialEq, Eq)]
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
    /// `S`: fixed-length byte string, zero-padded.
    Bytes,
    /// `U`: fixed-length text of UTF-32 code units, zero-padded (4 bytes per character).
    Unicode,
    /// `V`: raw bytes with no interpretation.
    Raw,
    /// `M8`: a NumPy datetime64, a signed 64-bit count of units since 1970-01-01.
    DateTime(TimeUnit),
    /// `m8`: a NumPy timedelta64, a signed 64-bit count of units.
    TimeDelta(TimeUnit),
    /// A record of named fields, each of a data type and an optional sub-array shape.
    Structured(Vec<Field>),
    /// `|O`: variable-length values, stored by the array's object codec (its first filter).
    Object,
    /// A Zarr v3 small float (`bfloat16`, `float8_*`, `float6_*`, `float4_e2m1fn`) or narrow
    /// integer (`int2`, `int4`, `uint2`, `uint4`) of zarr-extensions; no v2 type string names
    /// them.
    Small(SmallType),
}

/// The byte order of stored values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ByteOrder {
    /// `<`
    Little,
    /// `>`
    Big,
    /// `|`: single bytes or byte strings, order does not apply.
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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataType {
    /// What the values are.
    pub kind: DataTypeKind,
    /// Size of one element in bytes.
    pub size: usize,
    /// Byte order of stored elements (`NotApplicable` for byte strings and records).
    pub order: ByteOrder,
}

impl DataType {
    /// Whether elements hold Python objects: `|O`, or a record with an object field (at any
    /// depth).
    pub fn holds_objects(&self) -> bool {
        match &self.kind {
            DataTypeKind::Object => true,
            DataTypeKind::Structured(fields) => fields.iter().any(|f| f.dtype.holds_objects()),
            _ => false,
        }
    }

    /// The fields of a structured type, in record order; none for the other kinds.
    pub fn fields(&self) -> &[Field] {
        match &self.kind {
            DataTypeKind::Structured(fields) => fields,
            _ => &[],
        }
    }

    /// Parses a `.zarray` `dtype` value: a NumPy type string, or a list of fields for a
    /// structured type. Kinds libzarr does not support are
    /// [`Error::Unsupported`]; anything malformed is [`Error::InvalidMetadata`].
    pub fn parse(value: &Value) -> Result<DataType> {
        match value {
            Value::String(text) => Self::parse_typestr(text),
            Value::Array(fields) => structured::parse_fields(fields),
            _ => Err(Error::InvalidMetadata(format!(
                "dtype must be a type string or a list of fields, got {value}"
            ))),
        }
    }

    /// Parses a NumPy type string such as `"<i4"`, `"|S10"`, `">U3"` or `"<M8[10s]"`.
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
        if kind_char == 'O' {
            return match chars.as_str() {
                "" | "8" if order == ByteOrder::NotApplicable => Ok(DataType {
                    kind: DataTypeKind::Object,
                    size: 0,
                    order,
                }),
                _ => Err(invalid()),
            };
        }
        let rest = chars.as_str();
        let (size_text, unit) = match rest.split_once('[') {
            Some((size, unit)) if matches!(kind_char, 'M' | 'm') => {
                (size, Some(unit.strip_suffix(']').ok_or_else(invalid)?))
            }
            _ => (rest, None),
        };
        let count: usize = size_text.parse().map_err(|_| invalid())?;
        let time_unit = || unit.map_or(Ok(TimeUnit::GENERIC), |u| TimeUnit::parse(u, text));
        let (kind, size) = match kind_char {
            'b' => (DataTypeKind::Bool, count),
            'i' => (DataTypeKind::Int, count),
            'u' => (DataTypeKind::UInt, count),
            'f' => (DataTypeKind::Float, count),
            'c' => (DataTypeKind::Complex, count),
            'S' => (DataTypeKind::Bytes, count),
            'V' => (DataTypeKind::Raw, count),
            'U' => (
                DataTypeKind::Unicode,
                count.checked_mul(4).ok_or_else(invalid)?,
            ),
            'M' => (DataTypeKind::DateTime(time_unit()?), count),
            'm' => (DataTypeKind::TimeDelta(time_unit()?), count),
            _ => return Err(invalid()),
        };
        let valid = match kind {
            DataTypeKind::Bool => size == 1,
            DataTypeKind::Int | DataTypeKind::UInt => matches!(size, 1 | 2 | 4 | 8),
            DataTypeKind::Float => matches!(size, 2 | 4 | 8 | 16),
            DataTypeKind::Complex => matches!(size, 8 | 16 | 32),
            DataTypeKind::DateTime(_) | DataTypeKind::TimeDelta(_) => size == 8,
            _ => size > 0,
        };
        if !valid {
            return Err(Error::Unsupported(format!(
                "dtype {text:?} (no such item size)"
            )));
        }
        let long_double = matches!(
            (&kind, size),
            (DataTypeKind::Float, 16) | (DataTypeKind::Complex, 32)
        );
        if long_double && !long_double::SUPPORTED {
            return Err(Error::Unsupported(format!(
                "dtype {text:?}: NumPy's long double is x87 extended precision in 16 bytes on x86-64 Linux, where it was written; this platform's long double is not, so its bytes would mean other numbers here"
            )));
        }
        // Single bytes and byte strings have no byte order; NumPy writes them with '|'.
        let order = match kind {
            DataTypeKind::Bytes | DataTypeKind::Raw => ByteOrder::NotApplicable,
            _ if size == 1 => ByteOrder::NotApplicable,
            _ if order == ByteOrder::NotApplicable => return Err(invalid()),
            _ => order,
        };
        Ok(DataType { kind, size, order })
    }

    /// The `.zarray` form: the canonical type string, or the list of fields of a structured type.
    pub fn to_json(&self) -> Value {
        match &self.kind {
            DataTypeKind::Structured(fields) => structured::fields_to_json(fields),
            _ => Value::String(self.typestr()),
        }
    }

    /// The first `datetime64`/`timedelta64` type without a unit (`"<M8"`, NumPy's generic
    /// unit) in this type or its fields, as its type string. The v2 spec says these types
    /// MUST name a unit, so creating an array of one is refused; zarr-python writes them
    /// all the same, so stored arrays of them are read.
    pub fn unitless_time_type(&self) -> Option<String> {
        match &self.kind {
            DataTypeKind::DateTime(t) | DataTypeKind::TimeDelta(t) if t.unit == Unit::Generic => {
                Some(self.typestr())
            }
            DataTypeKind::Structured(fields) => {
                fields.iter().find_map(|f| f.dtype.unitless_time_type())
            }
            _ => None,
        }
    }

    /// The canonical NumPy type string (for a structured type, its JSON list as text; for a
    /// small type, its v3 name).
    pub fn typestr(&self) -> String {
        let order = match self.order {
            ByteOrder::Little => '<',
            ByteOrder::Big => '>',
            ByteOrder::NotApplicable => '|',
        };
        let simple = |kind: char, n: usize| format!("{order}{kind}{n}");
        match &self.kind {
            DataTypeKind::Bool => simple('b', self.size),
            DataTypeKind::Int => simple('i', self.size),
            DataTypeKind::UInt => simple('u', self.size),
            DataTypeKind::Float => simple('f', self.size),
            DataTypeKind::Complex => simple('c', self.size),
            DataTypeKind::Bytes => simple('S', self.size),
            DataTypeKind::Raw => simple('V', self.size),
            DataTypeKind::Unicode => simple('U', self.size / 4),
            DataTypeKind::DateTime(unit) => format!("{order}M8{}", unit.suffix()),
            DataTypeKind::TimeDelta(unit) => format!("{order}m8{}", unit.suffix()),
            DataTypeKind::Structured(fields) => structured::fields_to_json(fields).to_string(),
            DataTypeKind::Object => "|O".to_string(),
            DataTypeKind::Small(t) => t.name().to_string(),
        }
    }

    /// How stored elements are converted to and from native byte order.
    pub fn byte_swap(&self) -> ByteSwap {
        ByteSwap::for_type(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_typestr() {
        for (text, size) in [
            ("|b1", 1),
            ("|i1", 1),
            ("<i8", 8),
            (">u2", 2),
            ("<f2", 2),
            (">c16", 16),
            ("|S5", 5),
            ("|V3", 3),
            ("<U4", 16),
            (">U1", 4),
            ("<M8[ns]", 8),
            (">m8[10s]", 8),
            ("<M8", 8),
            ("<M8[D]", 8),
        ] {
            let dt = DataType::parse_typestr(text).unwrap();
            assert_eq!(dt.size, size, "{text}");
            assert_eq!(dt.typestr(), text);
        }
        assert_eq!(DataType::parse_typestr("<i1").unwrap().typestr(), "|i1");
        assert_eq!(DataType::parse_typestr("<S2").unwrap().typestr(), "|S2");
        assert!(matches!(
            DataType::parse_typestr("<M8[10us]").unwrap().kind,
            DataTypeKind::DateTime(TimeUnit {
                unit: Unit::Microsecond,
                count: 10
            })
        ));
    }

    #[test]
    fn rejects_bad_typestrs() {
        for bad in [
            "", "f8", "<x4", "<i", "<i-1", "|U2", "<M8[", "<M8[xs]", "<M8[0s]", "<i4[s]",
        ] {
            assert!(DataType::parse_typestr(bad).is_err(), "{bad}");
        }
        assert_eq!(
            DataType::parse_typestr("|O").unwrap().kind,
            DataTypeKind::Object
        );
        // Long doubles where they are x87 extended precision, refused elsewhere.
        for long_double in ["<f16", ">c32"] {
            match (DataType::parse_typestr(long_double), long_double::SUPPORTED) {
                (Ok(t), true) => assert_eq!(t.typestr(), long_double),
                (Err(Error::Unsupported(m)), false) => assert!(m.contains("x87"), "{m}"),
                (other, _) => panic!("{long_double}: {other:?}"),
            }
        }
        for unsupported in ["<i3", "<f12", "<c64", "|S0", "<M4"] {
            assert!(
                matches!(
                    DataType::parse_typestr(unsupported),
                    Err(Error::Unsupported(_))
                ),
                "{unsupported}"
            );
        }
        assert!(matches!(
            DataType::parse(&serde_json::json!(4)),
            Err(Error::InvalidMetadata(_))
        ));
    }
}
