//! Kerchunk references in Parquet (fsspec's `LazyReferenceMapper`, as
//! `kerchunk.df.refs_to_dataframe` writes them): a directory holding `.zmetadata`,
//! `{"metadata": {key: document, ...}, "record_size": N}`, and for each array `FIELD` files
//! `FIELD/refs.R.parq` with the references of its chunks `R * N` to `R * N + N - 1`, numbered
//! in C order over the chunk grid, as rows of the columns `path`, `offset`, `size` and `raw`.
//! A row with `raw` holds the value itself; one with a `path` and offset and size 0 the whole
//! file; one with neither, no value. A record file that does not exist holds no values.

use super::reference_file::Reference;
use super::Store;
use crate::error::{Error, Result};
use lru::LruCache;
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};

/// Record files kept decoded, most recently used first.
const RECORDS_KEPT: usize = 8;

/// The references of one record file, by row (`None`: no value).
type Record = Arc<Vec<Option<Reference>>>;

/// Decoded record files by array and number.
type Records = LruCache<(String, u64), Record>;

/// A Parquet reference directory, its record files read as they are needed.
#[derive(Debug)]
pub struct ParquetIndex {
    /// The directory as messages show it.
    shown: String,
    store: Arc<dyn Store>,
    /// The documents of `.zmetadata`, by key, as JSON text.
    metadata: BTreeMap<String, Vec<u8>>,
    record_size: u64,
    /// Each array's chunk grid and the separator of its chunk keys.
    grids: HashMap<String, (Vec<u64>, String)>,
    records: Mutex<Records>,
}

impl ParquetIndex {
    /// Reads `.zmetadata` from `store` (the directory, shown as `shown`); `None` when it has
    /// none.
    pub fn open(store: Arc<dyn Store>, shown: &str) -> Result<Option<ParquetIndex>> {
        let Some(bytes) = store.get(".zmetadata")? else {
            return Ok(None);
        };
        let bad = |why: &str| Error::InvalidMetadata(format!("{shown}/.zmetadata: {why}"));
        let document: Value =
            serde_json::from_slice(&bytes).map_err(|e| bad(&format!("not JSON ({e})")))?;
        let record_size = document
            .get("record_size")
            .and_then(Value::as_u64)
            .filter(|&n| n > 0)
            .ok_or_else(|| bad("needs \"record_size\", a positive whole number"))?;
        let Some(Value::Object(documents)) = document.get("metadata") else {
            return Err(bad("needs \"metadata\", a JSON object"));
        };
        let mut metadata = BTreeMap::new();
        let mut grids = HashMap::new();
        for (key, value) in documents {
            crate::path::validate_key(key)
                .map_err(|_| bad(&format!("{key:?} is not a store key")))?;
            let text = match value {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            };
            if let Some(field) = key.strip_suffix("/.zarray") {
                grids.insert(field.to_string(), grid(key, &text, &bad)?);
            }
            metadata.insert(key.clone(), text.into_bytes());
        }
        Ok(Some(ParquetIndex {
            shown: shown.to_string(),
            store,
            metadata,
            record_size,
            grids,
            records: Mutex::new(LruCache::new(
                NonZeroUsize::new(RECORDS_KEPT).expect("not 0"),
            )),
        }))
    }

    /// The reference of `key`, if any.
    pub fn get(&self, key: &str) -> Result<Option<Reference>> {
        if let Some(document) = self.metadata.get(key) {
            return Ok(Some(Reference::Inline(document.clone())));
        }
        let Some((field, chunk)) = key.rsplit_once('/') else {
            return Ok(None);
        };
        let Some((grid, separator)) = self.grids.get(field) else {
            return Ok(None);
        };
        let Some(number) = chunk_number(chunk, grid, separator) else {
            return Ok(None);
        };
        let record = self.record(field, number / self.record_size)?;
        Ok(record
            .get((number % self.record_size) as usize)
            .cloned()
            .flatten())
    }

