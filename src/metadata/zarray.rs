//! The `.zarray` document (Zarr v2).

use super::array::{ArrayMetadata, ChunkKeyEncoding, FormatMetadata, Order};
use super::chunk_grid::ChunkGrid;
use super::chunk_guess::{normalize_chunks, OBJECT_ITEM_SIZE};
use crate::dtype::{DataType, FillValue};
use crate::error::{Error, Result};
use serde_json::{json, Map, Value};

/// The keys of a `.zarray` document, the only ones a document creating a v2 array may have.
const CREATE_KEYS: [&str; 9] = [
    "zarr_format",
    "shape",
    "chunks",
    "dtype",
    "compressor",
    "fill_value",
    "order",
    "filters",
    "dimension_separator",
];

impl ArrayMetadata {
    /// Parses a stored `.zarray` document; `key` names it in errors. Every key the spec
    /// requires must be present (a missing `filters` is read as `null`); unknown keys are ignored.
    pub fn parse(doc: &Value, key: &str) -> Result<ArrayMetadata> {
        Self::parse_with(doc, false).map_err(|e| e.context(key))
    }

    /// Parses the document a caller gives to create an array: `shape`, `chunks` and `dtype`
    /// are required, keys a `.zarray` does not have are refused; the rest default to zarr_format 2, no compressor, a zero fill value
    /// ([`FillValue::default_json`]), order C, no filters and separator `"."`.
    pub fn parse_for_create(doc: &Value) -> Result<ArrayMetadata> {
        Self::parse_with(doc, true).map_err(|e| e.context("array metadata"))
    }

    fn parse_with(doc: &Value, defaults: bool) -> Result<ArrayMetadata> {
        let obj = doc
            .as_object()
            .ok_or_else(|| Error::InvalidMetadata(format!("expected a JSON object, got {doc}")))?;
        if defaults {
            // A misspelled key would otherwise silently leave its setting at the default.
            if let Some(unknown) = obj.keys().find(|k| !CREATE_KEYS.contains(&k.as_str())) {
                return Err(Error::InvalidMetadata(format!(
                    "unknown key {unknown:?} (a v2 array takes {})",
                    CREATE_KEYS.join(", ")
                )));
            }
        }
        let field = |name: &str, default: Value| -> Result<Value> {
            match obj.get(name) {
                Some(v) => Ok(v.clone()),
                None if defaults || name == "filters" => Ok(default),
                None => Err(Error::InvalidMetadata(format!(
                    "missing required key \"{name}\""
                ))),
            }
        };
        let format = field("zarr_format", json!(2))?;
        if format.as_u64() != Some(2) {
            return Err(Error::Unsupported(format!(
                "zarr_format {format} (only 2 is supported)"
            )));
        }
        let shape = dims(obj, "shape", 0)?;
        // A stored document must say its chunks; a create document's are read as zarr-python's.
        let stored_chunks = (!defaults).then(|| dims(obj, "chunks", 1)).transpose()?;
        let dtype = DataType::parse(obj.get("dtype").ok_or_else(|| {
            Error::InvalidMetadata("missing required key \"dtype\"".to_string())
        })?)?;
        if defaults {
            if let Some(unitless) = dtype.unitless_time_type() {
                return Err(Error::InvalidMetadata(format!(
                    "dtype {unitless}: a datetime or timedelta type must name its unit, e.g. \"{unitless}[ns]\" (Zarr v2 spec, data type encoding)"
                )));
            }
        }
        let chunks = match stored_chunks {
            Some(chunks) => chunks,
            None => {
                let item_size = match dtype.kind {
                    _ if dtype.holds_objects() => {
                        OBJECT_ITEM_SIZE * dtype.fields().len().max(1) as u64
                    }
                    _ => dtype.size as u64,
                };
                normalize_chunks(obj.get("chunks"), &shape, item_size)?
            }
        };
        if shape.len() != chunks.len() {
            return Err(Error::InvalidMetadata(format!(
                "shape has {} dimensions but chunks has {}",
                shape.len(),
                chunks.len()
            )));
        }
        let compressor = match field("compressor", Value::Null)? {
            Value::Null => None,
            v @ Value::Object(_) => Some(v),
            v => {
                return Err(Error::InvalidMetadata(format!(
                    "compressor must be an object or null, got {v}"
                )))
            }
        };
        // zarr-python 2 stores a pickle array's fill value pickled: an unpickled "" is no value.
        let pickled = obj
            .get("filters")
            .and_then(|f| f.get(0))
            .and_then(|f| f.get("id"))
            == Some(&json!("pickle"));
        let default_fill = match pickled {
            true => Value::Null,
            false => FillValue::default_json(&dtype),
        };
        let fill_value = FillValue::parse(&field("fill_value", default_fill)?, &dtype)?;
        let order_value = field("order", json!("C"))?;
        let order = match order_value.as_str() {
            Some("C") => Order::C,
            Some("F") => Order::F,
            _ => {
                return Err(Error::InvalidMetadata(format!(
                    "order must be \"C\" or \"F\", got {order_value}"
                )))
            }
        };
        let filters = match field("filters", Value::Null)? {
            Value::Null => None,
            Value::Array(list) if list.iter().all(Value::is_object) => Some(list),
            v => {
                return Err(Error::InvalidMetadata(format!(
                    "filters must be a list of objects or null, got {v}"
                )))
            }
        };
        let separator = match obj.get("dimension_separator") {
            None | Some(Value::Null) => None,
            Some(v) if v == "." => Some('.'),
            Some(v) if v == "/" => Some('/'),
            Some(v) => {
                return Err(Error::InvalidMetadata(format!(
                    "dimension_separator must be \".\" or \"/\", got {v}"
                )))
            }
        };
        let mut chunk_keys = ChunkKeyEncoding::v2(separator.unwrap_or('.'));
        // A new array states its separator; a stored document may not.
        chunk_keys.unstated = separator.is_none() && chunks.len() > 1 && !defaults;
        Ok(ArrayMetadata {
            shape,
            grid: ChunkGrid::regular(&chunks),
            dtype,
            fill_value,
            chunk_keys,
            format: FormatMetadata::V2 {
                compressor,
                filters,
                order,
            },
        })
    }

