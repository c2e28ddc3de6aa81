//! `zarr_array`: create, open, inspect, read and write arrays.

use super::boundary::{
    close_handle, give_handle, give_string, out_arg, ref_arg, run, slice_arg, slice_out, str_arg,
};
use super::group::{create_mode, zarr_create_mode, ZARR_CREATE_NEW};
use super::status::zarr_status;
use super::store::zarr_store;
use crate::array::Array;
use crate::error::{Error, Result};
use crate::metadata::Order;
use std::ffi::{c_char, c_void};

/// An open array. Safe to use from several threads at once: concurrent reads, and concurrent
/// writes to disjoint regions (even when they share chunks), are all correct.
#[allow(non_camel_case_types)]
pub struct zarr_array {
    pub(crate) inner: Array,
}

/// The element order inside chunks (`zarr_array_order`).
#[allow(non_camel_case_types)]
pub type zarr_order = i32;
/// Row-major chunks: the last dimension varies fastest.
pub const ZARR_ORDER_C: zarr_order = 0;
/// Column-major chunks: the first dimension varies fastest.
pub const ZARR_ORDER_F: zarr_order = 1;

pub(super) fn array_arg<'a>(array: *const zarr_array) -> Result<&'a Array> {
    Ok(&ref_arg(array, "array")?.inner)
}

/// Copies the array's shape or chunk shape into a caller array of `ndim` entries.
fn dims_out(
    array: *const zarr_array,
    ndim: usize,
    out: *mut u64,
    pick: fn(&Array) -> Result<Vec<u64>>,
) -> zarr_status {
    run(|| {
        let array = array_arg(array)?;
        let dims = pick(array)?;
        check_ndim(array, ndim)?;
        slice_out(out, ndim, "output dimensions")?.copy_from_slice(&dims);
        Ok(())
    })
}

/// The `start` and `count` arguments of a box over the array's `ndim` dimensions.
pub(super) fn box_args<'a>(
    array: &Array,
    ndim: usize,
    start: *const u64,
    count: *const u64,
) -> Result<(&'a [u64], &'a [u64])> {
    check_ndim(array, ndim)?;
    Ok((
        slice_arg(start, ndim, "start")?,
        slice_arg(count, ndim, "count")?,
    ))
}

pub(super) fn check_ndim(array: &Array, ndim: usize) -> Result<()> {
    let actual = array.ndim();
    if ndim != actual {
        return Err(Error::InvalidArgument(format!(
            "ndim {ndim} does not match array {:?}, which has {actual} dimensions",
            array.path()
        )));
    }
    Ok(())
}

/// Hands text about an array (JSON, a type string) to the caller through the output
/// argument `out`, named `out_name` in errors.
pub(super) fn text_out(
    array: *const zarr_array,
    out: *mut *mut c_char,
    out_name: &str,
    make: impl FnOnce(&Array) -> Result<String>,
) -> zarr_status {
    run(|| {
        let array = array_arg(array)?;
        let out = out_arg(out, out_name)?;
        give_string(out, make(array)?)
    })
}

