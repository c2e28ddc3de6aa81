//! Tuning: the worker threads, each array handle's chunk cache, and whether writes store
//! chunks that hold only the fill value.

use super::array::{array_arg, zarr_array};
use super::boundary::{out_arg, run};
use super::status::zarr_status;
use crate::parallel;

/// Sets how many worker threads decode and encode chunks, for every later call in the
/// process; 0 restores the default: the `ZARR_NUM_THREADS` environment variable if set,
/// else the number of cores. A `ZARR_NUM_THREADS` that is not a number from 1 to 4096 is
/// `ZARR_ERR_INVALID_ARGUMENT` naming it, from this call with 0 and from every call that
/// needs the worker threads until a number is set here.
#[no_mangle]
pub extern "C" fn zarr_set_num_threads(threads: usize) -> zarr_status {
    run(|| parallel::set_num_threads(threads))
}

/// The number of worker threads that decode and encode chunks.
///
/// # Safety
/// `out_threads` must be writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_num_threads(out_threads: *mut usize) -> zarr_status {
    run(|| {
        let out = out_arg(out_threads, "out_threads")?;
        *out = parallel::num_threads()?;
        Ok(())
    })
}

/// Sets whether writes store chunks that hold only the fill value. Off by default, as in
/// zarr-python 3: such chunks are erased from the store instead (they read back as the fill
/// value). A chunk counts as empty when every element equals the fill value byte for byte
/// (so `-0.0` under a `0.0` fill, or another NaN payload, is kept: nothing is lost). Arrays
/// whose fill value is null always store every chunk. Applies to this handle.
///
/// # Safety
/// `array` must be a live handle.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_set_write_empty_chunks(
    array: *mut zarr_array,
    write: bool,
) -> zarr_status {
    run(|| {
        array_arg(array)?.set_write_empty_chunks(write);
        Ok(())
    })
}

/// Whether writes through this handle store chunks that hold only the fill value.
///
/// # Safety
/// `array` must be a live handle and `out_write` writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_write_empty_chunks(
    array: *const zarr_array,
    out_write: *mut bool,
) -> zarr_status {
    run(|| {
        let write = array_arg(array)?.write_empty_chunks();
        *out_arg(out_write, "out_write")? = write;
        Ok(())
    })
}

/// Turns this handle's in-memory cache of decoded chunks on, with a budget of `max_bytes`, or
/// off with 0 (the default), which frees it. With it on, reads keep the chunks they decode
/// (and the mark of chunks never written; for a sharded array, its inner chunks), least
/// recently used first out, so repeated small
/// reads of the same chunks skip the store and the decompressor. Each chunk is charged its
/// decoded size plus 64 bytes; chunks larger than the budget are read as without a cache.
/// Writes through this handle invalidate the chunks they touch, so its reads always see its
/// own writes; writes through other handles or processes are not seen while a chunk stays
/// cached (set the budget to 0 and back to drop everything). Safe with concurrent readers and
/// writers on the handle. Object (`|O`) arrays are not cached (the setting has no effect on
/// them). Changing the budget resets the counts of `zarr_array_chunk_cache_stats`.
///
/// Off by default because it pays only when the chunks a workload revisits fit the budget:
/// measured on 100 random 64³ boxes of a 512³ array in 4 MiB chunks, a 1 GiB budget made
/// zstd reads 3.6× and blosc reads 2.5× faster, while 64 MiB (16 chunks) gained nothing, and
/// with the cache on every read copies out of it instead of decoding straight into `out`
/// (reads that visit each chunk once were 6–80% slower, of uncompressed chunks up to 3.5×).
///
/// # Safety
/// `array` must be a live handle.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_set_chunk_cache(
    array: *mut zarr_array,
    max_bytes: u64,
) -> zarr_status {
    run(|| {
        array_arg(array)?.set_chunk_cache(max_bytes);
        Ok(())
    })
}

/// How this handle's chunk cache served reads since its budget was last set: chunk reads
/// answered from memory (`*out_hits`), chunk reads that went to the store (`*out_misses`),
/// and the bytes the cache is charged for now (`*out_bytes`). All zero while it is off.
///
/// # Safety
/// `array` must be a live handle and `out_hits`, `out_misses`, `out_bytes` writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_chunk_cache_stats(
    array: *const zarr_array,
    out_hits: *mut u64,
    out_misses: *mut u64,
    out_bytes: *mut u64,
) -> zarr_status {
    run(|| {
        let array = array_arg(array)?;
        let hits = out_arg(out_hits, "out_hits")?;
        let misses = out_arg(out_misses, "out_misses")?;
        let bytes = out_arg(out_bytes, "out_bytes")?;
        let stats = array.chunk_cache_stats();
        (*hits, *misses, *bytes) = (stats.hits, stats.misses, stats.bytes);
        Ok(())
    })
}
