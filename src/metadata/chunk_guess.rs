//! The `chunks` of a create document as zarr-python reads its `chunks` argument: guessed when
//! not given, one integer for every dimension, `-1` or `null` for a whole dimension.

use crate::error::{Error, Result};
use serde_json::Value;

/// The item size chunks of object (`|O`) arrays are guessed with: NumPy's, a pointer's.
pub(super) const OBJECT_ITEM_SIZE: u64 = 8;

/// Soft lower bound of a guessed chunk's size in bytes (zarr-python's `CHUNK_MIN`).
const CHUNK_MIN: f64 = 128.0 * 1024.0;
/// The size a guessed chunk grows by per doubling of the array (zarr-python's `CHUNK_BASE`).
const CHUNK_BASE: f64 = 256.0 * 1024.0;
/// Hard upper bound of a guessed chunk's size in bytes (zarr-python's `CHUNK_MAX`).
const CHUNK_MAX: f64 = 64.0 * 1024.0 * 1024.0;

/// The chunk shape zarr-python 2 and 3 guess for an array of `shape` with elements of
/// `typesize` bytes (`guess_chunks`, after h5py and PyTables): a target size growing with the
/// array, between 128 KiB and 64 MiB, reached by halving the dimensions in turn, first to
/// last, from the whole shape (zero-length dimensions count as 1).
pub fn guess_chunks(shape: &[u64], typesize: u64) -> Vec<u64> {
    let mut chunks: Vec<f64> = shape.iter().map(|&n| (n as f64).max(1.0)).collect();
    let typesize = typesize as f64;
    let elements = |chunks: &[f64]| chunks.iter().product::<f64>();
    let dataset_bytes = elements(&chunks) * typesize;
    let target = (CHUNK_BASE * 2f64.powf((dataset_bytes / (1024.0 * 1024.0)).log10()))
        .clamp(CHUNK_MIN, CHUNK_MAX);
    let mut idx = 0;
    loop {
        let chunk_bytes = elements(&chunks) * typesize;
        let near = chunk_bytes < target || (chunk_bytes - target).abs() / target < 0.5;
        if (near && chunk_bytes < CHUNK_MAX) || elements(&chunks) == 1.0 {
            break;
        }
        let d = idx % chunks.len();
        chunks[d] = (chunks[d] / 2.0).ceil();
        idx += 1;
    }
    chunks.iter().map(|&c| c as u64).collect()
}

/// The chunk shape `chunks` asks for (a create document's `chunks` member; `None` when
/// absent), as zarr-python's `normalize_chunks` reads it: absent, `null` or `true` guesses
/// ([`guess_chunks`]); `false` is one chunk; an integer is that length in every dimension; a
/// list gives each dimension its length, `-1` or `null` meaning the whole dimension, and
/// dimensions it leaves out whole. Whole dimensions of length 0 get chunks of 1 (a chunk
/// length must be at least 1).
pub fn normalize_chunks(chunks: Option<&Value>, shape: &[u64], typesize: u64) -> Result<Vec<u64>> {
    let whole = |d: usize| shape[d].max(1);
    let length = |v: &Value, d: usize| -> Result<u64> {
        match v {
            Value::Null => Ok(whole(d)),
            v if v.as_i64() == Some(-1) => Ok(whole(d)),
            v => v.as_u64().filter(|&n| n >= 1).ok_or_else(|| {
                Error::InvalidMetadata(format!(
                    "chunks: a chunk length must be an integer >= 1, -1 or null, got {v}"
                ))
            }),
        }
    };
    match chunks {
        None | Some(Value::Null) | Some(Value::Bool(true)) => Ok(guess_chunks(shape, typesize)),
        Some(Value::Bool(false)) => Ok((0..shape.len()).map(whole).collect()),
        Some(Value::Array(list)) => {
            if list.len() > shape.len() {
                return Err(Error::InvalidMetadata(format!(
                    "chunks {} has more dimensions than the shape {shape:?}",
                    Value::Array(list.clone())
                )));
            }
            (0..shape.len())
                .map(|d| list.get(d).map_or(Ok(whole(d)), |v| length(v, d)))
                .collect()
        }
        Some(one) => (0..shape.len()).map(|d| length(one, d)).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn guesses_as_zarr_python() {
        // Values zarr-python 2.18's guess_chunks gives.
        assert_eq!(guess_chunks(&[100], 8), [100]);
        assert_eq!(guess_chunks(&[10000, 10000], 4), [625, 625]);
        assert_eq!(guess_chunks(&[0, 5], 1), [1, 5]);
        assert_eq!(guess_chunks(&[], 8), Vec::<u64>::new());
        assert_eq!(guess_chunks(&[1 << 40], 1 << 30), [1]);
    }

    #[test]
    fn reads_the_chunks_argument_as_zarr_python() {
        let shape = [10, 20, 0];
        let n = |v: Value| normalize_chunks(Some(&v), &shape, 4).unwrap();
        assert_eq!(n(json!(5)), [5, 5, 5]);
        assert_eq!(n(json!([3])), [3, 20, 1]);
        assert_eq!(n(json!([-1, null, 2])), [10, 20, 2]);
        assert_eq!(n(json!(false)), [10, 20, 1]);
        assert_eq!(n(json!(true)), guess_chunks(&shape, 4));
        assert_eq!(
            normalize_chunks(None, &shape, 4).unwrap(),
            guess_chunks(&shape, 4)
        );
        for bad in [
            json!(0),
            json!([1, 2, 3, 4]),
            json!("5"),
            json!([1.5]),
            json!(-2),
        ] {
            assert!(normalize_chunks(Some(&bad), &shape, 4).is_err(), "{bad}");
        }
    }
}
