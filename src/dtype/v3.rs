//! Zarr v3 data types (`"float32"`, `{"name": "numpy.datetime64", ...}`, ...) and their fill
//! values, mapped onto the one type model: a v3 array is a [`DataType`] like a v2 one, whose
//! byte order comes from its `bytes` codec ([`DataType::with_byte_order`]).
//!
//! Core types and the registered extensions zarr-python 3 writes: `string` and
//! `bytes`/`variable_length_bytes` (object types, read through their vlen codec),
//! `fixed_length_utf32`, `null_terminated_bytes`, `raw_bytes`, `r<N>`, `numpy.datetime64`,
//! `numpy.timedelta64`, and `struct` (reading the legacy `structured` too); and the small types
//! zarrs and TensorStore write (`bfloat16`, float8/6/4, `int2`/`int4`/`uint2`/`uint4`:
//! [`SmallType`]).

use super::fill_value::{float, float_bytes, float_json, integral, sized_bytes};
use super::structured::Field;
use super::{ByteOrder, DataType, DataTypeKind, FillValue, SmallType, TimeUnit, Unit};
use crate::error::{Error, Result};
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use serde_json::{json, Map, Value};

/// What a v3 object type holds, which decides the codec that may serialise it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectKind {
    /// `string`: UTF-8 text, serialised by `vlen-utf8`.
    Text,
    /// `bytes` / `variable_length_bytes`, serialised by `vlen-bytes`.
    Bytes,
}

/// A parsed v3 `data_type`: the type, and for object types what they hold.
#[derive(Debug, Clone, PartialEq)]
pub struct V3Type {
    /// The type (multi-byte types in little-endian order until the `bytes` codec says otherwise).
    pub dtype: DataType,
    /// `Some` for the variable-length types.
    pub object: Option<ObjectKind>,
}

/// The name and configuration of an extension point written as a name or as an object
/// (`"int8"` is `{"name": "int8"}`).
pub fn name_and_configuration<'a>(
    value: &'a Value,
    what: &str,
) -> Result<(&'a str, Option<&'a Map<String, Value>>)> {
    match value {
        Value::String(name) => Ok((name, None)),
        Value::Object(obj) => {
            let name = obj.get("name").and_then(Value::as_str).ok_or_else(|| {
                Error::InvalidMetadata(format!("{what} has no string \"name\": {value}"))
            })?;
            let config = match obj.get("configuration") {
                None => None,
                Some(Value::Object(c)) => Some(c),
                Some(other) => {
                    return Err(Error::InvalidMetadata(format!(
                        "{what} {name:?}: configuration must be an object, got {other}"
                    )))
                }
            };
            if let Some(key) = obj
                .keys()
                .find(|k| !matches!(k.as_str(), "name" | "configuration" | "must_understand"))
            {
                return Err(Error::InvalidMetadata(format!(
                    "{what} {name:?} has an unknown member {key:?}"
                )));
            }
            Ok((name, config))
        }
        other => Err(Error::InvalidMetadata(format!(
            "{what} must be a name or an object, got {other}"
        ))),
    }
}

/// The `data_type` names [`parse_data_type`] reads (`r*` stands for raw bits `r8`, `r16`, ...).
pub const V3_DATA_TYPES: &[&str] = &[
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
    "string",
    "bytes",
    "variable_length_bytes",
    "fixed_length_utf32",
    "null_terminated_bytes",
    "raw_bytes",
    "numpy.datetime64",
    "numpy.timedelta64",
    "struct",
    "structured",
    "r*",
    "bfloat16",
    "float8_e3m4",
    "float8_e4m3",
    "float8_e4m3b11fnuz",
    "float8_e4m3fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
    "float8_e8m0fnu",
    "float6_e2m3fn",
    "float6_e3m2fn",
    "float4_e2m1fn",
    "int2",
    "int4",
    "uint2",
    "uint4",
];

