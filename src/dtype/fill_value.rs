//! Fill values: the `.zarray` JSON form and one element's bytes in native byte order.
//!
//! As zarr-python writes them: numbers (`"NaN"`, `"Infinity"`, `"-Infinity"` for floats,
//! `[real, imag]` for complex values), booleans, base64 of the stored bytes for `S`, `V` and
//! structured types, the text itself for `U`, the 64-bit count for datetimes and timedeltas
//! (NaT is its minimum), or `null`. The fill value of an object array (or of records with
//! object fields) is kept as its JSON text: its object codec interprets it ([`super::ObjectCodec::fill_item`]).

use super::{DataType, DataTypeKind};
use crate::error::{Error, Result};
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use half::f16;
use serde_json::{json, Value};

/// An array's fill value: one element in native byte order, or `None` when the metadata says
/// `null` (missing chunks are then undefined; libzarr reads them as zeros).
#[derive(Debug, Clone, PartialEq)]
pub struct FillValue(pub Option<Vec<u8>>);

impl FillValue {
    /// The fill value an array gets when its creator names none: zero of its type (`0`,
    /// `false`, the empty string, all-zero bytes), `""` for object arrays.
    pub fn default_json(dtype: &DataType) -> Value {
        match dtype.kind {
            DataTypeKind::Structured(_) if dtype.holds_objects() => Value::Null,
            DataTypeKind::Bool => json!(false),
            DataTypeKind::Unicode | DataTypeKind::Bytes | DataTypeKind::Object => json!(""),
            DataTypeKind::Raw | DataTypeKind::Structured(_) => {
                json!(BASE64.encode(vec![0; dtype.size]))
            }
            DataTypeKind::Small(t) => t.default_fill(),
            _ => json!(0),
        }
    }

    /// Parses the JSON `fill_value` for `dtype` (see the module documentation).
    pub fn parse(value: &Value, dtype: &DataType) -> Result<FillValue> {
        if value.is_null() {
            return Ok(FillValue(None));
        }
        let bad = |why: &str| {
            Error::InvalidMetadata(format!(
                "fill_value {value} is not valid for dtype {}: {why}",
                dtype.typestr()
            ))
        };
        if dtype.holds_objects() {
            return Ok(FillValue(Some(value.to_string().into_bytes())));
        }
        let bytes = match dtype.kind {
            DataTypeKind::Bool => match value {
                Value::Bool(b) => vec![*b as u8],
                Value::Number(n) if matches!(n.as_u64(), Some(0 | 1)) => {
                    vec![(n.as_u64() == Some(1)) as u8]
                }
                _ => return Err(bad("expected true or false")),
            },
            DataTypeKind::Int => {
                let v = integral(value).ok_or_else(|| bad("expected an integer"))?;
                let bits = dtype.size * 8;
                let (min, max) = (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1);
                if v < min || v > max {
                    return Err(bad("out of range"));
                }
                (v as i64).to_ne_bytes()[native_low_bytes(dtype.size)].to_vec()
            }
            DataTypeKind::UInt => {
                let v = integral(value).ok_or_else(|| bad("expected an integer"))?;
                if v < 0 || v > (u64::MAX as i128 >> (64 - dtype.size * 8)) {
                    return Err(bad("out of range"));
                }
                (v as u64).to_ne_bytes()[native_low_bytes(dtype.size)].to_vec()
            }
            DataTypeKind::Float => {
                let v = float(value).ok_or_else(|| bad("expected a number, NaN or Infinity"))?;
                float_bytes(v, dtype.size)
            }
            DataTypeKind::Complex => {
                let (re, im) = match value {
                    Value::Array(parts) if parts.len() == 2 => (float(&parts[0]), float(&parts[1])),
                    other => (float(other), Some(0.0)),
                };
                let (re, im) = re.zip(im).ok_or_else(|| bad("expected [real, imag]"))?;
                let mut b = float_bytes(re, dtype.size / 2);
                b.extend(float_bytes(im, dtype.size / 2));
                b
            }
            DataTypeKind::DateTime(_) | DataTypeKind::TimeDelta(_) => match value {
                Value::String(s) if s == "NaT" => i64::MIN.to_ne_bytes().to_vec(),
                _ => match integral(value) {
                    Some(v) if i64::try_from(v).is_ok() => (v as i64).to_ne_bytes().to_vec(),
                    _ => return Err(bad("expected a 64-bit integer")),
                },
            },
            DataTypeKind::Unicode => {
                let text = value.as_str().ok_or_else(|| bad("expected a string"))?;
                let mut units: Vec<u8> = text
                    .chars()
                    .flat_map(|c| (c as u32).to_ne_bytes())
                    .collect();
                if units.len() > dtype.size {
                    return Err(bad("longer than the type holds"));
                }
                units.resize(dtype.size, 0);
                units
            }
            DataTypeKind::Object => unreachable!("an object type returned above"),
            DataTypeKind::Small(t) => t.parse_fill(value).map_err(|why| bad(&why))?,
            DataTypeKind::Bytes | DataTypeKind::Raw | DataTypeKind::Structured(_) => {
                let stored = match value {
                    // Some writers used 0 before base64 encoding was settled: all zero bytes.
                    Value::Number(n) if n.as_u64() == Some(0) => vec![0; dtype.size],
                    Value::String(text) => BASE64
                        .decode(text)
                        .map_err(|_| bad("expected base64 text"))?,
                    _ => return Err(bad("expected base64 text")),
                };
                let mut stored = sized_bytes(stored, dtype).map_err(|why| bad(&why))?;
                dtype.byte_swap().apply(&mut stored);
                stored
            }
        };
        Ok(FillValue(Some(bytes)))
    }