    /// Every key that starts with `prefix`, sorted: the documents, and the chunks of the
    /// record files that exist.
    pub fn keys_below(&self, prefix: &str) -> Result<Vec<String>> {
        let mut keys: Vec<String> = self
            .metadata
            .keys()
            .filter(|k| k.starts_with(prefix))
            .cloned()
            .collect();
        for (field, (grid, separator)) in &self.grids {
            let below = format!("{field}/");
            if !below.starts_with(prefix) && !prefix.starts_with(&below) {
                continue;
            }
            for file in self.store.list_prefix(&below)? {
                let Some(r) = file[below.len()..]
                    .strip_prefix("refs.")
                    .and_then(|n| n.strip_suffix(".parq"))
                    .and_then(|n| n.parse::<u64>().ok())
                else {
                    continue;
                };
                for (row, reference) in self.record(field, r)?.iter().enumerate() {
                    let number = r * self.record_size + row as u64;
                    if reference.is_some() {
                        if let Some(name) = chunk_name(number, grid, separator) {
                            let key = format!("{below}{name}");
                            if key.starts_with(prefix) {
                                keys.push(key);
                            }
                        }
                    }
                }
            }
        }
        keys.sort();
        keys.dedup();
        Ok(keys)
    }

    /// The references of record file `r` of `field` (none when it does not exist).
    fn record(&self, field: &str, r: u64) -> Result<Record> {
        let id = (field.to_string(), r);
        if let Some(record) = self.lock().get(&id) {
            return Ok(record.clone());
        }
        let name = format!("{field}/refs.{r}.parq");
        let record = match self.store.get(&name)? {
            None => Vec::new(),
            Some(bytes) => read_record(bytes, &format!("{}/{name}", self.shown))?,
        };
        let record = Arc::new(record);
        self.lock().put(id, record.clone());
        Ok(record)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Records> {
        self.records.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The chunk grid of the array whose `.zarray` is `text` (under `key`), and its chunk keys'
/// separator.
fn grid(key: &str, text: &str, bad: &dyn Fn(&str) -> Error) -> Result<(Vec<u64>, String)> {
    let document: Value =
        serde_json::from_str(text).map_err(|e| bad(&format!("{key:?} is not JSON ({e})")))?;
    let dims = |name: &str| -> Result<Vec<u64>> {
        document
            .get(name)
            .and_then(Value::as_array)
            .and_then(|a| a.iter().map(Value::as_u64).collect())
            .ok_or_else(|| bad(&format!("{key:?} needs {name:?}, a list of whole numbers")))
    };
    let (shape, chunks) = (dims("shape")?, dims("chunks")?);
    if shape.len() != chunks.len() || chunks.contains(&0) {
        return Err(bad(&format!(
            "{key:?}: \"shape\" and \"chunks\" do not match"
        )));
    }
    let grid = shape
        .iter()
        .zip(&chunks)
        .map(|(s, c)| s.div_ceil(*c))
        .collect();
    let separator = match document.get("dimension_separator") {
        None | Some(Value::Null) => ".".to_string(),
        Some(Value::String(s)) if s == "." || s == "/" => s.clone(),
        Some(_) => {
            return Err(bad(&format!(
                "{key:?}: \"dimension_separator\" is not \".\" or \"/\""
            )))
        }
    };
    Ok((grid, separator))
}

/// The number, in C order over `grid`, of the chunk named `name`; `None` for a name that is
/// not one of its chunks. A 0-d array has one chunk, `0`.
fn chunk_number(name: &str, grid: &[u64], separator: &str) -> Option<u64> {
    if grid.is_empty() {
        return (name == "0").then_some(0);
    }
    let parts: Vec<&str> = name.split(separator).collect();
    if parts.len() != grid.len() {
        return None;
    }
    let mut number: u64 = 0;
    for (part, &n) in parts.iter().zip(grid) {
        let i = part
            .parse::<u64>()
            .ok()
            .filter(|&i| i < n && *part == i.to_string())?;
        number = number.checked_mul(n)?.checked_add(i)?;
    }
    Some(number)
}

/// The name of chunk `number` (C order over `grid`), if the grid has it.
fn chunk_name(mut number: u64, grid: &[u64], separator: &str) -> Option<String> {
    if grid.is_empty() {
        return (number == 0).then(|| "0".to_string());
    }
    let mut parts = vec![0u64; grid.len()];
    for d in (0..grid.len()).rev() {
        if grid[d] == 0 {
            return None;
        }
        parts[d] = number % grid[d];
        number /= grid[d];
    }
    (number == 0).then(|| {
        parts
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(separator)
    })
}

/// The rows of a record file (`name` in messages).
fn read_record(bytes: Vec<u8>, name: &str) -> Result<Vec<Option<Reference>>> {
    let bad = |why: String| Error::InvalidMetadata(format!("{name}: {why}"));
    let reader = SerializedFileReader::new(bytes::Bytes::from(bytes))
        .map_err(|e| bad(format!("not a Parquet file ({e})")))?;
    let rows = reader
        .get_row_iter(None)
        .map_err(|e| bad(format!("cannot be read ({e})")))?;
    let mut references = Vec::new();
    for (i, row) in rows.enumerate() {
        let row = row.map_err(|e| bad(format!("row {i} cannot be read ({e})")))?;
        let (mut path, mut offset, mut size, mut raw) = (None, 0i64, 0i64, None);
        for (column, field) in row.get_column_iter() {
            match (column.as_str(), field) {
                (_, Field::Null) => {}
                ("path", Field::Str(s)) => path = Some(s.clone()),
                ("path", Field::Bytes(b)) => {
                    path = Some(
                        String::from_utf8(b.data().to_vec())
                            .map_err(|_| bad(format!("row {i}: the path is not UTF-8")))?,
                    )
                }
                ("offset", Field::Long(n)) => offset = *n,
                ("offset", Field::Int(n)) => offset = i64::from(*n),
                ("size", Field::Long(n)) => size = *n,
                ("size", Field::Int(n)) => size = i64::from(*n),
                ("raw", Field::Bytes(b)) => raw = Some(b.data().to_vec()),
                ("raw", Field::Str(s)) => raw = Some(s.as_bytes().to_vec()),
                (column @ ("path" | "offset" | "size" | "raw"), other) => {
                    return Err(bad(format!("row {i}: column {column:?} holds {other}")))
                }
                _ => {}
            }
        }
        let (Ok(offset), Ok(length)) = (u64::try_from(offset), u64::try_from(size)) else {
            return Err(bad(format!("row {i}: a negative offset or size")));
        };
        references.push(match (raw, path) {
            (Some(raw), _) => Some(Reference::Inline(raw)),
            (None, None) => None,
            (None, Some(url)) if offset == 0 && length == 0 => Some(Reference::Whole(url)),
            (None, Some(url)) => Some(Reference::Range {
                url,
                offset,
                length,
            }),
        });
    }
    Ok(references)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_names_and_numbers_are_c_order_over_the_grid() {
        let grid = [3, 4];
        assert_eq!(chunk_number("0.0", &grid, "."), Some(0));
        assert_eq!(chunk_number("1.2", &grid, "."), Some(6));
        assert_eq!(chunk_number("2/3", &grid, "/"), Some(11));
        for bad in ["3.0", "0.4", "0", "0.0.0", "01.1", "-1.0", "a.b", "1.2"] {
            let separator = if bad == "1.2" { "/" } else { "." };
            assert_eq!(chunk_number(bad, &grid, separator), None, "{bad}");
        }
        assert_eq!(chunk_name(6, &grid, "."), Some("1.2".into()));
        assert_eq!(chunk_name(12, &grid, "."), None);
        assert_eq!(chunk_number("0", &[], "."), Some(0));
        assert_eq!(chunk_name(0, &[], "."), Some("0".into()));
    }

    #[test]
    fn refuses_a_damaged_zmetadata_naming_it() {
        let store = Arc::new(super::super::MemoryStore::default());
        for (text, words) in [
            ("{", "not JSON"),
            (r#"{"metadata": {}}"#, "record_size"),
            (r#"{"metadata": {}, "record_size": 0}"#, "record_size"),
            (r#"{"metadata": [], "record_size": 5}"#, "\"metadata\""),
            (
                r#"{"metadata": {"a/.zarray": {"shape": [4]}}, "record_size": 5}"#,
                "\"chunks\"",
            ),
            (
                r#"{"metadata": {"../x": {}}, "record_size": 5}"#,
                "not a store key",
            ),
        ] {
            store.set(".zmetadata", text.as_bytes()).unwrap();
            let e = ParquetIndex::open(store.clone(), "refs.parq")
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("refs.parq/.zmetadata") && e.contains(words),
                "{text}: {e}"
            );
        }
        store.erase(".zmetadata").unwrap();
        assert!(ParquetIndex::open(store, "refs.parq").unwrap().is_none());
    }

    #[test]
    fn a_damaged_record_file_is_an_error_naming_it() {
        let e = read_record(b"PAR1 not really".to_vec(), "refs.parq/a/refs.0.parq").unwrap_err();
        assert!(e.to_string().contains("refs.parq/a/refs.0.parq"), "{e}");
    }
}