/// Parses a v3 `data_type`. Unknown names are [`Error::Unsupported`] naming them.
pub fn parse_data_type(value: &Value) -> Result<V3Type> {
    let (name, config) = name_and_configuration(value, "data_type")?;
    let empty = Map::new();
    let cfg = config.unwrap_or(&empty);
    let simple = |kind, size: usize| {
        let order = if size > 1 {
            ByteOrder::Little
        } else {
            ByteOrder::NotApplicable
        };
        DataType { kind, size, order }
    };
    let fixed = |dtype| {
        Ok(V3Type {
            dtype,
            object: None,
        })
    };
    let length = |kind: DataTypeKind| -> Result<DataType> {
        let n = cfg
            .get("length_bytes")
            .and_then(Value::as_u64)
            .filter(|&n| n > 0 && (kind != DataTypeKind::Unicode || n % 4 == 0))
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| {
                Error::InvalidMetadata(format!(
                    "data_type {name:?}: \"length_bytes\" must be a positive integer{}, got {}",
                    if kind == DataTypeKind::Unicode {
                        " multiple of 4"
                    } else {
                        ""
                    },
                    cfg.get("length_bytes").unwrap_or(&Value::Null)
                ))
            })?;
        Ok(match kind {
            DataTypeKind::Unicode => simple(kind, n),
            _ => DataType {
                kind,
                size: n,
                order: ByteOrder::NotApplicable,
            },
        })
    };
    match name {
        "bool" => fixed(simple(DataTypeKind::Bool, 1)),
        "int8" => fixed(simple(DataTypeKind::Int, 1)),
        "int16" => fixed(simple(DataTypeKind::Int, 2)),
        "int32" => fixed(simple(DataTypeKind::Int, 4)),
        "int64" => fixed(simple(DataTypeKind::Int, 8)),
        "uint8" => fixed(simple(DataTypeKind::UInt, 1)),
        "uint16" => fixed(simple(DataTypeKind::UInt, 2)),
        "uint32" => fixed(simple(DataTypeKind::UInt, 4)),
        "uint64" => fixed(simple(DataTypeKind::UInt, 8)),
        "float16" => fixed(simple(DataTypeKind::Float, 2)),
        "float32" => fixed(simple(DataTypeKind::Float, 4)),
        "float64" => fixed(simple(DataTypeKind::Float, 8)),
        "complex64" => fixed(simple(DataTypeKind::Complex, 8)),
        "complex128" => fixed(simple(DataTypeKind::Complex, 16)),
        "string" | "bytes" | "variable_length_bytes" => Ok(V3Type {
            dtype: DataType {
                kind: DataTypeKind::Object,
                size: 0,
                order: ByteOrder::NotApplicable,
            },
            object: Some(if name == "string" {
                ObjectKind::Text
            } else {
                ObjectKind::Bytes
            }),
        }),
        "fixed_length_utf32" => fixed(length(DataTypeKind::Unicode)?),
        "null_terminated_bytes" => fixed(length(DataTypeKind::Bytes)?),
        "raw_bytes" => fixed(length(DataTypeKind::Raw)?),
        "numpy.datetime64" | "numpy.timedelta64" => {
            let unit = time_unit(name, cfg)?;
            let kind = if name == "numpy.datetime64" {
                DataTypeKind::DateTime(unit)
            } else {
                DataTypeKind::TimeDelta(unit)
            };
            fixed(simple(kind, 8))
        }
        "struct" | "structured" => fixed(struct_type(name, cfg)?),
        raw if raw.starts_with('r') && raw[1..].bytes().all(|b| b.is_ascii_digit()) => {
            match raw[1..].parse::<usize>() {
                Ok(bits) if bits > 0 && bits % 8 == 0 => fixed(DataType {
                    kind: DataTypeKind::Raw,
                    size: bits / 8,
                    order: ByteOrder::NotApplicable,
                }),
                _ => Err(Error::InvalidMetadata(format!(
                    "data_type {raw:?}: raw bits must be a positive multiple of 8"
                ))),
            }
        }
        small if SmallType::from_name(small).is_some() => {
            let t = SmallType::from_name(small).expect("named");
            fixed(simple(DataTypeKind::Small(t), t.size()))
        }
        other => Err(Error::Unsupported(format!("data_type {other:?}"))),
    }
}