/// Creates an array at `path` ("" is the store root) from a JSON document, in the format it
/// names. With `"zarr_format": 3` it is a Zarr v3 `zarr.json`: `shape` and `data_type` are
/// required; omitted members default as zarr-python 3 writes them (`chunk_grid` a regular
/// grid of chunks guessed as zarr-python guesses them, `chunk_key_encoding` default with "/", `fill_value` zero of the type, `codecs` `bytes`
/// then `zstd` (`vlen-utf8` or `vlen-bytes` then `zstd` for `string` and `bytes`),
/// `attributes` {}, `storage_transformers` []), and every codec's configuration is completed.
/// Otherwise it is a Zarr v2 `.zarray` document: `shape` and `dtype` are required; `chunks`
/// is read as zarr-python's `chunks` argument (absent, `null` or `true`: guessed as
/// zarr-python guesses them, a target of 128 KiB to 64 MiB growing with the array; `false`:
/// one chunk; an integer: that length in every dimension; a list: `-1` or `null` for a whole
/// dimension, dimensions left out whole); the other keys default to: `zarr_format` 2,
/// `compressor` null (zarr-python 2 defaults to `{"id": "blosc", "cname": "lz4", "clevel": 5,
/// "shuffle": 1}` and zarr-python 3 to `{"id": "zstd", "level": 0}`: give one to match them),
/// `fill_value` 0 (as both), `order` "C", `filters` null, `dimension_separator` ".". A key the format does not have (a
/// misspelling such as `"fill_vaule"`) is `ZARR_ERR_INVALID_METADATA` naming it (in v3,
/// `ZARR_ERR_UNSUPPORTED`, unless it is an object marked `"must_understand": false`), so that
/// no setting is silently left at its default. A v2 `datetime64`/`timedelta64` type without
/// a unit (`"<M8"`, `"<m8"`, also as a field) is `ZARR_ERR_INVALID_METADATA` naming it, as the
/// v2 spec says the unit MUST be given (stored arrays of one, which zarr-python 3 writes, are
/// read). A filter list may name compressors too (`[{"id": "zlib", "level": 1}]`): they run
/// where they are listed. Names in `path` may be any Unicode (the v2 spec says ASCII; zarr-python
/// accepts more); for a v3 array no name of `path` may be made only of periods or start with
/// `__` (the v3 spec's rules for node names: `ZARR_ERR_INVALID_PATH`). Missing ancestor groups
/// are created in the array's format. An existing array or group of either format at `path` is
/// `ZARR_ERR_ALREADY_EXISTS` naming the key found. On success `*out_array` receives a handle
/// for `zarr_array_close`.
///
/// # Safety
/// `store` must be a live handle, `path` and `zarray_json` NUL-terminated strings, and
/// `out_array` writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_create(
    store: *mut zarr_store,
    path: *const c_char,
    zarray_json: *const c_char,
    out_array: *mut *mut zarr_array,
) -> zarr_status {
    create_array(store, path, zarray_json, ZARR_CREATE_NEW, out_array)
}

/// Creates an array at `path` as `zarr_array_create` does, treating what is already there as
/// `mode` says: `ZARR_CREATE_NEW` is `zarr_array_create`, `ZARR_CREATE_OVERWRITE` removes the
/// node there and everything below it first (zarr-python's `mode="w"`, `overwrite=True`),
/// `ZARR_CREATE_OPEN` opens an existing array of the same shape and data type (`mode="a"`,
/// `require_dataset`). The document is checked in full before anything is removed.
///
/// # Safety
/// `store` must be a live handle, `path` and `zarray_json` NUL-terminated strings, and
/// `out_array` writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_create_mode(
    store: *mut zarr_store,
    path: *const c_char,
    zarray_json: *const c_char,
    mode: zarr_create_mode,
    out_array: *mut *mut zarr_array,
) -> zarr_status {
    create_array(store, path, zarray_json, mode, out_array)
}

/// The body of the array creation calls.
fn create_array(
    store: *mut zarr_store,
    path: *const c_char,
    zarray_json: *const c_char,
    mode: zarr_create_mode,
    out_array: *mut *mut zarr_array,
) -> zarr_status {
    run(|| {
        let store = ref_arg(store, "store")?;
        let path = str_arg(path, "path")?;
        let json = str_arg(zarray_json, "zarray_json")?;
        let out = out_arg(out_array, "out_array")?;
        let inner = Array::create_with_mode(store.inner.clone(), path, json, create_mode(mode)?)?;
        give_handle(out, zarr_array { inner });
        Ok(())
    })
}

/// Opens the array at `path`; `ZARR_ERR_NOT_FOUND` when nothing is there,
/// `ZARR_ERR_WRONG_NODE_TYPE` when a group is (the message names its metadata key).
///
/// # Safety
/// `store` must be a live handle, `path` a NUL-terminated string, `out_array` writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_open(
    store: *mut zarr_store,
    path: *const c_char,
    out_array: *mut *mut zarr_array,
) -> zarr_status {
    run(|| {
        let store = ref_arg(store, "store")?;
        let path = str_arg(path, "path")?;
        let out = out_arg(out_array, "out_array")?;
        let inner = Array::open(store.inner.clone(), path)?;
        give_handle(out, zarr_array { inner });
        Ok(())
    })
}

