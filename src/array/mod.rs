//! An array: metadata + store + codec pipeline. Turns a box selection into per-chunk work.

use crate::codec::ChunkCodecs;
use crate::dtype::ObjectCodec;
use crate::error::{Error, Result};
use crate::hierarchy::{self, CreateMode};
use crate::metadata::{
    self, ArrayMetadata, FormatMetadata, JsonDocument, Order, ZARRAY, ZARR_JSON,
};
use crate::path;
use crate::store::StoreHandle;
use crate::strided::ElementCopy;
use chunk_form::{ChunkForm, ChunkForms};
use serde_json::Value;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};

mod block_reads;
mod buffer;
mod chunk_cache;
mod chunk_form;
mod chunk_io;
mod chunk_keys;
mod digest;
mod edit;
mod info;
mod orthogonal_io;
mod points_io;
mod resize;
mod selected;
mod shard_index_cache;
mod shard_io;
mod view;
mod vlen_io;

pub use chunk_cache::{ChunkCacheStats, ENTRY_OVERHEAD};
pub use orthogonal_io::box_selection;

/// An open array, Zarr v2 or v3. Safe to share between threads: reads and writes take `&self`.
#[derive(Debug)]
pub struct Array {
    store: Arc<StoreHandle>,
    path: String,
    /// The metadata as opened; its `shape` is the shape at open (see [`Array::shape`]).
    metadata: ArrayMetadata,
    /// The current shape: resizing changes it, so every operation takes a snapshot.
    shape: RwLock<Vec<u64>>,
    /// Serialises resizes through this handle.
    resizing: Mutex<()>,
    /// The dimensions of a decoded chunk from slowest- to fastest-varying in memory.
    layout: Vec<usize>,
    /// The grid of the chunks reads and writes work in (the array's, or for a sharded array
    /// the inner chunks of its shards) and the form of each chunk. A resize that lengthens a
    /// rectilinear grid replaces it before the shape, so the grid read after the shape covers it.
    forms: RwLock<Arc<ChunkForms>>,
    /// Whether the array is sharded (`forms` then says how its shards hold its chunks).
    sharded: bool,
    /// One element of the fill value in native byte order (zeros for a `null` fill value).
    fill_native: Vec<u8>,
    /// The same element in the stored byte order.
    fill_stored: Vec<u8>,
    /// How whole elements move between chunks (stored order) and callers (native order).
    element: ElementCopy,
    /// Whether chunks holding only the fill value are stored (`true`) or erased (`false`).
    write_empty_chunks: AtomicBool,
    /// Whether the items of a `json2`/`msgpack2` array pass as JSON text (else as strings).
    json_items: AtomicBool,
    /// The object codec of an object (`|O`) array.
    object: Option<ObjectCodec>,
    /// Decoded chunks kept in memory by this handle (off unless the caller sets a budget).
    chunk_cache: chunk_cache::ChunkCache,
    /// Shard indexes this handle read, for sharded arrays in local files.
    shard_indexes: shard_index_cache::ShardIndexCache,
    /// Whether this handle refuses writes whatever its store allows (a read-only view).
    read_only: bool,
    /// Whether this handle is a view: metadata that only it holds, so never resized.
    is_view: bool,
    /// The separator of the chunk keys, where the metadata does not state it.
    key_separator: chunk_keys::KeySeparator,
}

impl Array {
    /// Creates an array at `path` from a JSON document, creating ancestor groups (in the
    /// array's format) as needed. A document that says `"zarr_format": 3` is a v3 `zarr.json`
    /// (see [`ArrayMetadata::complete_v3_for_create`]); any other a `.zarray`-style one (see
    /// [`ArrayMetadata::parse_for_create`]).
    pub fn create(store: Arc<StoreHandle>, path: &str, json: &str) -> Result<Array> {
        Self::create_with_mode(store, path, json, CreateMode::New)
    }