fn time_unit(name: &str, cfg: &Map<String, Value>) -> Result<TimeUnit> {
    let unit_name = cfg.get("unit").and_then(Value::as_str).ok_or_else(|| {
        Error::InvalidMetadata(format!("data_type {name:?} needs a string \"unit\""))
    })?;
    let count = cfg
        .get("scale_factor")
        .and_then(Value::as_u64)
        .filter(|&n| (1..=i32::MAX as u64).contains(&n))
        .ok_or_else(|| {
            Error::InvalidMetadata(format!(
                "data_type {name:?}: \"scale_factor\" must be an integer from 1 to 2^31-1, got {}",
                cfg.get("scale_factor").unwrap_or(&Value::Null)
            ))
        })?;
    if unit_name == "generic" {
        return Ok(TimeUnit {
            unit: Unit::Generic,
            count,
        });
    }
    let unit = TimeUnit::parse(unit_name, name)?;
    if unit.count != 1 {
        return Err(Error::InvalidMetadata(format!(
            "data_type {name:?}: unknown unit {unit_name:?}"
        )));
    }
    Ok(TimeUnit {
        unit: unit.unit,
        count,
    })
}

/// A `struct` (fields `{"name", "data_type"}`) or legacy `structured` (fields `[name, type]`).
fn struct_type(name: &str, cfg: &Map<String, Value>) -> Result<DataType> {
    let invalid = |why: String| Error::InvalidMetadata(format!("data_type {name:?}: {why}"));
    let list = cfg
        .get("fields")
        .and_then(Value::as_array)
        .filter(|l| !l.is_empty())
        .ok_or_else(|| invalid("\"fields\" must be a non-empty list".into()))?;
    let mut fields: Vec<Field> = Vec::with_capacity(list.len());
    let mut offset = 0usize;
    for entry in list {
        let (field_name, field_type) = match entry {
            Value::Object(o) => (o.get("name"), o.get("data_type")),
            Value::Array(p) if p.len() == 2 => (p.first(), p.get(1)),
            _ => (None, None),
        };
        let (Some(Value::String(field_name)), Some(field_type)) = (field_name, field_type) else {
            return Err(invalid(format!("field {entry} has no name and data_type")));
        };
        if field_name.is_empty() || fields.iter().any(|f| &f.name == field_name) {
            return Err(invalid(format!(
                "field name {field_name:?} is empty or repeated"
            )));
        }
        let parsed = parse_data_type(field_type)
            .map_err(|e| e.context(format!("data_type {name:?} field {field_name:?}")))?;
        if parsed.object.is_some() {
            return Err(Error::Unsupported(format!(
                "data_type {name:?}: variable-length field {field_name:?}"
            )));
        }
        let size = parsed.dtype.size;
        fields.push(Field {
            name: field_name.clone(),
            dtype: parsed.dtype,
            shape: Vec::new(),
            offset,
        });
        offset = offset
            .checked_add(size)
            .ok_or_else(|| invalid("the record is too large".into()))?;
    }
    Ok(DataType {
        kind: DataTypeKind::Structured(fields),
        size: offset,
        order: ByteOrder::NotApplicable,
    })
}

