//! An array: metadata + store + codec pipeline. Turns a box selection into per-chunk work.

use crate::codec::CodecPipeline;
use crate::dtype::{DataType, DataTypeKind, ObjectCodec};
use crate::error::{Error, Result};
use crate::hierarchy;
use crate::metadata::{self, ArrayMetadata, Order, ZARRAY};
use crate::path;
use crate::store::StoreHandle;
use crate::strided::{dense_strides, is_c_contiguous, ElementCopy};
use serde_json::Value;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};

mod buffer;
mod chunk_cache;
mod chunk_io;
mod info;
mod orthogonal_io;
mod points_io;
mod resize;
mod vlen_io;

pub use chunk_cache::{ChunkCacheStats, ENTRY_OVERHEAD};
pub use orthogonal_io::box_selection;

/// An open Zarr v2 array. Safe to share between threads: reads and writes take `&self`.
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
    /// The filters (after any object codec) and the compressor.
    pipeline: CodecPipeline,
    /// One element of the fill value in native byte order (zeros for a `null` fill value).
    fill_native: Vec<u8>,
    /// The same element in the stored byte order.
    fill_stored: Vec<u8>,
    /// Bytes of one decoded chunk.
    chunk_nbytes: usize,
    /// Byte strides of a decoded chunk along each dimension (C or F order).
    chunk_strides: Vec<usize>,
    /// Whether decoded chunks are laid out in C order.
    chunk_is_c_order: bool,
    /// How whole elements move between chunks (stored order) and callers (native order).
    element: ElementCopy,
    /// Whether chunks holding only the fill value are stored (`true`) or erased (`false`).
    write_empty_chunks: AtomicBool,
    /// The object codec of an object (`|O`) array.
    object: Option<ObjectCodec>,
    /// Decoded chunks kept in memory by this handle (off unless the caller sets a budget).
    chunk_cache: chunk_cache::ChunkCache,
}

impl Array {
    /// Creates an array at `path` from a `.zarray`-style JSON document (see
    /// [`ArrayMetadata::parse_for_create`]), creating ancestor groups as needed.
    pub fn create(store: Arc<StoreHandle>, path: &str, zarray_json: &str) -> Result<Array> {
        let path = path::normalize(path)?;
        let key = path::join(&path, ZARRAY);
        store.check_writable(&key)?;
        let doc: Value = serde_json::from_str(zarray_json).map_err(|e| {
            Error::InvalidMetadata(format!("array metadata is not valid JSON: {e}"))
        })?;
        let mut array = Self::from_metadata(store, path, ArrayMetadata::parse_for_create(&doc)?)?;
        // Store the codecs' full configurations, defaults included, as numcodecs would.
        array.metadata.compressor = array.pipeline.compressor_config();
        let filters: Vec<Value> = array
            .object
            .iter()
            .map(ObjectCodec::config)
            .chain(array.pipeline.filter_configs().unwrap_or_default())
            .collect();
        array.metadata.filters = (!filters.is_empty()).then_some(filters);
        hierarchy::require_vacant(&array.store, &array.path)?;
        hierarchy::create_ancestor_groups(&array.store, &array.path)?;
        array
            .store
            .set(&key, &metadata::to_document(&array.metadata.to_value()))?;
        Ok(array)
    }

    /// Opens the array at `path`; [`Error::NotFound`] when there is no `.zarray`.
    pub fn open(store: Arc<StoreHandle>, path: &str) -> Result<Array> {
        let path = path::normalize(path)?;
        let key = path::join(&path, ZARRAY);
        let Some((_, meta)) = hierarchy::read_array_metadata(&store, &path)? else {
            let what = match hierarchy::node_kind(&store, &path)? {
                hierarchy::NodeKind::Group => "a group, not an array",
                _ => "nothing",
            };
            return Err(Error::NotFound(format!(
                "no array at path {path:?} (found {what})"
            )));
        };
        Self::from_metadata(store, path, meta).map_err(|e| e.context(&key))
    }

