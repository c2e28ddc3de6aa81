//! libzarr through its Rust API (the same engine the C API calls).

use crate::subject::{
    bytes_of, largest, read_boxes_in_threads, Box3, CallerBuffer, Result, Sink, Subject,
};
use serde_json::Value;
use std::cell::RefCell;
use std::sync::Arc;

/// libzarr, and the settings (`zarr_store_open_options`' JSON) its remote stores are opened with.
/// It reads into [`CallerBuffer`]s as a C caller would: from `calloc`, or with `aligned`
/// (the `libzarr-aligned` worker) the same memory at a 64-byte boundary. With `cache_bytes`
/// each array it opens gets a chunk cache of that budget (`zarr_array_set_chunk_cache`).
#[derive(Default)]
pub struct Libzarr {
    aligned: bool,
    cache_bytes: u64,
    store_options: RefCell<Option<String>>,
}

impl Libzarr {
    /// libzarr reading into 64-byte-aligned buffers.
    pub fn aligned() -> Libzarr {
        Libzarr {
            aligned: true,
            ..Default::default()
        }
    }

    /// libzarr with a chunk cache of `cache_bytes` on every array it opens.
    pub fn caching(cache_bytes: u64) -> Libzarr {
        Libzarr {
            cache_bytes,
            ..Default::default()
        }
    }

    /// The store at `path` (a directory, or an `s3://` URL opened with the store options).
    fn store(&self, path: &str, mode: zarr::OpenMode) -> Result<Arc<zarr::StoreHandle>> {
        let options = self.store_options.borrow();
        let options = options.as_deref().filter(|_| path.starts_with("s3://"));
        Ok(zarr::StoreHandle::open_with_options(path, mode, options)?)
    }

    fn open(&self, path: &str) -> Result<zarr::Array> {
        let store = self.store(path, zarr::OpenMode::Read)?;
        let array = zarr::Array::open(store, "")?;
        if self.cache_bytes > 0 {
            array.set_chunk_cache(self.cache_bytes);
        }
        Ok(array)
    }
}

/// Bytes of `count` elements of the array's item size.
fn bytes_for(array: &zarr::Array, count: &[u64]) -> usize {
    count.iter().product::<u64>() as usize * array.metadata().dtype.size
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

    fn use_store_options(&self, options: &Value) -> Result<()> {
        *self.store_options.borrow_mut() = (!options.is_null()).then(|| options.to_string());
        Ok(())
    }

    /// As `zarr_store_open` (which reads the consolidated metadata), `zarr_group_open` and
    /// `zarr_array_open` do it.
    fn open_hierarchy(&self, path: &str, array: &str) -> Result<()> {
        let store = self.store(path, zarr::OpenMode::Read)?;
        zarr::consolidated::load(&store)?;
        let group = zarr::Group::open(store.clone(), "")?;
        std::hint::black_box(zarr::Array::open(group.store().clone(), array)?);
        Ok(())
    }

    fn read_all(&self, path: &str, sink: &mut Sink) -> Result<()> {
        let array = self.open(path)?;
        let shape = array.metadata().shape.clone();
        let mut out = CallerBuffer::new(bytes_for(&array, &shape), self.aligned);
        array.read_region(&vec![0; shape.len()], &shape, out.as_mut_slice())?;
        sink.take(out.as_mut_slice());
        Ok(())
    }

    /// One caller-owned buffer, reused for every box (of the largest box's size when they
    /// differ: a rectilinear grid's chunks).
    fn read_boxes(&self, path: &str, boxes: &[Box3], sink: &mut Sink) -> Result<()> {
        let array = self.open(path)?;
        let item = array.metadata().dtype.size;
        let Some(bytes) = largest(boxes, item) else {
            return Ok(());
        };
        let mut buffer = CallerBuffer::new(bytes, self.aligned);
        for b in boxes {
            let out = &mut buffer.as_mut_slice()[..b.bytes(item)];
            array.read_region(b.start, b.count, out)?;
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
        let array = self.open(path)?;
        let item = array.metadata().dtype.size;
        read_boxes_in_threads(boxes, item, threads, sink, |b, out| {
            Ok(array.read_region(b.start, b.count, out)?)
        })
    }

    fn read_strided(&self, path: &str, step: u64, sink: &mut Sink) -> Result<()> {
        let array = self.open(path)?;
        let shape = array.metadata().shape.clone();
        let count: Vec<u64> = shape.iter().map(|&n| n.div_ceil(step)).collect();
        let mut out = CallerBuffer::new(bytes_for(&array, &count), self.aligned);
        array.read_strided(
            &vec![0; shape.len()],
            &count,
            &vec![step; shape.len()],
            out.as_mut_slice(),
        )?;
        sink.take(out.as_mut_slice());
        Ok(())
    }

    /// `Array::create` takes either document: `"zarr_format": 3` makes a v3 array.
    fn write(&self, path: &str, metadata: &Value, data: &[u16]) -> Result<()> {
        let store = self.store(path, zarr::OpenMode::Write)?;
        let array = zarr::Array::create(store, "", &metadata.to_string())?;
        let shape = array.metadata().shape.clone();
        array.write_region(&vec![0; shape.len()], &shape, bytes_of(data))?;
        Ok(())
    }
}