/// The v3 `data_type` of a type (as `zarr_array_copy_to` writes it when converting a v2 array):
/// core names, the extensions zarr-python 3 writes, and `struct` for records. Records with
/// sub-array fields have no v3 form ([`Error::Unsupported`]); object types need to know what
/// they hold.
pub fn to_json(dtype: &DataType, object: Option<ObjectKind>) -> Result<Value> {
    let sized = |name: &str| json!({"name": name, "configuration": {"length_bytes": dtype.size}});
    Ok(match (&dtype.kind, dtype.size) {
        (DataTypeKind::Bool, _) => json!("bool"),
        (DataTypeKind::Int, n) => json!(format!("int{}", n * 8)),
        (DataTypeKind::UInt, n) => json!(format!("uint{}", n * 8)),
        (DataTypeKind::Float, 16) | (DataTypeKind::Complex, 32) => {
            return Err(Error::Unsupported(format!(
                "data type {}: Zarr v3 has no long double",
                dtype.typestr()
            )))
        }
        (DataTypeKind::Float, n) => json!(format!("float{}", n * 8)),
        (DataTypeKind::Complex, n) => json!(format!("complex{}", n * 8)),
        (DataTypeKind::Unicode, _) => sized("fixed_length_utf32"),
        (DataTypeKind::Bytes, _) => sized("null_terminated_bytes"),
        (DataTypeKind::Raw, _) => sized("raw_bytes"),
        (DataTypeKind::DateTime(u), _) | (DataTypeKind::TimeDelta(u), _) => {
            let name = if matches!(dtype.kind, DataTypeKind::DateTime(_)) {
                "numpy.datetime64"
            } else {
                "numpy.timedelta64"
            };
            let unit = if u.unit == Unit::Generic {
                "generic"
            } else {
                u.name()
            };
            json!({"name": name, "configuration": {"unit": unit, "scale_factor": u.count}})
        }
        (DataTypeKind::Structured(fields), _) => {
            let mut list = Vec::with_capacity(fields.len());
            for f in fields {
                if !f.shape.is_empty() {
                    return Err(Error::Unsupported(format!(
                        "field {:?} is a sub-array, which Zarr v3 records cannot hold",
                        f.name
                    )));
                }
                list.push(json!({"name": f.name, "data_type": to_json(&f.dtype, None)?}));
            }
            json!({"name": "struct", "configuration": {"fields": list}})
        }
        (DataTypeKind::Small(t), _) => json!(t.name()),
        (DataTypeKind::Object, _) => match object {
            Some(ObjectKind::Text) => json!("string"),
            Some(ObjectKind::Bytes) => json!("variable_length_bytes"),
            None => {
                return Err(Error::Unsupported(
                    "this object array has no Zarr v3 data type (only text and bytes have)".into(),
                ))
            }
        },
    })
}

impl DataType {
    /// The same type with every multi-byte part stored in `order` (records: each field).
    pub fn with_byte_order(&self, order: ByteOrder) -> DataType {
        let mut out = self.clone();
        if let DataTypeKind::Structured(fields) = &mut out.kind {
            for f in fields.iter_mut() {
                f.dtype = f.dtype.with_byte_order(order);
            }
        } else if out.order != ByteOrder::NotApplicable {
            out.order = order;
        }
        out
    }

    /// Whether any part of an element has a byte order (multi-byte numbers, UTF-32 text).
    pub fn has_byte_order(&self) -> bool {
        match &self.kind {
            DataTypeKind::Structured(fields) => fields.iter().any(|f| f.dtype.has_byte_order()),
            _ => self.order != ByteOrder::NotApplicable,
        }
    }
}

impl FillValue {
    /// The fill value a v3 array gets when its creator names none, as zarr-python 3 writes it.
    pub fn default_json_v3(dtype: &DataType) -> Value {
        match &dtype.kind {
            DataTypeKind::Bool => json!(false),
            DataTypeKind::Float => json!(0.0),
            DataTypeKind::Complex => json!([0.0, 0.0]),
            DataTypeKind::DateTime(_) | DataTypeKind::TimeDelta(_) => json!(i64::MIN),
            DataTypeKind::Unicode | DataTypeKind::Object => json!(""),
            DataTypeKind::Bytes => json!(""),
            DataTypeKind::Raw => json!(BASE64.encode(vec![0; dtype.size])),
            DataTypeKind::Structured(fields) => Value::Object(
                fields
                    .iter()
                    .map(|f| (f.name.clone(), Self::default_json_v3(&f.dtype)))
                    .collect(),
            ),
            DataTypeKind::Int | DataTypeKind::UInt => json!(0),
            DataTypeKind::Small(t) => t.default_fill(),
        }
    }