    /// The canonical JSON form, as zarr-python writes it.
    pub fn to_json(&self, dtype: &DataType) -> Value {
        let Some(bytes) = &self.0 else {
            return Value::Null;
        };
        if dtype.holds_objects() {
            return serde_json::from_slice(bytes).unwrap_or(Value::Null);
        }
        match dtype.kind {
            DataTypeKind::Bool => json!(bytes[0] != 0),
            DataTypeKind::Int => json!(sign_extend(bytes)),
            DataTypeKind::UInt => json!(zero_extend(bytes)),
            DataTypeKind::Float => float_json(bytes),
            DataTypeKind::Complex => {
                let half = bytes.len() / 2;
                json!([float_json(&bytes[..half]), float_json(&bytes[half..])])
            }
            DataTypeKind::DateTime(_) | DataTypeKind::TimeDelta(_) => json!(sign_extend(bytes)),
            DataTypeKind::Unicode => {
                // NumPy drops trailing NULs only; one inside the text stays.
                let units: Vec<u32> = bytes
                    .chunks_exact(4)
                    .map(|u| u32::from_ne_bytes([u[0], u[1], u[2], u[3]]))
                    .collect();
                let end = units.iter().rposition(|&u| u != 0).map_or(0, |i| i + 1);
                let text: String = units[..end]
                    .iter()
                    .map(|&u| char::from_u32(u).unwrap_or(char::REPLACEMENT_CHARACTER))
                    .collect();
                json!(text)
            }
            DataTypeKind::Bytes => {
                // NumPy's bytes scalars drop trailing NULs, and zarr-python encodes those.
                let end = bytes.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
                json!(BASE64.encode(&bytes[..end]))
            }
            DataTypeKind::Object => unreachable!("an object type returned above"),
            DataTypeKind::Small(t) => t.fill_json(bytes),
            DataTypeKind::Raw | DataTypeKind::Structured(_) => {
                let mut stored = bytes.clone();
                dtype.byte_swap().apply(&mut stored);
                json!(BASE64.encode(stored))
            }
        }
    }

    /// The element bytes, zeros when the fill value is `null`.
    pub fn bytes_or_zero(&self, size: usize) -> Vec<u8> {
        self.0.clone().unwrap_or_else(|| vec![0; size])
    }
}

