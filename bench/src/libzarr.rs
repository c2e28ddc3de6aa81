//! libzarr through its Rust API (the same engine the C API calls).

use crate::subject::{bytes_of, Box3, Result, Sink, Subject};
use serde_json::Value;

pub struct Libzarr;

fn open(path: &str) -> Result<zarr::Array> {
    let store = zarr::StoreHandle::open(path, zarr::OpenMode::Read)?;
    Ok(zarr::Array::open(store, "")?)
}

/// Bytes of `count` elements of the array's item size.
fn buffer_for(array: &zarr::Array, count: &[u64]) -> Vec<u8> {
    let elements: u64 = count.iter().product();
    vec![0; elements as usize * array.metadata().dtype.size]
}

impl Subject for Libzarr {
    fn version(&self) -> String {
        // SAFETY: zarr_version returns a static NUL-terminated string.
        let version = unsafe { std::ffi::CStr::from_ptr(zarr::ffi::zarr_version()) };
        version.to_string_lossy().into_owned()
    }

    fn threads(&self) -> String {
        let threads = zarr::parallel::num_threads().map_or("?".into(), |n| n.to_string());
        let env = std::env::var(zarr::parallel::NUM_THREADS_ENV).unwrap_or("unset".into());
        format!(
            "{threads} (libzarr's pool; {} {env})",
            zarr::parallel::NUM_THREADS_ENV
        )
    }

    fn read_all(&self, path: &str, sink: &mut Sink) -> Result<()> {
        let array = open(path)?;
        let shape = array.metadata().shape.clone();
        let mut out = buffer_for(&array, &shape);
        array.read_region(&vec![0; shape.len()], &shape, &mut out)?;
        sink.take(&out);
        Ok(())
    }

    /// One caller-owned buffer, reused for every box (all boxes have one size).
    fn read_boxes(&self, path: &str, boxes: &[Box3], sink: &mut Sink) -> Result<()> {
        let array = open(path)?;
        let Some(first) = boxes.first() else {
            return Ok(());
        };
        let mut out = buffer_for(&array, first.count);
        for b in boxes {
            array.read_region(b.start, b.count, &mut out)?;
            sink.take(&out);
        }
        Ok(())
    }

    fn read_strided(&self, path: &str, step: u64, sink: &mut Sink) -> Result<()> {
        let array = open(path)?;
        let shape = array.metadata().shape.clone();
        let count: Vec<u64> = shape.iter().map(|&n| n.div_ceil(step)).collect();
        let mut out = buffer_for(&array, &count);
        array.read_strided(
            &vec![0; shape.len()],
            &count,
            &vec![step; shape.len()],
            &mut out,
        )?;
        sink.take(&out);
        Ok(())
    }

    /// `Array::create` takes either document: `"zarr_format": 3` makes a v3 array.
    fn write(&self, path: &str, metadata: &Value, data: &[u16]) -> Result<()> {
        let store = zarr::StoreHandle::open(path, zarr::OpenMode::Write)?;
        let array = zarr::Array::create(store, "", &metadata.to_string())?;
        let shape = array.metadata().shape.clone();
        array.write_region(&vec![0; shape.len()], &shape, bytes_of(data))?;
        Ok(())
    }
}
