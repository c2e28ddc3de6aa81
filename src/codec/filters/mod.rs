//! The numcodecs filters, one per file, and what they share: [`numeric`] (NumPy's casts,
//! promotion and arithmetic) and the byte-level element loops.

pub(crate) mod astype;
pub(crate) mod bitround;
pub(crate) mod categorize;
pub(crate) mod checksum32;
pub(crate) mod delta;
pub(crate) mod fixedscaleoffset;
pub(crate) mod fletcher32;
pub(crate) mod jenkins;
pub(crate) mod numeric;
pub(crate) mod packbits;
pub(crate) mod quantize;
pub(crate) mod shuffle;
#[cfg(test)]
pub(crate) mod testutil;

use super::config::Config;
use super::filter::{dtype_key, ragged};
use crate::error::{try_alloc_zeroed, Error, Result};
use numeric::{ElemType, NumType};

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