    /// [`Array::create`], treating what is already at `path` as `mode` says: with
    /// [`CreateMode::Open`] an existing array of the shape and data type the document gives is
    /// opened (any other array, or a group, is [`Error::AlreadyExists`] saying what differs).
    /// The document is checked in full before anything is removed or written.
    pub fn create_with_mode(
        store: Arc<StoreHandle>,
        path: &str,
        json: &str,
        mode: CreateMode,
    ) -> Result<Array> {
        let path = path::normalize(path)?;
        store.check_writable(&path::join(&path, ZARR_JSON))?;
        let doc: Value = serde_json::from_str(json).map_err(|e| {
            Error::InvalidMetadata(format!("array metadata is not valid JSON: {e}"))
        })?;
        let n5 = store.capabilities().n5;
        let (key, document) = if doc.get("zarr_format") == Some(&Value::from(3)) {
            path::check_v3_node_names(&path)?;
            if n5 {
                return Err(Error::Unsupported(format!(
                    "a Zarr v3 array in the N5 container {:?}",
                    store.location()
                )));
            }
            let mut document = ArrayMetadata::complete_v3_for_create(&doc)?;
            // Validate, then store the codecs completed as zarr-python writes them.
            let meta = ArrayMetadata::parse_v3(&document, "array metadata")?;
            let FormatMetadata::V3 { codecs, object, .. } = &meta.format else {
                unreachable!("parse_v3 gives v3 metadata")
            };
            let chain = ChunkCodecs::v3(codecs, &meta.dtype, *object, &meta.grid.max_chunk_shape())
                .map_err(|e| e.context("array metadata"))?;
            document.set("codecs", &Value::Array(chain.canonical));
            (path::join(&path, ZARR_JSON), document)
        } else {
            let mut meta = ArrayMetadata::parse_for_create(&doc)?;
            // Store the codecs' full configurations, defaults included, as numcodecs would.
            if let FormatMetadata::V2 {
                compressor,
                filters,
                order,
            } = &mut meta.format
            {
                let chain = ChunkCodecs::v2(
                    filters.as_deref(),
                    compressor.as_ref(),
                    *order == Order::F,
                    &meta.dtype,
                    &meta.grid.max_chunk_shape(),
                )?;
                *compressor = chain.pipeline.compressor_config();
                let all: Vec<Value> = chain
                    .object
                    .iter()
                    .map(ObjectCodec::config)
                    .chain(chain.pipeline.filter_configs().unwrap_or_default())
                    .collect();
                *filters = (!all.is_empty()).then_some(all);
            }
            let mut zarray = meta.to_zarray().expect("v2 metadata");
            if n5 {
                // Chunks framed as N5 blocks, exactly as the handle will read them back.
                zarray = metadata::n5::zarray_for_create(&zarray)?;
            }
            (path::join(&path, ZARRAY), JsonDocument::from_value(&zarray))
        };
        // The array is built (every check made) before anything is written.
        let (format, meta) = if key.ends_with(ZARR_JSON) {
            (3, ArrayMetadata::parse_v3(&document, "array metadata")?)
        } else {
            let value = metadata::parse_document(&document.render(), "array metadata")?;
            (2, ArrayMetadata::parse(&value, "array metadata")?)
        };
        let array =
            Self::from_metadata(store, path, meta).map_err(|e| e.context("array metadata"))?;
        match mode {
            CreateMode::New => hierarchy::require_vacant(&array.store, &array.path)?,
            CreateMode::Overwrite => hierarchy::clear_for_overwrite(&array.store, &array.path)?,
            CreateMode::Open => {
                if hierarchy::node_kind(&array.store, &array.path)? == hierarchy::NodeKind::Array {
                    return array.open_existing_like();
                }
                hierarchy::require_vacant(&array.store, &array.path)?;
            }
        }
        hierarchy::create_ancestor_groups(&array.store, &array.path, format)?;
        hierarchy::write_document(&array.store, &key, &document)?;
        Ok(array)
    }