/// An integer JSON value, also accepting floats with an integral value (some writers emit `0.0`).
pub(super) fn integral(value: &Value) -> Option<i128> {
    let n = value.as_number()?;
    if let Some(i) = n.as_i64() {
        return Some(i as i128);
    }
    if let Some(u) = n.as_u64() {
        return Some(u as i128);
    }
    let f = n.as_f64()?;
    (f.fract() == 0.0 && f.abs() < 1.9e19).then_some(f as i128)
}

pub(super) fn float(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => match s.as_str() {
            "NaN" => Some(f64::NAN),
            "Infinity" => Some(f64::INFINITY),
            "-Infinity" => Some(f64::NEG_INFINITY),
            _ => None,
        },
        _ => None,
    }
}

pub(super) fn float_bytes(v: f64, size: usize) -> Vec<u8> {
    match size {
        2 => f16::from_f64(v).to_ne_bytes().to_vec(),
        4 => (v as f32).to_ne_bytes().to_vec(),
        16 => super::long_double::from_f64(v).to_vec(),
        _ => v.to_ne_bytes().to_vec(),
    }
}

pub(super) fn float_json(bytes: &[u8]) -> Value {
    let v = float_of(bytes);
    if v.is_nan() {
        json!("NaN")
    } else if v.is_infinite() {
        json!(if v > 0.0 { "Infinity" } else { "-Infinity" })
    } else {
        json!(v)
    }
}

/// The float in `bytes` (2, 4, 8 or 16 native bytes) as an `f64` (a long double rounded).
pub fn float_of(bytes: &[u8]) -> f64 {
    match bytes.len() {
        2 => f16::from_ne_bytes([bytes[0], bytes[1]]).to_f64(),
        4 => f32::from_ne_bytes(bytes.try_into().expect("4 bytes")) as f64,
        16 => super::long_double::to_f64(bytes),
        _ => f64::from_ne_bytes(bytes.try_into().expect("8 bytes")),
    }
}

/// The range of a native-order `u64`/`i64`'s bytes that holds its `size` low-order bytes.
/// The bytes of a byte-string fill value fitted to `dtype`: `bytes` (`|S`) values may be
/// shorter and are padded with zeros; raw and record values must have the type's size.
pub(crate) fn sized_bytes(
    mut stored: Vec<u8>,
    dtype: &DataType,
) -> std::result::Result<Vec<u8>, String> {
    let short_ok = dtype.kind == DataTypeKind::Bytes;
    if stored.len() > dtype.size || (!short_ok && stored.len() != dtype.size) {
        return Err(format!(
            "it has {} bytes, the type has {}",
            stored.len(),
            dtype.size
        ));
    }
    stored.resize(dtype.size, 0);
    Ok(stored)
}

fn native_low_bytes(size: usize) -> std::ops::Range<usize> {
    if cfg!(target_endian = "little") {
        0..size
    } else {
        8 - size..8
    }
}

fn zero_extend(bytes: &[u8]) -> u64 {
    if bytes.len() == 8 {
        return u64::from_ne_bytes(bytes.try_into().expect("8 bytes"));
    }
    let mut full = [0u8; 8];
    full[native_low_bytes(bytes.len())].copy_from_slice(bytes);
    u64::from_ne_bytes(full)
}

