//! Views of an array, as zarr-python 2's `Array.view` and `Array.astype`: the stored chunks
//! read (and, unless read-only, written) through other metadata that only the handle holds.
//! Nothing is written to the store's metadata.

use super::edit::reparse;
use super::Array;
use crate::codec::filter_from_config;
use crate::dtype::{v3, ByteOrder, DataType, FillValue};
use crate::error::{Error, Result};
use crate::metadata::{FormatMetadata, JsonDocument};
use crate::path;
use serde_json::{json, Map, Value};

/// What a view of a v2 array may change (zarr-python 2's `view` arguments).
const V2_VIEW_KEYS: [&str; 5] = ["shape", "chunks", "dtype", "fill_value", "filters"];
/// The same for a v3 array, in v3's names.
const V3_VIEW_KEYS: [&str; 5] = ["shape", "chunk_grid", "data_type", "fill_value", "codecs"];

impl Array {
    /// A view of this array: the members of `overrides_json` (a JSON object) replace the
    /// metadata's (v2: `shape`, `chunks`, `dtype`, `fill_value`, `filters`; v3: `shape`,
    /// `chunk_grid`, `data_type`, `fill_value`, `codecs`), and `"read_only"` (a Boolean; this
    /// handle's by default) says whether the view may write chunks. A new data type without a
    /// new fill value gets the old fill value cast to it, as NumPy casts it. The view can
    /// neither resize nor append (its metadata is not stored).
    pub fn view(&self, overrides_json: &str) -> Result<Array> {
        let mut overrides = match serde_json::from_str(overrides_json) {
            Ok(Value::Object(map)) => map,
            Ok(other) => {
                return Err(Error::InvalidArgument(format!(
                    "view overrides must be a JSON object, got {other}"
                )))
            }
            Err(e) => {
                return Err(Error::InvalidArgument(format!(
                    "view overrides are not valid JSON: {e}"
                )))
            }
        };
        let read_only = match overrides.remove("read_only") {
            None => self.read_only,
            Some(Value::Bool(b)) => b,
            Some(other) => {
                return Err(Error::InvalidArgument(format!(
                    "view \"read_only\" must be true or false, got {other}"
                )))
            }
        };
        let allowed = match self.zarr_format() {
            3 => V3_VIEW_KEYS,
            _ => V2_VIEW_KEYS,
        };
        if let Some(key) = overrides.keys().find(|k| !allowed.contains(&k.as_str())) {
            return Err(self.named(Error::InvalidArgument(format!(
                "a view of a v{} array cannot change {key:?} (only {})",
                self.zarr_format(),
                allowed.join(", ")
            ))));
        }
        self.view_with(overrides, read_only)
    }

    /// A read-only view converting the elements to `typestr` (a NumPy type string such as
    /// `"<f8"` or `"i2"`; both types numeric) as they are read, as zarr-python 2's `astype`:
    /// an `astype` filter (v3: `numcodecs.astype` codec) put before the array's own.
    pub fn astype(&self, typestr: &str) -> Result<Array> {
        let to = DataType::parse_typestr(typestr)?;
        // v2 filters see elements in the stored byte order; v3 array→array codecs see them in
        // the machine's (the `bytes` codec orders them after).
        let order = match self.zarr_format() {
            3 => ByteOrder::NATIVE,
            _ => self.metadata.dtype.order,
        };
        let in_order = |t: &DataType| match t.has_byte_order() && order != ByteOrder::NotApplicable
        {
            true => t.with_byte_order(order),
            false => t.clone(),
        };
        let (from, to) = (in_order(&self.metadata.dtype), in_order(&to));
        let astype = json!({
            "id": "astype",
            "encode_dtype": from.typestr(),
            "decode_dtype": to.typestr(),
        });
        filter_from_config(&astype, &to).map_err(|e| self.named(e.context("astype")))?;
        let mut overrides = Map::new();
        match self.zarr_format() {
            3 => {
                let FormatMetadata::V3 { codecs, .. } = &self.metadata.format else {
                    unreachable!("a v3 array has v3 metadata")
                };
                let codec = json!({
                    "name": "numcodecs.astype",
                    "configuration": {"encode_dtype": astype["encode_dtype"], "decode_dtype": astype["decode_dtype"]},
                });
                let chain = std::iter::once(codec).chain(codecs.iter().cloned());
                overrides.insert("data_type".into(), v3::to_json(&to, None)?);
                overrides.insert("codecs".into(), Value::Array(chain.collect()));
            }
            _ => {
                let filters = self.metadata_json()?["filters"].as_array().cloned();
                let chain = std::iter::once(astype).chain(filters.into_iter().flatten());
                overrides.insert("dtype".into(), to.to_json());
                overrides.insert("filters".into(), Value::Array(chain.collect()));
            }
        }
        self.view_with(overrides, true)
    }

    /// The view of this array with the metadata members `overrides`.
    fn view_with(&self, overrides: Map<String, Value>, read_only: bool) -> Result<Array> {
        let key = path::join(&self.path, self.metadata_key());
        let what = format!("view of {key:?}");
        let current = serde_json::to_vec(&self.metadata_json()?).expect("JSON renders");
        let mut document = JsonDocument::parse(&current, &key)?;
        let type_key = match self.zarr_format() {
            3 => "data_type",
            _ => "dtype",
        };
        if let Some(new_type) = overrides.get(type_key) {
            if !overrides.contains_key("fill_value") {
                if let Some(fill) = self.fill_cast_to(new_type)? {
                    document.set("fill_value", &fill);
                }
            }
        }
        for (name, value) in &overrides {
            document.set(name, value);
        }
        let metadata = reparse(&document, &self.metadata, &what)?;
        let mut view = Array::from_metadata(self.store.clone(), self.path.clone(), metadata)
            .map_err(|e| e.context(&what))?;
        view.read_only = read_only;
        view.is_view = true;
        Ok(view)
    }

    /// The fill value cast to the data type `new_type` (as the metadata document names it)
    /// when both types are numeric, as JSON; `None` when they are not (the fill value then
    /// stays as written, and must suit the new type).
    fn fill_cast_to(&self, new_type: &Value) -> Result<Option<Value>> {
        let (v3, to) = match self.zarr_format() {
            3 => (true, v3::parse_data_type(new_type)?.dtype),
            _ => (false, DataType::parse(new_type)?),
        };
        let from = &self.metadata.dtype;
        let Some(fill) = &self.metadata.fill_value.0 else {
            return Ok(None);
        };
        let astype =
            json!({"id": "astype", "encode_dtype": from.typestr(), "decode_dtype": to.typestr()});
        let Ok(cast) = filter_from_config(&astype, &to) else {
            return Ok(None);
        };
        let mut stored = fill.clone();
        from.byte_swap().apply(&mut stored);
        let mut native = cast.decode(&stored, to.size)?;
        to.byte_swap().apply(&mut native);
        let fill = FillValue(Some(native));
        Ok(Some(match v3 {
            true => fill.to_json_v3(&to),
            false => fill.to_json(&to),
        }))
    }
}