    /// The array stored where this one (built, not written) would go, if it has this one's
    /// shape and data type; else [`Error::AlreadyExists`] saying what differs.
    fn open_existing_like(&self) -> Result<Array> {
        let existing = Array::open(self.store.clone(), &self.path)?;
        let (old, new) = (existing.metadata(), self.metadata());
        if old.shape == new.shape && old.dtype == new.dtype {
            return Ok(existing);
        }
        Err(Error::AlreadyExists(format!(
            "an array exists at path {:?} with shape {:?} and data type {}, not the shape {:?} and data type {} asked for",
            self.path,
            old.shape,
            old.dtype.typestr(),
            new.shape,
            new.dtype.typestr()
        )))
    }

    /// Opens the array at `path`, v2 or v3 ([`hierarchy::node`] tells); [`Error::NotFound`]
    /// when nothing is there, [`Error::WrongNodeType`] naming the group's document when a
    /// group is.
    pub fn open(store: Arc<StoreHandle>, path: &str) -> Result<Array> {
        let path = path::normalize(path)?;
        let Some(stored) = hierarchy::read_array_metadata(&store, &path)? else {
            let found = hierarchy::node(&store, &path)?;
            return Err(match found.kind {
                hierarchy::NodeKind::Group => Error::WrongNodeType(format!(
                    "path {path:?} holds a group ({:?}), not an array",
                    found.key
                )),
                _ => Error::NotFound(format!("no array at path {path:?} (found nothing)")),
            });
        };
        let key = stored.key;
        Self::from_metadata(store, path, stored.metadata).map_err(|e| e.context(&key))
    }

    /// Opens the array at `path` from its metadata document `document` (`.zarray` or
    /// `zarr.json`, as [`Array::metadata_json`] gives it) without reading it from the store:
    /// for many handles on one array whose document was read once (zarr_mpi's ranks). The
    /// document is checked as an open checks it; that it is what the store holds is the
    /// caller's word.
    pub fn open_document(store: Arc<StoreHandle>, path: &str, document: &str) -> Result<Array> {
        let path = path::normalize(path)?;
        let stored = hierarchy::given_array_metadata(&path, document)?;
        let key = stored.key;
        Self::from_metadata(store, path, stored.metadata).map_err(|e| e.context(&key))
    }

    fn from_metadata(
        store: Arc<StoreHandle>,
        path: String,
        mut metadata: ArrayMetadata,
    ) -> Result<Array> {
        let grid_chunks = metadata.grid.regular_shape().map(<[u64]>::to_vec);
        let first_shape = grid_chunks
            .clone()
            .unwrap_or_else(|| metadata.grid.max_chunk_shape());
        let stated_dtype = metadata.dtype.clone();
        let metadata_states_separator = !metadata.chunk_keys.unstated;
        let codecs = match &metadata.format {
            FormatMetadata::V2 {
                compressor,
                filters,
                order,
            } => ChunkCodecs::v2(
                filters.as_deref(),
                compressor.as_ref(),
                *order == Order::F,
                &metadata.dtype,
                &first_shape,
            )?,
            FormatMetadata::V3 { codecs, object, .. } => {
                ChunkCodecs::v3(codecs, &metadata.dtype, *object, &first_shape)?
            }
        };
        if let Some(order) = codecs.byte_order {
            metadata.dtype = metadata.dtype.with_byte_order(order);
        }
        codecs
            .check_fill_through_sharding(&metadata.fill_value.bytes_or_zero(metadata.dtype.size))?;
        let (codecs, sharding) = shard_io::ShardLayout::split(codecs, &metadata.grid)?;
        let item_size = metadata.dtype.size;
        let sharded = sharding.is_some();
        let forms = match (sharding, &metadata.format, grid_chunks) {
            (Some(s), ..) => {
                let shape = s.chunk_shape().to_vec();
                ChunkForms::regular(
                    metadata::ChunkGrid::regular(&shape),
                    ChunkForm::new(shape, item_size, &codecs.layout, codecs.pipeline)?,
                    Some(s),
                )
            }
            (None, _, Some(shape)) => ChunkForms::regular(
                metadata.grid.clone(),
                ChunkForm::new(shape, item_size, &codecs.layout, codecs.pipeline)?,
                None,
            ),
            (
                None,
                FormatMetadata::V3 {
                    codecs: list,
                    object,
                    ..
                },
                None,
            ) => ChunkForms::rectilinear(
                metadata.grid.clone(),
                list,
                &stated_dtype,
                *object,
                &codecs.layout,
            )?,
            (None, FormatMetadata::V2 { .. }, None) => unreachable!("v2 grids are regular"),
        };
        let fill_native = metadata.fill_value.bytes_or_zero(item_size);
        let swap = metadata.dtype.byte_swap();
        let mut fill_stored = fill_native.clone();
        swap.apply(&mut fill_stored);
        Ok(Array {
            store,
            path,
            shape: RwLock::new(metadata.shape.clone()),
            resizing: Mutex::new(()),
            metadata,
            layout: codecs.layout,
            forms: RwLock::new(Arc::new(forms)),
            sharded,
            fill_native,
            fill_stored,
            element: ElementCopy::whole(item_size, swap),
            write_empty_chunks: AtomicBool::new(false),
            json_items: AtomicBool::new(false),
            object: codecs.object,
            chunk_cache: Default::default(),
            shard_indexes: Default::default(),
            read_only: false,
            is_view: false,
            key_separator: chunk_keys::KeySeparator::new(metadata_states_separator),
        })
    }