/// Opens the array at `path` from its metadata document `metadata_json` (the `.zarray` or
/// `zarr.json` that `zarr_array_opened_metadata_json` or `zarr_array_metadata_json` gives)
/// without reading it from the store: for
/// layers that read an array's metadata once and open it in many processes (`zarr_mpi.h`
/// broadcasts it from one rank). The document is checked as `zarr_array_open` checks what it
/// reads (`ZARR_ERR_INVALID_METADATA`, `ZARR_ERR_UNSUPPORTED`; a group's document is
/// `ZARR_ERR_WRONG_NODE_TYPE`); that the store holds it is the caller's word.
///
/// # Safety
/// `store` must be a live handle, `path` and `metadata_json` NUL-terminated strings,
/// `out_array` writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_open_metadata(
    store: *mut zarr_store,
    path: *const c_char,
    metadata_json: *const c_char,
    out_array: *mut *mut zarr_array,
) -> zarr_status {
    run(|| {
        let store = ref_arg(store, "store")?;
        let path = str_arg(path, "path")?;
        let document = str_arg(metadata_json, "metadata_json")?;
        let out = out_arg(out_array, "out_array")?;
        let inner = Array::open_document(store.inner.clone(), path, document)?;
        give_handle(out, zarr_array { inner });
        Ok(())
    })
}

/// Opens a view of `array` as zarr-python 2's `Array.view`: the same stored chunks read
/// through metadata that only the new handle holds (nothing is written to the store). The
/// members of `overrides_json` (a JSON object; NULL or `"{}"` changes nothing) replace the
/// array's: for v2 `shape`, `chunks`, `dtype`, `fill_value` and `filters`, for v3 `shape`,
/// `chunk_grid`, `data_type`, `fill_value` and `codecs`; any other member is
/// `ZARR_ERR_INVALID_ARGUMENT` naming it. `"read_only": true` makes a view that refuses writes
/// (`ZARR_ERR_READ_ONLY`); by default the view writes as `array` does, its chunks encoded by
/// the view's metadata. A new data type without a new fill value takes the old fill value cast
/// as NumPy casts it. The metadata is checked as an open checks it
/// (`ZARR_ERR_INVALID_METADATA` / `ZARR_ERR_UNSUPPORTED`); stored chunks that do not decode
/// to the view's chunk size fail when read, never read as fill values. A view cannot be
/// resized or appended to (`ZARR_ERR_UNSUPPORTED`). Close it with `zarr_array_close`; it
/// stays valid after `array` is closed.
///
/// # Safety
/// `array` must be a live handle, `overrides_json` NULL or a NUL-terminated string,
/// `out_array` writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_view(
    array: *const zarr_array,
    overrides_json: *const c_char,
    out_array: *mut *mut zarr_array,
) -> zarr_status {
    run(|| {
        let array = array_arg(array)?;
        let overrides = match overrides_json.is_null() {
            true => "{}",
            false => str_arg(overrides_json, "overrides_json")?,
        };
        let out = out_arg(out_array, "out_array")?;
        let inner = array.view(overrides)?;
        give_handle(out, zarr_array { inner });
        Ok(())
    })
}

/// Opens a read-only view of `array` whose elements read converted to the numeric type
/// `dtype` (a NumPy type string: `"<f8"`, `"i2"`, `"|u1"`; the byte order is the stored one),
/// as zarr-python 2's `Array.astype`: values convert as NumPy's `astype` converts them
/// (floats to integers truncate; out-of-range values wrap or saturate as NumPy's do), and the
/// fill value converts the same way. The view's metadata is the array's with an `astype`
/// filter (`{"id": "astype", "encode_dtype": old, "decode_dtype": new}`; for v3 the
/// `numcodecs.astype` codec) before its own, as zarr-python's. Types that are not numeric
/// are `ZARR_ERR_INVALID_METADATA` or `ZARR_ERR_UNSUPPORTED`. Writes are `ZARR_ERR_READ_ONLY`.
///
/// # Safety
/// `array` must be a live handle, `dtype` a NUL-terminated string, `out_array` writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_astype(
    array: *const zarr_array,
    dtype: *const c_char,
    out_array: *mut *mut zarr_array,
) -> zarr_status {
    run(|| {
        let array = array_arg(array)?;
        let dtype = str_arg(dtype, "dtype")?;
        let out = out_arg(out_array, "out_array")?;
        let inner = array.astype(dtype)?;
        give_handle(out, zarr_array { inner });
        Ok(())
    })
}

