//! The numcodecs filters, one per file, and what they share: [`numeric`] (NumPy's casts,
//! promotion and arithmetic) and the byte-level element loops.

pub(crate) mod astype;
pub(crate) mod bitround;
pub(crate) mod cast_value;
pub(crate) mod categorize;
pub(crate) mod checksum32;
pub(crate) mod delta;
pub(crate) mod fixedscaleoffset;
pub(crate) mod fletcher32;
pub(crate) mod jenkins;
pub(crate) mod numeric;
pub(crate) mod packbits;
pub(crate) mod quantize;
pub(crate) mod scale_offset;
pub(crate) mod shuffle;
#[cfg(test)]
pub(crate) mod testutil;

use super::config::Config;
use super::filter::{dtype_key, ragged, Filter};
use crate::dtype::{ByteOrder, DataType, DataTypeKind, FillValue};
use crate::error::{try_alloc_zeroed, Error, Result};
use numeric::{ElemType, Kind, Num, NumType};
use serde_json::{Map, Value};

/// Builds the registered Zarr v3 array→array codec `name` (`scale_offset` or `cast_value`)
/// for input elements of type `input`: the byte step, the element type it encodes to, and
/// the codec's JSON as written back (`{"name": ..., "configuration": ...}`).
pub(crate) fn build_v3(
    name: &str,
    config: &Map<String, Value>,
    input: &ElemType,
) -> Result<(Box<dyn Filter>, ElemType, Value)> {
    fn boxed<F: Filter + 'static>((f, out): (F, ElemType)) -> (Box<dyn Filter>, ElemType, Value) {
        let canonical = f.config();
        (Box::new(f), out, canonical)
    }
    match name {
        "scale_offset" => Ok(boxed(scale_offset::ScaleOffset::from_v3(config, input)?)),
        "cast_value" => Ok(boxed(cast_value::CastValue::from_v3(config, input)?)),
        other => Err(Error::Unsupported(format!("codec {other:?}"))),
    }
}

/// The Zarr v3 name of an integer or float type (`"uint16"`), or its NumPy type string for
/// any other type (for messages).
pub(crate) fn v3_name(t: NumType) -> String {
    match t.kind {
        Kind::Int => format!("int{}", t.size * 8),
        Kind::UInt => format!("uint{}", t.size * 8),
        Kind::Float => format!("float{}", t.size * 8),
        _ => t.typestr(),
    }
}

/// The element type an integer or float v3 codec works on: `input` when it is an integer or
/// float type, else [`Error::InvalidMetadata`] naming `codec`.
pub(crate) fn real_type(codec: &str, input: &ElemType) -> Result<NumType> {
    match input {
        ElemType::Num(t) if matches!(t.kind, Kind::Int | Kind::UInt | Kind::Float) => Ok(*t),
        other => Err(Error::InvalidMetadata(format!(
            "{codec} codec: only integer and floating-point data types are supported, not {}",
            other.typestr()
        ))),
    }
}

/// A scalar of type `t` written with the Zarr v3 fill-value encoding (`3`, `-1.5`, `"NaN"`,
/// `"Infinity"`, `"0x7fc00000"`); `None` when `value` is not a valid encoding for `t` (not an
/// integer for an integer type, out of its range, ...).
pub(crate) fn v3_scalar(value: &Value, t: NumType) -> Option<Num> {
    let kind = match t.kind {
        Kind::Int => DataTypeKind::Int,
        Kind::UInt => DataTypeKind::UInt,
        Kind::Float => DataTypeKind::Float,
        _ => return None,
    };
    let order = if t.size > 1 {
        ByteOrder::NATIVE
    } else {
        ByteOrder::NotApplicable
    };
    let dtype = DataType {
        kind,
        size: t.size,
        order,
    };
    let bytes = FillValue::parse_v3(value, &dtype).ok()?.0?;
    Some(t.to_native().read(&bytes))
}

/// Rejects keys of a v3 codec configuration other than `known`, naming the first one.
pub(crate) fn check_keys(codec: &str, config: &Map<String, Value>, known: &[&str]) -> Result<()> {
    match config.keys().find(|k| !known.contains(&k.as_str())) {
        Some(key) => Err(Error::InvalidMetadata(format!(
            "{codec} codec: unknown configuration key \"{key}\" (the codec has only {})",
            known
                .iter()
                .map(|k| format!("\"{k}\""))
                .collect::<Vec<_>>()
                .join(", ")
        ))),
        None => Ok(()),
    }
}

/// Reads a key naming a numeric NumPy type, with `default` when absent.
pub(crate) fn num_dtype(cfg: &Config, key: &str, default: Option<NumType>) -> Result<NumType> {
    match dtype_key(cfg, key, default.map(ElemType::Num).as_ref())? {
        ElemType::Num(t) => Ok(t),
        _ => Err(cfg.invalid(
            key,
            "a numeric NumPy type (bool, int, uint, float, complex)",
        )),
    }
}

/// Checks that `input` holds whole `ty` elements and returns how many.
pub(crate) fn count(id: &str, input: &[u8], ty: NumType, decoding: bool) -> Result<usize> {
    if input.len().is_multiple_of(ty.size) {
        Ok(input.len() / ty.size)
    } else {
        Err(ragged(id, input.len(), &ty.typestr(), decoding))
    }
}

/// The length of `len` bytes of `from` elements re-expressed as `to` elements.
pub(crate) fn converted_len(len: usize, from: NumType, to: NumType) -> Option<usize> {
    len.is_multiple_of(from.size)
        .then(|| len / from.size * to.size)
}

/// A zeroed output buffer, refused rather than aborting when memory runs out.
pub(crate) fn alloc(len: usize) -> Result<Vec<u8>> {
    try_alloc_zeroed(len, "a filter's output")
}

/// `a` followed by `b` in a new buffer.
pub(crate) fn concat(a: &[u8], b: &[u8]) -> Result<Vec<u8>> {
    let len = a.len().saturating_add(b.len());
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| {
        Error::TooLarge(format!("cannot allocate {len} bytes for a filter's output"))
    })?;
    v.extend_from_slice(a);
    v.extend_from_slice(b);
    Ok(v)
}

/// A copy of `data`.
pub(crate) fn copy(data: &[u8]) -> Result<Vec<u8>> {
    concat(data, &[])
}
