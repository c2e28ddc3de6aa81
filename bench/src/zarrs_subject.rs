//! zarrs, the Rust Zarr library from crates.io (used only by this benchmark).

use crate::subject::{
    bytes_of, largest, read_boxes_in_threads, Box3, CallerBuffer, Result, Sink, Subject,
    Unsupported,
};
use serde_json::Value;
use std::sync::Arc;
use unsafe_cell_slice::UnsafeCellSlice;
use zarrs::array::{
    Array, ArrayBytesFixedDisjointView, ArrayMetadata, ArrayShardedExt, ArrayShardedReadableExt,
    ArrayShardedReadableExtCache, ArraySubset, CodecOptions,
};
use zarrs::filesystem::FilesystemStore;

pub struct Zarrs;

/// Bytes per element of the benchmark's `<u2` arrays, which zarrs reads as `u16`.
const ITEM: usize = 2;

fn open(path: &str) -> Result<Array<FilesystemStore>> {
    Ok(Array::open(Arc::new(FilesystemStore::new(path)?), "/")?)
}

fn subset(start: &[u64], count: &[u64]) -> Result<ArraySubset> {
    Ok(ArraySubset::new_with_start_shape(
        start.to_vec(),
        count.to_vec(),
    )?)
}

/// Reads the box into `out` (C order, `out.len()` = its elements × [`ITEM`]) with
/// `retrieve_array_subset_into`.
fn retrieve_into(
    array: &Array<FilesystemStore>,
    start: &[u64],
    count: &[u64],
    out: &mut [u8],
) -> Result<()> {
    // SAFETY: the only view of `out`, covering all of it.
    let mut view = unsafe {
        ArrayBytesFixedDisjointView::new(
            UnsafeCellSlice::new(out),
            ITEM,
            count,
            ArraySubset::new_with_shape(count.to_vec()),
        )?
    };
    array.retrieve_array_subset_into(&subset(start, count)?, (&mut view).into())?;
    Ok(())
}

/// [`retrieve_into`], or for a sharded array `retrieve_array_subset_sharded_opt` with `cache`
/// (which has no `_into` form) copied into `out`.
fn retrieve_box_into(
    array: &Array<FilesystemStore>,
    cache: &ArrayShardedReadableExtCache,
    start: &[u64],
    count: &[u64],
    out: &mut [u8],
) -> Result<()> {
    if !array.is_sharded() {
        return retrieve_into(array, start, count, out);
    }
    let values: Vec<u16> = array.retrieve_array_subset_sharded_opt(
        cache,
        &subset(start, count)?,
        &CodecOptions::default(),
    )?;
    out.copy_from_slice(bytes_of(&values));
    Ok(())
}

impl Subject for Zarrs {
    fn version(&self) -> String {
        zarrs::version::version_str().into()
    }

    fn threads(&self) -> String {
        let config = zarrs::config::global_config();
        format!(
            "{} (rayon global pool; codec_concurrent_target {})",
            rayon::current_num_threads(),
            config.codec_concurrent_target()
        )
    }

    /// `retrieve_array_subset_into` a caller's buffer (as libzarr's): whole chunks (or
    /// shards) decoded in parallel.
    fn read_all(&self, path: &str, sink: &mut Sink) -> Result<()> {
        let array = open(path)?;
        let shape = array.shape().to_vec();
        let elements: u64 = shape.iter().product();
        let mut out = CallerBuffer::new(elements as usize * ITEM, false);
        retrieve_into(&array, &vec![0; shape.len()], &shape, out.as_mut_slice())?;
        sink.take(out.as_mut_slice());
        Ok(())
    }

    /// Into one reused caller's buffer (as libzarr's; of the largest box's size, a rectilinear
    /// grid's chunks differing) with `retrieve_array_subset_into`; on a
    /// sharded array `retrieve_array_subset_sharded_opt` (zarrs' `ArrayShardedReadableExt`)
    /// with one `ArrayShardedReadableExtCache` for all the boxes: each shard's index is read
    /// once per call of this method and only the inner chunks a box touches are decoded.
    fn read_boxes(&self, path: &str, boxes: &[Box3], sink: &mut Sink) -> Result<()> {
        let array = open(path)?;
        let cache = ArrayShardedReadableExtCache::new(&array);
        let Some(bytes) = largest(boxes, ITEM) else {
            return Ok(());
        };
        let mut buffer = CallerBuffer::new(bytes, false);
        for b in boxes {
            let out = &mut buffer.as_mut_slice()[..b.bytes(ITEM)];
            retrieve_box_into(&array, &cache, b.start, b.count, out)?;
            sink.take(out);
        }
        Ok(())
    }

    fn read_boxes_threads(
        &self,
        path: &str,
        boxes: &[Box3],
        threads: usize,
        sink: &mut Sink,
    ) -> Result<()> {
        let array = open(path)?;
        let cache = ArrayShardedReadableExtCache::new(&array);
        read_boxes_in_threads(boxes, ITEM, threads, sink, |b, out| {
            retrieve_box_into(&array, &cache, b.start, b.count, out)
        })
    }

    fn read_strided(&self, _path: &str, _step: u64, _sink: &mut Sink) -> Result<()> {
        Err(Unsupported("zarrs has no strided selection (boxes and points only)").into())
    }

    /// The document deserializes as v2 or v3 metadata (`ArrayMetadata` is untagged).
    fn write(&self, path: &str, metadata: &Value, data: &[u16]) -> Result<()> {
        let metadata: ArrayMetadata = serde_json::from_value(metadata.clone())?;
        let store = Arc::new(FilesystemStore::new(path)?);
        let array = Array::new_with_metadata(store, "/", metadata)?;
        array.store_metadata()?;
        let all = ArraySubset::new_with_shape(array.shape().to_vec());
        array.store_array_subset(&all, data)?;
        Ok(())
    }
}