/// Releases an array handle. NULL is a harmless no-op.
///
/// # Safety
/// `array` must be NULL or a handle that was not closed yet.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_close(array: *mut zarr_array) -> zarr_status {
    close_handle(array)
}

/// The number of dimensions (0 for a scalar array).
///
/// # Safety
/// `array` must be a live handle and `out_ndim` writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_ndim(
    array: *const zarr_array,
    out_ndim: *mut usize,
) -> zarr_status {
    run(|| {
        let array = array_arg(array)?;
        *out_arg(out_ndim, "out_ndim")? = array.ndim();
        Ok(())
    })
}

/// Writes the array's current shape into `out_shape` (`ndim` entries; `ndim` must match the
/// array).
///
/// # Safety
/// `array` must be a live handle and `out_shape` hold `ndim` writable entries.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_shape(
    array: *const zarr_array,
    ndim: usize,
    out_shape: *mut u64,
) -> zarr_status {
    dims_out(array, ndim, out_shape, |a| Ok(a.shape()))
}

/// Writes the chunk shape into `out_chunks` (`ndim` entries; `ndim` must match the array):
/// the chunk grid's, which for a sharded v3 array is the shard shape (see
/// `zarr_array_inner_chunks`). A rectilinear grid that lists chunk lengths (rather than one
/// length per dimension) has no one chunk shape: `ZARR_ERR_UNSUPPORTED`
/// (`zarr_array_grid_shape` and `zarr_array_block_box` give each chunk's place).
///
/// # Safety
/// `array` must be a live handle and `out_chunks` hold `ndim` writable entries.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_chunks(
    array: *const zarr_array,
    ndim: usize,
    out_chunks: *mut u64,
) -> zarr_status {
    dims_out(array, ndim, out_chunks, |a| {
        a.chunk_grid()
            .require_regular("one chunk shape")
            .map(<[u64]>::to_vec)
            .map_err(|e| e.context(format!("array {:?}", a.path())))
    })
}

/// Writes the number of chunks along each dimension into `out_grid` (`ndim` entries): of
/// shards for a sharded v3 array, of chunks of any length for a rectilinear grid.
///
/// # Safety
/// `array` must be a live handle and `out_grid` hold `ndim` writable entries.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_grid_shape(
    array: *const zarr_array,
    ndim: usize,
    out_grid: *mut u64,
) -> zarr_status {
    dims_out(array, ndim, out_grid, |a| {
        Ok(a.chunk_grid().grid_shape(&a.shape()))
    })
}

/// Writes the shape of the chunks reads and writes work in into `out_chunks` (`ndim`
/// entries): the inner chunk shape of a sharded v3 array, else the same as
/// `zarr_array_chunks` (and the same error for a rectilinear grid that lists lengths). Reads
/// aligned to these chunks decode each chunk once.
///
/// # Safety
/// `array` must be a live handle and `out_chunks` hold `ndim` writable entries.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_inner_chunks(
    array: *const zarr_array,
    ndim: usize,
    out_chunks: *mut u64,
) -> zarr_status {
    dims_out(array, ndim, out_chunks, |a| {
        a.inner_chunks().ok_or_else(|| {
            Error::Unsupported(format!(
                "array {:?}: one chunk shape with a rectilinear chunk grid that lists its chunk lengths",
                a.path()
            ))
        })
    })
}

/// The array's Zarr format, 2 or 3, into `*out_format`.
///
/// # Safety
/// `array` must be a live handle and `out_format` writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_zarr_format(
    array: *const zarr_array,
    out_format: *mut i32,
) -> zarr_status {
    run(|| {
        let format = array_arg(array)?.zarr_format();
        *out_arg(out_format, "out_format")? = i32::from(format);
        Ok(())
    })
}

/// The dimension names as a JSON list of strings and nulls, one per dimension: a v3 array's
/// `dimension_names`; for a v2 array xarray's `_ARRAY_DIMENSIONS` attribute, else the names
/// netCDF-C's NCZarr records (the last segment of each dimension reference, `/g/lat` naming
/// `lat`); the text `null` when the array names none. Free with `zarr_string_free`.
///
/// # Safety
/// `array` must be a live handle and `out_json` writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_dimension_names(
    array: *const zarr_array,
    out_json: *mut *mut c_char,
) -> zarr_status {
    text_out(array, out_json, "out_json", |a| {
        Ok(serde_json::to_string(&a.dimension_names()?).expect("names serialise"))
    })
}