    /// The array's metadata as opened: everything but the shape and a rectilinear grid (which
    /// a resize lengthens) stays true for the handle's life; the current ones are
    /// [`Array::shape`] and [`Array::chunk_grid`].
    pub fn metadata(&self) -> &ArrayMetadata {
        &self.metadata
    }

    /// The current shape (a snapshot: [`Array::resize`] may change it).
    pub fn shape(&self) -> Vec<u64> {
        self.shape
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// Number of dimensions.
    pub fn ndim(&self) -> usize {
        self.metadata.grid.ndim()
    }

    /// The metadata document with the current shape and chunk grid: for v2 the `.zarray` document as libzarr
    /// understands it (all keys, sorted; canonical values; `dimension_separator` where the
    /// document states it or this handle found the chunks' separator), for v3 the `zarr.json` as stored,
    /// with the attributes stored now (the handle keeps the document it was opened with, and
    /// attribute writes, its own included, change that member).
    pub fn metadata_json(&self) -> Result<Value> {
        let mut doc = self.opened_metadata_json();
        if self.zarr_format() == 3 {
            let attributes = metadata::python_constants_masked(&self.attributes()?);
            let attributes: Value = serde_json::from_str(&attributes).unwrap_or_default();
            // A document without the member (as tensorstore writes it) keeps going without,
            // unless attributes were written since.
            let empty = attributes.as_object().is_some_and(|a| a.is_empty());
            if doc.get("attributes").is_some() || !empty {
                doc["attributes"] = attributes;
            }
        }
        Ok(doc)
    }

    /// The metadata document as [`Array::metadata_json`] gives it, but with the attributes of
    /// the document this handle was opened with: nothing is read from the store (for handing
    /// the document to [`Array::open_document`] elsewhere).
    pub fn opened_metadata_json(&self) -> Value {
        let shape = self.shape();
        let mut doc = self.metadata.document_json(&shape, &self.chunk_grid());
        if let (true, Some(separator)) = (
            self.metadata.chunk_keys.unstated,
            self.chunk_key_separator(),
        ) {
            doc["dimension_separator"] = separator.to_string().into();
            doc = metadata::sort_keys(&doc);
        }
        doc
    }

    /// The v2 compressor configuration (`null` when there is none); a v3 array has a codec
    /// list instead: [`Error::Unsupported`].
    pub fn compressor_json(&self) -> Result<Value> {
        self.v2_member("compressor")
    }

    /// The v2 filter configurations (`null` when there are none); a v3 array:
    /// [`Error::Unsupported`], as for the compressor.
    pub fn filters_json(&self) -> Result<Value> {
        self.v2_member("filters")
    }

    /// A member of a v2 array's `.zarray`; v3 arrays have none of the v2-only members.
    fn v2_member(&self, name: &str) -> Result<Value> {
        match self.zarr_format() {
            2 => Ok(self.metadata_json()?[name].take()),
            _ => Err(Error::Unsupported(format!(
                "array {:?} is Zarr v3: it has no {name}, its codecs are in its metadata document",
                self.path()
            ))),
        }
    }

    /// 2 or 3.
    pub fn zarr_format(&self) -> u8 {
        self.metadata.zarr_format()
    }

    /// The element order of decoded chunks: C, F (v2 `order`, or a v3 `transpose` that
    /// reverses the dimensions), or `None` for another v3 permutation.
    pub fn chunk_order(&self) -> Option<Order> {
        if let FormatMetadata::V2 { order, .. } = self.metadata.format {
            return Some(order);
        }
        let n = self.layout.len();
        if self.layout.iter().enumerate().all(|(i, &d)| i == d) {
            Some(Order::C)
        } else if self.layout.iter().enumerate().all(|(i, &d)| d == n - 1 - i) {
            Some(Order::F)
        } else {
            None
        }
    }

    /// The name of the array's metadata document: `.zarray` or `zarr.json`.
    fn metadata_key(&self) -> &'static str {
        match self.zarr_format() {
            3 => ZARR_JSON,
            _ => ZARRAY,
        }
    }