    /// The `.zarray` document of a v2 array's metadata, with every key zarr-python writes
    /// (`None` for v3 metadata); `dimension_separator` only where the metadata states it.
    pub fn to_zarray(&self) -> Option<Value> {
        let FormatMetadata::V2 {
            compressor,
            filters,
            order,
        } = &self.format
        else {
            return None;
        };
        let mut zarray = json!({
            "zarr_format": 2,
            "shape": self.shape,
            "chunks": self.grid.regular_shape(),
            "dtype": self.dtype.to_json(),
            "compressor": compressor,
            "fill_value": self.fill_value.to_json(&self.dtype),
            "order": match order { Order::C => "C", Order::F => "F" },
            "filters": filters,
        });
        if !self.chunk_keys.unstated {
            zarray["dimension_separator"] = self.chunk_keys.separator.to_string().into();
        }
        Some(zarray)
    }
}

/// Reads a list of dimension lengths, each at least `min`.
fn dims(obj: &Map<String, Value>, name: &str, min: u64) -> Result<Vec<u64>> {
    let value = obj
        .get(name)
        .ok_or_else(|| Error::InvalidMetadata(format!("missing required key \"{name}\"")))?;
    let list = value.as_array().ok_or_else(|| {
        Error::InvalidMetadata(format!("{name} must be a list of integers, got {value}"))
    })?;
    list.iter()
        .map(|v| match v.as_u64() {
            Some(n) if n >= min => Ok(n),
            _ => Err(Error::InvalidMetadata(format!(
                "{name} must hold integers >= {min}, got {value}"
            ))),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zarr_python_doc() -> Value {
        json!({
            "chunks": [10, 10], "compressor": {"id": "zlib", "level": 1}, "dtype": "<f8",
            "fill_value": "NaN", "filters": null, "order": "F", "shape": [100, 95],
            "zarr_format": 2, "dimension_separator": "/", "something_new": 1
        })
    }

    #[test]
    fn parses_what_zarr_python_writes() {
        let m = ArrayMetadata::parse(&zarr_python_doc(), "a/.zarray").unwrap();
        assert_eq!(m.shape, vec![100, 95]);
        assert!(matches!(
            m.format,
            FormatMetadata::V2 {
                order: Order::F,
                ..
            }
        ));
        assert_eq!(m.chunk_keys, ChunkKeyEncoding::v2('/'));
        let mut expected = zarr_python_doc();
        expected.as_object_mut().unwrap().remove("something_new");
        assert_eq!(m.to_zarray().unwrap(), expected);
    }

    #[test]
    fn creation_refuses_time_types_without_a_unit_but_reading_keeps_them() {
        for (dtype, named) in [
            (json!("<M8"), "<M8"),
            (json!(">m8"), ">m8"),
            (json!([["a", "<i4"], ["t", [["u", "<m8", [2]]]]]), "<m8"),
        ] {
            let doc = json!({"shape": [4], "chunks": [2], "dtype": dtype});
            let err = ArrayMetadata::parse_for_create(&doc).unwrap_err();
            assert!(
                matches!(err, Error::InvalidMetadata(ref m) if m.contains(&format!("dtype {named}:")) && m.contains("unit")),
                "{err}"
            );
            // zarr-python writes them: a stored .zarray of one is read.
            let mut stored = zarr_python_doc();
            stored["dtype"] = dtype.clone();
            stored["fill_value"] = Value::Null;
            stored["shape"] = json!([4]);
            stored["chunks"] = json!([2]);
            assert!(
                ArrayMetadata::parse(&stored, "a/.zarray").is_ok(),
                "{dtype}"
            );
        }
        for dtype in ["<M8[ns]", "<m8[10s]", "<i8"] {
            let doc = json!({"shape": [4], "chunks": [2], "dtype": dtype});
            assert!(ArrayMetadata::parse_for_create(&doc).is_ok(), "{dtype}");
        }
    }

    #[test]
    fn creation_fills_in_defaults() {
        let m =
            ArrayMetadata::parse_for_create(&json!({"shape": [4], "chunks": [2], "dtype": "<i4"}))
                .unwrap();
        assert_eq!(m.to_zarray().unwrap()["fill_value"], json!(0));
        assert_eq!(m.to_zarray().unwrap()["order"], json!("C"));
        assert!(matches!(
            m.format,
            FormatMetadata::V2 {
                compressor: None,
                ..
            }
        ));
        assert!(
            ArrayMetadata::parse(&json!({"shape": [4], "chunks": [2], "dtype": "<i4"}), "k")
                .is_err()
        );
    }

    #[test]
    fn refuses_inconsistent_documents() {
        let base = zarr_python_doc();
        for (key, value) in [
            ("zarr_format", json!(3)),
            ("shape", json!([10])),
            ("shape", json!([-1, 2])),
            ("chunks", json!([0, 10])),
            ("chunks", json!("10")),
            ("dtype", json!("<q8")),
            ("order", json!("X")),
            ("filters", json!(5)),
            ("compressor", json!("zlib")),
            ("dimension_separator", json!("-")),
            ("fill_value", json!("nope")),
        ] {
            let mut doc = base.clone();
            doc[key] = value;
            let err = ArrayMetadata::parse(&doc, "x/.zarray").unwrap_err();
            assert!(err.to_string().contains("x/.zarray"), "{err}");
        }
        let mut doc = base.clone();
        doc.as_object_mut().unwrap().remove("fill_value");
        let err = ArrayMetadata::parse(&doc, "k").unwrap_err();
        assert!(err.to_string().contains("fill_value"), "{err}");
    }
}