/// Writes the fill value (one element, native byte order) into `out`, whose size
/// `out_size` must equal the item size. When the metadata's fill value is `null`, writes
/// zeros (what libzarr reads for missing chunks then) and sets `*out_is_set` to false.
///
/// # Safety
/// `array` must be a live handle, `out` hold `out_size` writable bytes, `out_is_set` writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_fill_value(
    array: *const zarr_array,
    out: *mut c_void,
    out_size: usize,
    out_is_set: *mut bool,
) -> zarr_status {
    run(|| {
        let array = array_arg(array)?;
        let out = slice_out(out.cast::<u8>(), out_size, "out")?;
        let is_set = out_arg(out_is_set, "out_is_set")?;
        let fill = array.fill_native();
        if out_size != fill.len() {
            return Err(Error::BufferSize(format!(
                "fill value of {} needs {} bytes, buffer has {out_size}",
                array.metadata().dtype.typestr(),
                fill.len()
            )));
        }
        out.copy_from_slice(fill);
        *is_set = array.metadata().fill_value.0.is_some();
        Ok(())
    })
}

/// The element order inside chunks: `ZARR_ORDER_C` or `ZARR_ORDER_F`. (Caller buffers are
/// always C order, whatever this says.)
///
/// # Safety
/// `array` must be a live handle and `out_order` writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_order(
    array: *const zarr_array,
    out_order: *mut zarr_order,
) -> zarr_status {
    run(|| {
        let array = array_arg(array)?;
        *out_arg(out_order, "out_order")? = match array.chunk_order() {
            Some(Order::C) => ZARR_ORDER_C,
            Some(Order::F) => ZARR_ORDER_F,
            None => {
                return Err(Error::Unsupported(format!(
                    "array {:?} transposes its chunks into neither C nor F order (see zarr_array_metadata_json)",
                    array.path()
                )))
            }
        };
        Ok(())
    })
}

/// The compressor configuration of a v2 array as JSON (`"null"` when there is none); free
/// with `zarr_string_free`. A v3 array has a codec list instead (`zarr_array_metadata_json`):
/// `ZARR_ERR_UNSUPPORTED`.
///
/// # Safety
/// `array` must be a live handle and `out_json` writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_compressor_json(
    array: *const zarr_array,
    out_json: *mut *mut c_char,
) -> zarr_status {
    text_out(array, out_json, "out_json", |a| {
        Ok(a.compressor_json()?.to_string())
    })
}

/// The filter configurations of a v2 array as a JSON list (`"null"` when there are none); free
/// with `zarr_string_free`. A v3 array: `ZARR_ERR_UNSUPPORTED`, as for the compressor.
///
/// # Safety
/// `array` must be a live handle and `out_json` writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_filters_json(
    array: *const zarr_array,
    out_json: *mut *mut c_char,
) -> zarr_status {
    text_out(array, out_json, "out_json", |a| {
        Ok(a.filters_json()?.to_string())
    })
}

/// The metadata document as `zarr_array_metadata_json` gives it, but with the attributes of
/// the document the handle was opened with: nothing is read from the store. For handing the
/// document to `zarr_array_open_metadata` in other processes. Free with `zarr_string_free`.
///
/// # Safety
/// `array` must be a live handle and `out_json` writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_opened_metadata_json(
    array: *const zarr_array,
    out_json: *mut *mut c_char,
) -> zarr_status {
    text_out(array, out_json, "out_json", |a| {
        Ok(a.opened_metadata_json().to_string())
    })
}

/// The whole metadata document as JSON (`.zarray` for v2, `zarr.json` for v3, with the current
/// shape); free with `zarr_string_free`.
///
/// # Safety
/// `array` must be a live handle and `out_json` writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_metadata_json(
    array: *const zarr_array,
    out_json: *mut *mut c_char,
) -> zarr_status {
    text_out(array, out_json, "out_json", |a| {
        Ok(a.metadata_json()?.to_string())
    })
}