fn sign_extend(bytes: &[u8]) -> i64 {
    let shift = 64 - bytes.len() * 8;
    ((zero_extend(bytes) << shift) as i64) >> shift
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dt(s: &str) -> DataType {
        DataType::parse_typestr(s).unwrap()
    }

    fn round_trip(value: Value, typestr: &str) -> Value {
        FillValue::parse(&value, &dt(typestr))
            .unwrap()
            .to_json(&dt(typestr))
    }

    #[test]
    fn round_trips_canonical_values() {
        assert_eq!(round_trip(json!(-7), "<i2"), json!(-7));
        assert_eq!(round_trip(json!(-128), "|i1"), json!(-128));
        assert_eq!(round_trip(json!(u64::MAX), "<u8"), json!(u64::MAX));
        assert_eq!(round_trip(json!(i64::MIN), ">i8"), json!(i64::MIN));
        assert_eq!(round_trip(json!(0), "<f8"), json!(0.0));
        assert_eq!(round_trip(json!("NaN"), "<f4"), json!("NaN"));
        assert_eq!(round_trip(json!("-Infinity"), "<f2"), json!("-Infinity"));
        assert_eq!(round_trip(json!(1.5), "<f2"), json!(1.5));
        assert_eq!(round_trip(json!(true), "|b1"), json!(true));
        assert_eq!(round_trip(json!([1.0, "NaN"]), "<c16"), json!([1.0, "NaN"]));
        assert_eq!(round_trip(json!(2), "<c8"), json!([2.0, 0.0]));
        assert_eq!(round_trip(Value::Null, "<i4"), Value::Null);
    }

    #[test]
    fn round_trips_text_time_and_records() {
        assert_eq!(round_trip(json!("YWI="), "|S5"), json!("YWI="));
        assert_eq!(round_trip(json!("AAEC"), "|V3"), json!("AAEC"));
        assert_eq!(round_trip(json!("héllo"), ">U8"), json!("héllo"));
        assert_eq!(round_trip(json!(""), "<U2"), json!(""));
        assert_eq!(
            round_trip(json!("a\u{0}b"), "<U4"),
            json!("a\u{0}b"),
            "only trailing NULs go"
        );
        assert_eq!(
            round_trip(json!(-9223372036854775808i64), "<M8[ns]"),
            json!(i64::MIN)
        );
        assert_eq!(round_trip(json!("NaT"), ">m8[s]"), json!(i64::MIN));
        assert_eq!(round_trip(json!(86400), "<m8[10s]"), json!(86400));
        let record = serde_json::json!([["a", ">i2"], ["b", "|S1"]]);
        let dtype = DataType::parse(&record).unwrap();
        let fill = FillValue::parse(&json!("AAF6"), &dtype).unwrap();
        // Stored bytes 00 01 'z': a = 1 (big endian), b = "z".
        let native = fill.0.clone().unwrap();
        assert_eq!(i16::from_ne_bytes([native[0], native[1]]), 1);
        assert_eq!(fill.to_json(&dtype), json!("AAF6"));
        assert_eq!(
            FillValue::parse(&json!(0), &dt("|S3")).unwrap().0.unwrap(),
            vec![0; 3]
        );
    }

    #[test]
    fn gives_native_bytes() {
        let f = FillValue::parse(&json!(-2), &dt(">i4")).unwrap();
        assert_eq!(f.0.unwrap(), (-2i32).to_ne_bytes());
        let f = FillValue::parse(&json!(0.25), &dt("<f4")).unwrap();
        assert_eq!(f.0.unwrap(), 0.25f32.to_ne_bytes());
        assert_eq!(FillValue(None).bytes_or_zero(4), vec![0; 4]);
    }

    #[test]
    fn refuses_invalid_values() {
        for (value, typestr) in [
            (json!(128), "|i1"),
            (json!(-1), "<u4"),
            (json!(65536), "<u2"),
            (json!("x"), "<f8"),
            (json!(1.5), "<i4"),
            (json!("1"), "<i4"),
            (json!(2), "|b1"),
            (json!([1, 2, 3]), "<c8"),
            (json!({}), "<f4"),
            (json!("not base64!"), "|S4"),
            (json!("YWJjZGVm"), "|S4"),
            (json!("YWI="), "|V3"),
            (json!("toolong"), "<U3"),
            (json!(1.5), "<M8[s]"),
            (json!("2020-01-01"), "<M8[s]"),
        ] {
            let err = FillValue::parse(&value, &dt(typestr)).unwrap_err();
            assert!(
                matches!(err, Error::InvalidMetadata(_)),
                "{value} {typestr}"
            );
        }
    }
}