    fn from_metadata(
        store: Arc<StoreHandle>,
        path: String,
        metadata: ArrayMetadata,
    ) -> Result<Array> {
        let filters = metadata.filters.as_deref().unwrap_or_default();
        let object = match filters.first().map(ObjectCodec::from_config).transpose()?.flatten() {
            Some(_) if metadata.dtype.kind != DataTypeKind::Object => {
                return Err(Error::InvalidMetadata(format!(
                    "object codec {} on an array of {}",
                    filters[0],
                    metadata.dtype.typestr()
                )))
            }
            None if metadata.dtype.kind == DataTypeKind::Object => {
                return Err(Error::InvalidMetadata(
                    "an object (|O) array needs an object codec (vlen-utf8, vlen-bytes, vlen-array) as its first filter".into(),
                ))
            }
            codec => codec,
        };
        let item_size = metadata.dtype.size;
        // An object codec turns items into plain bytes; later filters and the compressor see those.
        let (rest, stage_dtype) = match object {
            Some(_) => (&filters[1..], DataType::parse_typestr("|u1")?),
            None => (filters, metadata.dtype.clone()),
        };
        let pipeline = CodecPipeline::new(Some(rest), metadata.compressor.as_ref(), &stage_dtype)?;
        let chunk_nbytes = metadata
            .chunks
            .iter()
            .try_fold(item_size as u64, |acc, &c| acc.checked_mul(c))
            .and_then(|n| usize::try_from(n).ok())
            .filter(|&n| n <= isize::MAX as usize)
            .ok_or_else(|| {
                Error::Overflow(format!(
                    "chunks {:?} of {item_size}-byte items are too large",
                    metadata.chunks
                ))
            })?;
        let fill_native = metadata.fill_value.bytes_or_zero(item_size);
        let swap = metadata.dtype.byte_swap();
        let mut fill_stored = fill_native.clone();
        swap.apply(&mut fill_stored);
        let chunk_strides = dense_strides(&metadata.chunks, item_size, metadata.order == Order::F);
        let chunk_is_c_order = is_c_contiguous(&metadata.chunks, &chunk_strides, item_size);
        Ok(Array {
            store,
            path,
            shape: RwLock::new(metadata.shape.clone()),
            resizing: Mutex::new(()),
            metadata,
            pipeline,
            fill_native,
            fill_stored,
            chunk_nbytes,
            chunk_strides,
            chunk_is_c_order,
            element: ElementCopy::whole(item_size, swap),
            write_empty_chunks: AtomicBool::new(false),
            object,
            chunk_cache: Default::default(),
        })
    }

    /// The array's metadata as opened: everything but the shape stays true for the handle's
    /// life; the current shape is [`Array::shape`].
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
        self.metadata.chunks.len()
    }

    /// The `.zarray` document as libzarr understands it (all keys, sorted; canonical values;
    /// the current shape).
    pub fn metadata_json(&self) -> Value {
        let mut doc = self.metadata.to_value();
        doc["shape"] = self.shape().into();
        metadata::sort_keys(&doc)
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
        hierarchy::set_attributes(&self.store, &self.path, json)
    }

    /// The store key of the chunk at grid position `coords` (`"0"` for a 0-d array).
    pub fn chunk_key(&self, coords: &[u64]) -> String {
        let sep = self.metadata.dimension_separator.as_char().to_string();
        let name = if coords.is_empty() {
            "0".to_string()
        } else {
            coords
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(&sep)
        };
        path::join(&self.path, &name)
    }

    /// The object codec of an object (`|O`) array, `None` for fixed-size types.
    pub fn object_codec(&self) -> Option<&ObjectCodec> {
        self.object.as_ref()
    }

    /// Prefixes an error about a selection or buffer with the array's path.
    fn named(&self, err: Error) -> Error {
        err.context(format!("array {:?}", self.path))
    }

    /// Checks an orthogonal selection against the array and maps it onto its chunks.
    fn plan(
        &self,
        selection: &[crate::selection::DimSelection],
    ) -> Result<crate::selection::OrthogonalPlan> {
        crate::selection::OrthogonalPlan::new(&self.shape(), &self.metadata.chunks, selection)
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
