//! zarrs, the Rust Zarr library from crates.io (used only by this benchmark).

use crate::subject::{bytes_of, Box3, Result, Sink, Subject, Unsupported};
use serde_json::Value;
use std::sync::Arc;
use zarrs::array::{Array, ArrayMetadata, ArrayMetadataV2, ArraySubset};
use zarrs::filesystem::FilesystemStore;

pub struct Zarrs;

fn store(path: &str) -> Result<Arc<FilesystemStore>> {
    Ok(Arc::new(FilesystemStore::new(path)?))
}

fn read(array: &Array<FilesystemStore>, start: &[u64], count: &[u64]) -> Result<Vec<u16>> {
    let subset = ArraySubset::new_with_start_shape(start.to_vec(), count.to_vec())?;
    Ok(array.retrieve_array_subset::<Vec<u16>>(&subset)?)
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

    fn read_all(&self, path: &str, sink: &mut Sink) -> Result<()> {
        let array = Array::open(store(path)?, "/")?;
        let shape = array.shape().to_vec();
        sink.take(bytes_of(&read(&array, &vec![0; shape.len()], &shape)?));
        Ok(())
    }

    fn read_boxes(&self, path: &str, boxes: &[Box3], sink: &mut Sink) -> Result<()> {
        let array = Array::open(store(path)?, "/")?;
        for b in boxes {
            sink.take(bytes_of(&read(&array, b.start, b.count)?));
        }
        Ok(())
    }

    fn read_strided(&self, _path: &str, _step: u64, _sink: &mut Sink) -> Result<()> {
        Err(Unsupported("zarrs has no strided selection (boxes and points only)").into())
    }

    fn write(&self, path: &str, zarray: &Value, data: &[u16]) -> Result<()> {
        let metadata: ArrayMetadataV2 = serde_json::from_value(zarray.clone())?;
        let array = Array::new_with_metadata(store(path)?, "/", ArrayMetadata::V2(metadata))?;
        array.store_metadata()?;
        let subset = ArraySubset::new_with_shape(array.shape().to_vec());
        array.store_array_subset(&subset, data)?;
        Ok(())
    }
}