    /// Parses a v3 `fill_value` for `dtype`: numbers; `"NaN"`, `"Infinity"`, `"-Infinity"` and
    /// `"0x..."` bit patterns for floats; `[re, im]` for complex numbers; an array of byte
    /// values or base64 text for raw and byte-string types; text for UTF-32; an integer or
    /// `"NaT"` for times; an object of field values (or base64, as zarr-python 3.1 writes) for
    /// records. `null` is not allowed in v3.
    pub fn parse_v3(value: &Value, dtype: &DataType) -> Result<FillValue> {
        let bad = |why: &str| {
            Error::InvalidMetadata(format!(
                "fill_value {value} is not valid for data_type {}: {why}",
                dtype.typestr()
            ))
        };
        let bytes = match &dtype.kind {
            DataTypeKind::Float => match value.as_str().and_then(|s| s.strip_prefix("0x")) {
                Some(hex) => hex_float(hex, dtype.size).ok_or_else(|| {
                    bad(&format!("expected {} hex digits after 0x", dtype.size * 2))
                })?,
                None => float_bytes(
                    float(value).ok_or_else(|| bad("expected a number, NaN or Infinity"))?,
                    dtype.size,
                ),
            },
            DataTypeKind::Complex => {
                let Value::Array(parts) = value else {
                    return Err(bad("expected [real, imag]"));
                };
                let part = DataType {
                    kind: DataTypeKind::Float,
                    size: dtype.size / 2,
                    order: dtype.order,
                };
                if parts.len() != 2 {
                    return Err(bad("expected [real, imag]"));
                }
                let mut b = Self::parse_v3(&parts[0], &part)?.bytes_or_zero(0);
                b.extend(Self::parse_v3(&parts[1], &part)?.bytes_or_zero(0));
                b
            }
            DataTypeKind::Raw | DataTypeKind::Bytes => {
                let stored = match value {
                    Value::Array(items) => items
                        .iter()
                        .map(|v| v.as_u64().and_then(|b| u8::try_from(b).ok()))
                        .collect::<Option<Vec<u8>>>()
                        .ok_or_else(|| bad("expected byte values 0 to 255"))?,
                    Value::String(text) => BASE64
                        .decode(text)
                        .map_err(|_| bad("expected base64 text"))?,
                    _ => return Err(bad("expected a list of byte values or base64 text")),
                };
                sized_bytes(stored, dtype).map_err(|why| bad(&why))?
            }
            DataTypeKind::Structured(fields) => match value {
                Value::Object(map) => {
                    let mut record = Vec::with_capacity(dtype.size);
                    for f in fields {
                        let v = map
                            .get(&f.name)
                            .ok_or_else(|| bad(&format!("no value for field {:?}", f.name)))?;
                        record.extend(Self::parse_v3(v, &f.dtype)?.bytes_or_zero(0));
                    }
                    if let Some(extra) = map.keys().find(|k| !fields.iter().any(|f| &f.name == *k))
                    {
                        return Err(bad(&format!("no field {extra:?}")));
                    }
                    record
                }
                // zarr-python 3.1 writes records as base64 of the stored record.
                _ => return FillValue::parse(value, dtype),
            },
            DataTypeKind::Int | DataTypeKind::UInt => {
                if integral(value).is_none() || value.as_f64().is_some_and(|f| f.fract() != 0.0) {
                    return Err(bad("expected an integer"));
                }
                return FillValue::parse(value, dtype);
            }
            DataTypeKind::Object => match value {
                Value::String(_) | Value::Array(_) => return FillValue::parse(value, dtype),
                _ => return Err(bad("expected text or bytes")),
            },
            _ if value.is_null() => return Err(bad("Zarr v3 fill values cannot be null")),
            _ => return FillValue::parse(value, dtype),
        };
        Ok(FillValue(Some(bytes)))
    }

    /// The v3 JSON form of this fill value, as zarr-python 3 writes it (records as field
    /// objects, as `struct` has them).
    pub fn to_json_v3(&self, dtype: &DataType) -> Value {
        let Some(bytes) = &self.0 else {
            return Value::Null;
        };
        match &dtype.kind {
            DataTypeKind::Structured(fields) => Value::Object(
                fields
                    .iter()
                    .map(|f| {
                        let part = FillValue(Some(bytes[f.offset..f.offset + f.size()].to_vec()));
                        (f.name.clone(), part.to_json_v3(&f.dtype))
                    })
                    .collect(),
            ),
            DataTypeKind::Float => float_json(bytes),
            DataTypeKind::Raw => json!(BASE64.encode(bytes)),
            _ => self.to_json(dtype),
        }
    }
}