/// The user attributes (`.zattrs`) as the stored JSON object text (`"{}"` when there are
/// none); free with `zarr_string_free`. Like zarr-python, libzarr accepts the bare values
/// `NaN`, `Infinity` and `-Infinity` in attributes and passes them through.
///
/// # Safety
/// `array` must be a live handle and `out_json` writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_attrs_get(
    array: *const zarr_array,
    out_json: *mut *mut c_char,
) -> zarr_status {
    text_out(array, out_json, "out_json", Array::attributes)
}

/// Replaces the user attributes with `attrs_json`, which must be a JSON object
/// (`ZARR_ERR_INVALID_METADATA` otherwise; `NaN`, `Infinity` and `-Infinity` are allowed as
/// values, as zarr-python writes them). The text is stored as given.
///
/// # Safety
/// `array` must be a live handle and `attrs_json` a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_attrs_set(
    array: *mut zarr_array,
    attrs_json: *const c_char,
) -> zarr_status {
    run(|| array_arg(array)?.set_attributes(str_arg(attrs_json, "attrs_json")?))
}

/// Sets the members of the JSON object `changes_json` in the user attributes, keeping the
/// others, as Python's `attrs.update(...)` and `attrs[key] = value` do (`{"units": "m"}` sets
/// one key); each value is stored as given (`NaN` and `Infinity` allowed). Read and written
/// under the node's lock, so concurrent edits of different keys through handles of this
/// process are all kept.
///
/// # Safety
/// `array` must be a live handle and `changes_json` a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_attrs_update(
    array: *mut zarr_array,
    changes_json: *const c_char,
) -> zarr_status {
    run(|| array_arg(array)?.update_attributes(str_arg(changes_json, "changes_json")?))
}

/// Removes the member `name` from the user attributes (Python's `del attrs[name]`); a name
/// the attributes do not have is `ZARR_ERR_NOT_FOUND`.
///
/// # Safety
/// `array` must be a live handle and `name` a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_attrs_delete(
    array: *mut zarr_array,
    name: *const c_char,
) -> zarr_status {
    run(|| array_arg(array)?.delete_attribute(str_arg(name, "name")?))
}

/// Reads the box of `count[d]` elements from `start[d]` in each of `ndim` dimensions into
/// `out`: C order, native byte order, `out_size` = product of `count` × item size bytes.
/// Chunks never written read as the fill value. Chunks are decoded in parallel, straight into
/// `out` where possible, so when a chunk fails to decode (`ZARR_ERR_CORRUPT_CHUNK`, `ZARR_ERR_IO`)
/// the contents of `out` are unspecified; argument errors leave it untouched.
/// On Linux an `out` of 16 MiB or more is offered transparent huge pages
/// (`madvise(MADV_HUGEPAGE)` on its 2 MiB-aligned interior; the advice stays with that
/// memory): a freshly allocated buffer then costs a fault per 2 MiB instead of per 4 KiB,
/// which for whole-array reads is most of the time.
///
/// # Safety
/// `array` must be a live handle, `start`/`count` hold `ndim` entries, `out` `out_size`
/// writable bytes.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_read(
    array: *const zarr_array,
    ndim: usize,
    start: *const u64,
    count: *const u64,
    out: *mut c_void,
    out_size: usize,
) -> zarr_status {
    run(|| {
        let array = array_arg(array)?;
        let (start, count) = box_args(array, ndim, start, count)?;
        let out = slice_out(out.cast::<u8>(), out_size, "out")?;
        array.read_region(start, count, out)
    })
}

/// Writes the box of `count[d]` elements from `start[d]` from `data` (C order, native byte
/// order, `data_size` = product of `count` × item size bytes). Chunks wholly inside the box
/// are encoded directly; partly covered chunks are read, patched and re-encoded under a
/// per-chunk lock, so threads writing disjoint boxes of one array lose nothing.
///
/// # Safety
/// `array` must be a live handle, `start`/`count` hold `ndim` entries, `data` `data_size`
/// readable bytes.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_write(
    array: *mut zarr_array,
    ndim: usize,
    start: *const u64,
    count: *const u64,
    data: *const c_void,
    data_size: usize,
) -> zarr_status {
    run(|| {
        let array = array_arg(array)?;
        let (start, count) = box_args(array, ndim, start, count)?;
        let data = slice_arg(data.cast::<u8>(), data_size, "data")?;
        array.write_region(start, count, data)
    })
}