    /// The shape of the chunks reads and writes work in: the grid's chunks, or for a sharded
    /// array the inner chunks of its shards; `None` for a rectilinear grid of chunks of unequal
    /// lengths.
    pub fn inner_chunks(&self) -> Option<Vec<u64>> {
        self.forms().grid().regular_shape().map(<[u64]>::to_vec)
    }

    /// The array's chunk grid now (a resize lengthens a rectilinear one): for a sharded array,
    /// the grid of its shards.
    pub fn chunk_grid(&self) -> metadata::ChunkGrid {
        self.forms().array_grid().clone()
    }

    /// The grid and forms of the chunks the engine works in (read after [`Array::shape`], it
    /// covers that shape).
    fn forms(&self) -> Arc<ChunkForms> {
        self.forms
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// The form of the chunk the engine works in at grid position `coords`.
    fn form(&self, coords: &[u64]) -> Result<Arc<ChunkForm>> {
        self.forms().of(coords)
    }

    /// The dimension names: a v3 array's `dimension_names`; for a v2 array xarray's
    /// `_ARRAY_DIMENSIONS` attribute, else netCDF-C's NCZarr dimension references (the last
    /// segment of each: `/g/lat` names `lat`), from `_nczarr_array` in the attributes
    /// (netCDF-C 4.9.3 and later) or in `.zarray` (also `_NCZARR_ARRAY`, as 4.8 wrote it),
    /// each a list of one string per dimension; `None` when the array names none.
    pub fn dimension_names(&self) -> Result<Option<Vec<Option<String>>>> {
        if self.metadata.zarr_format() == 3 {
            return Ok(self.metadata.dimension_names().map(<[_]>::to_vec));
        }
        let parse = |text: &str| -> Value {
            serde_json::from_str(&metadata::python_constants_masked(text)).unwrap_or_default()
        };
        let attrs = parse(&self.attributes()?);
        let names = |list: Option<&Value>, last_segment: bool| -> Option<Vec<Option<String>>> {
            let list = list?.as_array().filter(|l| l.len() == self.ndim())?;
            list.iter()
                .map(|n| {
                    let name = n.as_str()?;
                    let name = match last_segment {
                        true => name.rsplit('/').next().filter(|s| !s.is_empty())?,
                        false => name,
                    };
                    Some(Some(name.to_string()))
                })
                .collect()
        };
        if let Some(found) = names(attrs.get("_ARRAY_DIMENSIONS"), false) {
            return Ok(Some(found));
        }
        let nczarr_names = |member: Option<&Value>| {
            let member = member?;
            names(member.get("dimension_references"), true)
                .or_else(|| names(member.get("dimrefs"), true))
        };
        if let Some(found) = nczarr_names(attrs.get("_nczarr_array")) {
            return Ok(Some(found));
        }
        let key = path::join(&self.path, ZARRAY);
        let zarray = match self.store.node_document(&key)? {
            Some(bytes) => parse(&String::from_utf8_lossy(&bytes)),
            None => Value::Null,
        };
        Ok(nczarr_names(zarray.get("_nczarr_array"))
            .or_else(|| nczarr_names(zarray.get("_NCZARR_ARRAY"))))
    }

    /// The store the array lives in.
    pub fn store(&self) -> &Arc<StoreHandle> {
        &self.store
    }

    /// The normalised logical path.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The fill value element in native byte order (zeros for a `null` fill value).
    pub fn fill_native(&self) -> &[u8] {
        &self.fill_native
    }

    /// The user attributes (`.zattrs`) as JSON text.
    pub fn attributes(&self) -> Result<String> {
        hierarchy::attributes(&self.store, &self.path)
    }

    /// Replaces the user attributes with a JSON object.
    pub fn set_attributes(&self, json: &str) -> Result<()> {
        self.check_writable()?;
        hierarchy::set_attributes(&self.store, &self.path, json)
    }

    /// Sets the members of a JSON object in the user attributes, keeping the others.
    pub fn update_attributes(&self, json: &str) -> Result<()> {
        self.check_writable()?;
        hierarchy::update_attributes(&self.store, &self.path, json)
    }

    /// Removes one member of the user attributes ([`Error::NotFound`] when there is none).
    pub fn delete_attribute(&self, name: &str) -> Result<()> {
        self.check_writable()?;
        hierarchy::delete_attribute(&self.store, &self.path, name)
    }

    /// The object codec of an object (`|O`) array, `None` for fixed-size types.
    pub fn object_codec(&self) -> Option<&ObjectCodec> {
        self.object.as_ref()
    }

    /// Prefixes an error about a selection or buffer with the array's path.
    /// Checks that this handle may write its chunks and attributes: not a read-only view, and
    /// a store open for writing.
    /// Settles the chunk keys' separator where the metadata does not state it, so that writes
    /// add keys of the form already stored.
    fn check_writable(&self) -> Result<()> {
        if self.read_only {
            return Err(self.named(Error::ReadOnly(
                "this handle is a read-only view (zarr_array_view, zarr_array_astype)".into(),
            )));
        }
        self.store.check_writable(&self.path)?;
        self.settle_separator_for_writing()
    }

    /// Whether this handle is a view (`zarr_array_view`, `zarr_array_astype`).
    pub fn is_view(&self) -> bool {
        self.is_view
    }

    fn named(&self, err: Error) -> Error {
        err.context(format!("array {:?}", self.path))
    }

    /// Checks an orthogonal selection against the array and maps it onto its chunks.
    fn plan(
        &self,
        selection: &[crate::selection::DimSelection],
    ) -> Result<crate::selection::OrthogonalPlan> {
        let shape = self.shape();
        crate::selection::OrthogonalPlan::new(&shape, self.forms().grid(), selection)
            .map_err(|e| self.named(e))
    }

    /// Fails for object arrays, whose values have no fixed size (they have their own calls).
    fn require_fixed_size(&self) -> Result<()> {
        match self.object {
            Some(_) => Err(Error::InvalidArgument(format!(
                "array {:?} holds variable-length objects: read and write it with the vlen calls",
                self.path
            ))),
            None => Ok(()),
        }
    }

    /// Size of one element in bytes.
    pub fn item_size(&self) -> usize {
        self.metadata.dtype.size
    }

    /// Whether writes store chunks that hold only the fill value. Off by default, as in
    /// zarr-python 3: such chunks are erased instead, and read back as the fill value. Arrays
    /// whose fill value is `null` always store every chunk.
    pub fn write_empty_chunks(&self) -> bool {
        self.write_empty_chunks.load(Ordering::Relaxed)
    }

    /// Sets whether writes store chunks that hold only the fill value.
    pub fn set_write_empty_chunks(&self, write: bool) {
        self.write_empty_chunks.store(write, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::OpenMode;

    /// netCDF-C records a subgroup variable's dimensions only as NCZarr references: in
    /// `.zarray` (`_NCZARR_ARRAY` in 4.8, `_nczarr_array` in 4.9) or, from 4.9.3, in the
    /// attributes; xarray's `_ARRAY_DIMENSIONS` wins where both are given.
    #[test]
    fn dimension_names_from_nczarr_references() {
        let store = StoreHandle::open("memory:", OpenMode::Write).unwrap();
        let zarray = |extra: &str| {
            format!(
                r#"{{"zarr_format": 2, "shape": [2, 3], "chunks": [2, 3], "dtype": "<f4",
                    "compressor": null, "fill_value": null, "order": "C", "filters": null
                    {extra}}}"#
            )
        };
        let cases = [
            (
                r#", "_NCZARR_ARRAY": {"dimrefs": ["/time", "/g/lat"]}"#,
                None,
            ),
            (
                r#", "_nczarr_array": {"dimrefs": ["/time", "/g/lat"], "storage": "chunked"}"#,
                None,
            ),
            (
                "",
                Some(r#"{"_nczarr_array": {"dimension_references": ["/time", "/g/lat"]}}"#),
            ),
        ];
        for (i, (extra, attrs)) in cases.into_iter().enumerate() {
            let path = format!("g/v{i}");
            store
                .set(&format!("{path}/.zarray"), zarray(extra).as_bytes())
                .unwrap();
            if let Some(attrs) = attrs {
                store
                    .set(&format!("{path}/.zattrs"), attrs.as_bytes())
                    .unwrap();
            }
            let names = Array::open(store.clone(), &path).unwrap().dimension_names();
            let expected = vec![Some("time".to_string()), Some("lat".to_string())];
            assert_eq!(names.unwrap(), Some(expected), "{path}");
        }
        store
            .set("g/v0/.zattrs", br#"{"_ARRAY_DIMENSIONS": ["t", "y"]}"#)
            .unwrap();
        let names = Array::open(store.clone(), "g/v0")
            .unwrap()
            .dimension_names();
        assert_eq!(names.unwrap().unwrap()[1].as_deref(), Some("y"));
        let wrong_length = zarray(r#", "_nczarr_array": {"dimrefs": ["/time"]}"#);
        store.set("g/w/.zarray", wrong_length.as_bytes()).unwrap();
        let names = Array::open(store.clone(), "g/w").unwrap().dimension_names();
        assert_eq!(names.unwrap(), None);
    }

    /// An array opened from its metadata document reads and writes the chunks of one opened
    /// from the store, and the document is checked as an open checks it.
    #[test]
    fn opens_from_a_given_document() {
        let store = StoreHandle::open("memory:", OpenMode::Write).unwrap();
        let v2 = r#"{"shape": [4], "chunks": [2], "dtype": "<i2", "compressor": {"id": "zlib"}}"#;
        let v3 = r#"{"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "int16",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": [{"name": "bytes"}]}"#;
        for (path, doc) in [("a", v2), ("b", v3)] {
            let stored = Array::create(store.clone(), path, doc).unwrap();
            let document = stored.metadata_json().unwrap().to_string();
            let given = Array::open_document(store.clone(), path, &document).unwrap();
            let values: Vec<u8> = [1i16, -2, 3, -4]
                .iter()
                .flat_map(|v| v.to_ne_bytes())
                .collect();
            given.write_region(&[0], &[4], &values).unwrap();
            let mut back = vec![0; 8];
            stored.read_region(&[0], &[4], &mut back).unwrap();
            assert_eq!(back, values, "{path}");
            assert_eq!(
                given.metadata_json().unwrap(),
                stored.metadata_json().unwrap()
            );
        }
        let group = r#"{"zarr_format": 3, "node_type": "group"}"#;
        assert!(matches!(
            Array::open_document(store.clone(), "g", group),
            Err(Error::WrongNodeType(_))
        ));
        for bad in [
            "{",
            r#"{"shape": [4]}"#,
            r#"{"shape": [4], "chunks": [2], "dtype": "<q9", "compressor": null, "fill_value": 0, "filters": null, "order": "C", "zarr_format": 2}"#,
        ] {
            let err = Array::open_document(store.clone(), "c", bad).unwrap_err();
            assert!(matches!(err, Error::InvalidMetadata(_)), "{bad}: {err}");
        }
    }
}