/// A float of `size` bytes from the hex of its bit pattern (big-endian digits).
fn hex_float(hex: &str, size: usize) -> Option<Vec<u8>> {
    if hex.len() != size * 2 {
        return None;
    }
    let bits = u64::from_str_radix(hex, 16).ok()?;
    let be = bits.to_be_bytes();
    let mut out = be[8 - size..].to_vec();
    if cfg!(target_endian = "little") {
        out.reverse();
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every listed data type parses (with the configuration it needs); another name is
    /// unsupported.
    #[test]
    fn the_listed_data_types_are_those_read() {
        for &name in V3_DATA_TYPES {
            let value = match name {
                "r*" => json!("r16"),
                "fixed_length_utf32" | "null_terminated_bytes" | "raw_bytes" => {
                    json!({"name": name, "configuration": {"length_bytes": 8}})
                }
                "numpy.datetime64" | "numpy.timedelta64" => {
                    json!({"name": name, "configuration": {"unit": "s", "scale_factor": 1}})
                }
                "struct" | "structured" => {
                    json!({"name": name, "configuration": {"fields": [["a", "int8"]]}})
                }
                _ => json!(name),
            };
            assert!(parse_data_type(&value).is_ok(), "{name}: {value}");
        }
        assert!(matches!(
            parse_data_type(&json!("bfloat17")),
            Err(Error::Unsupported(_))
        ));
    }

    fn parse(v: Value) -> Result<V3Type> {
        parse_data_type(&v)
    }

    #[test]
    fn parses_core_and_extension_types() {
        for (v, typestr) in [
            (json!("bool"), "|b1"),
            (json!("int8"), "|i1"),
            (json!({"name": "uint64"}), "<u8"),
            (json!("float16"), "<f2"),
            (json!("complex128"), "<c16"),
            (json!("r24"), "|V3"),
            (
                json!({"name": "fixed_length_utf32", "configuration": {"length_bytes": 12}}),
                "<U3",
            ),
            (
                json!({"name": "null_terminated_bytes", "configuration": {"length_bytes": 3}}),
                "|S3",
            ),
            (
                json!({"name": "raw_bytes", "configuration": {"length_bytes": 5}}),
                "|V5",
            ),
            (
                json!({"name": "numpy.datetime64", "configuration": {"unit": "ms", "scale_factor": 10}}),
                "<M8[10ms]",
            ),
            (
                json!({"name": "numpy.timedelta64", "configuration": {"unit": "μs", "scale_factor": 1}}),
                "<m8[us]",
            ),
        ] {
            let t = parse(v.clone()).unwrap();
            assert_eq!(t.dtype.typestr(), typestr, "{v}");
            assert_eq!(t.object, None);
        }
        for v in [
            json!("uint64"),
            json!("complex64"),
            json!({"name": "fixed_length_utf32", "configuration": {"length_bytes": 12}}),
            json!({"name": "raw_bytes", "configuration": {"length_bytes": 5}}),
            json!({"name": "numpy.timedelta64", "configuration": {"unit": "us", "scale_factor": 7}}),
        ] {
            assert_eq!(to_json(&parse(v.clone()).unwrap().dtype, None).unwrap(), v);
        }
        assert_eq!(
            parse(json!("string")).unwrap().object,
            Some(ObjectKind::Text)
        );
        assert_eq!(
            parse(json!("variable_length_bytes")).unwrap().object,
            Some(ObjectKind::Bytes)
        );
    }

    #[test]
    fn parses_records_old_and_new() {
        let new = json!({"name": "struct", "configuration": {"fields": [
            {"name": "x", "data_type": "float32"}, {"name": "y", "data_type": "uint8"}]}});
        let old = json!({"name": "structured", "configuration": {"fields": [["x", "float32"], ["y", "uint8"]]}});
        let a = parse(new.clone()).unwrap().dtype;
        assert_eq!(a, parse(old).unwrap().dtype);
        assert_eq!(a.size, 5);
        assert_eq!(to_json(&a, None).unwrap(), new);
        let big = a.with_byte_order(ByteOrder::Big);
        assert_eq!(
            big.typestr(),
            r#"[["x",">f4"],["y","|u1"]]"#,
            "fields take the order"
        );
        let fill = FillValue::parse_v3(&json!({"x": 1.5, "y": 7}), &big).unwrap();
        assert_eq!(
            fill.to_json_v3(&big),
            json!({"x": 1.5, "y": 7}),
            "field by field"
        );
        assert_eq!(
            FillValue::parse_v3(&json!("AAAAAAA="), &a).unwrap().0,
            Some(vec![0; 5])
        );
    }

    #[test]
    fn refuses_bad_and_unknown_types() {
        for (v, unsupported) in [
            (json!("int128"), true),
            (json!({"name": "zarrs.optional"}), true),
            (json!("r7"), false),
            (json!("r0"), false),
            (json!(5), false),
            (json!({"configuration": {}}), false),
            (
                json!({"name": "fixed_length_utf32", "configuration": {"length_bytes": 3}}),
                false,
            ),
            (json!({"name": "raw_bytes"}), false),
            (
                json!({"name": "numpy.datetime64", "configuration": {"unit": "ms"}}),
                false,
            ),
            (
                json!({"name": "numpy.datetime64", "configuration": {"unit": "xs", "scale_factor": 1}}),
                false,
            ),
            (
                json!({"name": "struct", "configuration": {"fields": []}}),
                false,
            ),
            (
                json!({"name": "struct", "configuration": {"fields": [{"name": "s", "data_type": "string"}]}}),
                true,
            ),
            (json!({"name": "int8", "extra": 1}), false),
        ] {
            let err = parse(v.clone()).unwrap_err();
            assert_eq!(
                matches!(err, Error::Unsupported(_)),
                unsupported,
                "{v}: {err}"
            );
        }
    }

    #[test]
    fn parses_every_fill_value_encoding() {
        let t = |s: &str| parse(json!(s)).unwrap().dtype;
        let bytes = |v: Value, dt: &DataType| FillValue::parse_v3(&v, dt).unwrap().0.unwrap();
        assert_eq!(
            bytes(json!("0x7fc00001"), &t("float32")),
            f32::from_bits(0x7fc0_0001).to_ne_bytes()
        );
        assert_eq!(
            bytes(json!("0x3c00"), &t("float16")),
            half::f16::from_f32(1.0).to_ne_bytes()
        );
        assert_eq!(
            bytes(json!("-Infinity"), &t("float64")),
            f64::NEG_INFINITY.to_ne_bytes()
        );
        assert_eq!(
            bytes(json!(["NaN", "0x3ff0000000000000"]), &t("complex128"))[8..],
            1f64.to_ne_bytes()
        );
        assert_eq!(bytes(json!([1, 2, 255]), &t("r24")), vec![1, 2, 255]);
        assert_eq!(bytes(json!("AQL/"), &t("r24")), vec![1, 2, 255]);
        let nat = parse(
            json!({"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 1}}),
        )
        .unwrap()
        .dtype;
        assert_eq!(bytes(json!("NaT"), &nat), i64::MIN.to_ne_bytes());
        assert_eq!(bytes(json!(true), &t("bool")), vec![1]);
        for (v, ty) in [
            (json!(null), "int8"),
            (json!(1.5), "int8"),
            (json!(300), "uint8"),
            (json!("0x7fc0"), "float32"),
            (json!("0xzzzzzzzz"), "float32"),
            (json!([1.0]), "complex64"),
            (json!([1, 256, 0]), "r24"),
            (json!([1, 2]), "r24"),
            (json!(1), "string"),
        ] {
            assert!(FillValue::parse_v3(&v, &t(ty)).is_err(), "{v} {ty}");
        }
        assert_eq!(FillValue::default_json_v3(&t("float32")), json!(0.0));
    }
}
