//! zarrs, the Rust Zarr library from crates.io (used only by this benchmark).

use crate::subject::{bytes_of, Box3, Result, Sink, Subject, Unsupported};
use serde_json::Value;
use std::sync::Arc;
use zarrs::array::{
    Array, ArrayMetadata, ArrayShardedReadableExt, ArrayShardedReadableExtCache, ArraySubset,
    CodecOptions,
};
use zarrs::filesystem::FilesystemStore;

pub struct Zarrs;

fn open(path: &str) -> Result<Array<FilesystemStore>> {
    Ok(Array::open(Arc::new(FilesystemStore::new(path)?), "/")?)
}

fn subset(start: &[u64], count: &[u64]) -> Result<ArraySubset> {
    Ok(ArraySubset::new_with_start_shape(
        start.to_vec(),
        count.to_vec(),
    )?)
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

    /// `retrieve_array_subset`: whole chunks (or shards) decoded in parallel.
    fn read_all(&self, path: &str, sink: &mut Sink) -> Result<()> {
        let array = open(path)?;
        let shape = array.shape().to_vec();
        let all = subset(&vec![0; shape.len()], &shape)?;
        sink.take(bytes_of(&array.retrieve_array_subset::<Vec<u16>>(&all)?));
        Ok(())
    }

    /// `retrieve_array_subset_sharded_opt` (zarrs' `ArrayShardedReadableExt`) with one
    /// `ArrayShardedReadableExtCache` for all the boxes: each shard's index is read once per
    /// call of this method and only the inner chunks a box touches are decoded. On an array
    /// that is not sharded it is plain `retrieve_array_subset`.
    fn read_boxes(&self, path: &str, boxes: &[Box3], sink: &mut Sink) -> Result<()> {
        let array = open(path)?;
        let cache = ArrayShardedReadableExtCache::new(&array);
        let options = CodecOptions::default();
        for b in boxes {
            let values: Vec<u16> = array.retrieve_array_subset_sharded_opt(
                &cache,
                &subset(b.start, b.count)?,
                &options,
            )?;
            sink.take(bytes_of(&values));
        }
        Ok(())
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
