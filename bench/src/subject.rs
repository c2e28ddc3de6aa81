//! What every implementation under test offers the worker loop, and where read results go.

use serde_json::Value;
use std::error::Error;
use std::fmt;

pub type Result<T> = std::result::Result<T, Box<dyn Error + Send + Sync>>;

/// An operation an implementation cannot do; the driver reports it as "n/a" with the reason.
#[derive(Debug)]
pub struct Unsupported(pub &'static str);

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl Error for Unsupported {}

/// Where read results go: a running CRC-32 of every byte when verifying, otherwise nowhere
/// (but kept alive, so the compiler cannot skip producing them).
pub struct Sink(Option<crc32fast::Hasher>);

impl Sink {
    pub fn new(verify: bool) -> Sink {
        Sink(verify.then(crc32fast::Hasher::new))
    }

    pub fn take(&mut self, bytes: &[u8]) {
        match &mut self.0 {
            Some(crc) => crc.update(bytes),
            None => {
                std::hint::black_box(bytes);
            }
        }
    }

    /// Appends bytes already hashed elsewhere (`part`'s CRC-32), as if taken here.
    pub fn append(&mut self, part: &crc32fast::Hasher) {
        if let Some(crc) = &mut self.0 {
            crc.combine(part);
        }
    }

    pub fn verifies(&self) -> bool {
        self.0.is_some()
    }

    pub fn crc32(self) -> Option<u32> {
        self.0.map(|crc| crc.finalize())
    }
}

/// An output buffer allocated as a C program allocates it: `calloc` (for large sizes glibc
/// hands out addresses 16 bytes past a 64-byte boundary, as `malloc` does), or the same memory
/// moved up to the next 64-byte boundary (as `aligned_alloc(64, ...)` would give). Both start
/// zeroed and are faulted in by their first writes, so they differ only in their address.
pub struct CallerBuffer {
    base: *mut u8,
    offset: usize,
    len: usize,
}

impl CallerBuffer {
    pub fn new(len: usize, aligned: bool) -> CallerBuffer {
        // SAFETY: calloc returns NULL or `len + 64` zeroed bytes.
        let base = unsafe { libc::calloc(len + 64, 1) }.cast::<u8>();
        assert!(!base.is_null(), "calloc of {len} bytes failed");
        let offset = if aligned { base.align_offset(64) } else { 0 };
        CallerBuffer { base, offset, len }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: `offset + len` ≤ `len + 64` zeroed bytes this buffer owns.
        unsafe { std::slice::from_raw_parts_mut(self.base.add(self.offset), self.len) }
    }
}

impl Drop for CallerBuffer {
    fn drop(&mut self) {
        // SAFETY: `base` came from calloc and is freed once.
        unsafe { libc::free(self.base.cast()) }
    }
}

/// Results kept for verification: (box number, CRC-32 of its bytes).
type Kept = Vec<(usize, crc32fast::Hasher)>;

/// Reads `boxes` (`item`-byte elements) from `threads` threads at once, thread `t` taking
/// boxes `t`, `t + threads`, ... into its own [`CallerBuffer`] (of the largest box's size, each
/// box read into as much of it as it needs) with `read`;
/// when `sink` verifies, each box's CRC-32 is kept and the sink combines them in the boxes'
/// order afterwards (no copies of the results stay in the threads' memory).
pub fn read_boxes_in_threads(
    boxes: &[Box3],
    item: usize,
    threads: usize,
    sink: &mut Sink,
    read: impl Fn(&Box3, &mut [u8]) -> Result<()> + Sync,
) -> Result<()> {
    let Some(box_bytes) = largest(boxes, item) else {
        return Ok(());
    };
    let keep = sink.verifies();
    let results: Vec<Result<Kept>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                let read = &read;
                scope.spawn(move || -> Result<Kept> {
                    let mut buffer = CallerBuffer::new(box_bytes, false);
                    let mut kept = Vec::new();
                    for i in (t..boxes.len()).step_by(threads) {
                        let out = &mut buffer.as_mut_slice()[..boxes[i].bytes(item)];
                        read(&boxes[i], out)?;
                        if keep {
                            let mut crc = crc32fast::Hasher::new();
                            crc.update(out);
                            kept.push((i, crc));
                        }
                    }
                    Ok(kept)
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("a reader thread panicked"))
            .collect()
    });
    let mut kept = Vec::new();
    for result in results {
        kept.extend(result?);
    }
    kept.sort_by_key(|(i, _)| *i);
    for (_, crc) in kept {
        sink.append(&crc);
    }
    Ok(())
}

/// Every index from `first` to `last` (inclusive) along each dimension, in C order.
pub fn indexes_between(first: &[u64], last: &[u64]) -> Vec<Vec<u64>> {
    let mut out = vec![Vec::new()];
    for d in 0..first.len() {
        out = out
            .into_iter()
            .flat_map(|prefix| {
                (first[d]..=last[d]).map(move |i| {
                    let mut next = prefix.clone();
                    next.push(i);
                    next
                })
            })
            .collect();
    }
    out
}

/// The grid indexes, in C order, of the chunks of shape `size` that the box `start`/`count`
/// (no empty dimension) touches.
pub fn chunks_touched(start: &[u64], count: &[u64], size: &[u64]) -> Vec<Vec<u64>> {
    let first: Vec<u64> = (0..size.len()).map(|d| start[d] / size[d]).collect();
    let last: Vec<u64> = (0..size.len())
        .map(|d| (start[d] + count[d] - 1) / size[d])
        .collect();
    indexes_between(&first, &last)
}

/// The bytes of the largest of `boxes` (`item`-byte elements): one caller's buffer for all of
/// them, boxes of unequal shapes (a rectilinear grid's chunks) included; `None` for no boxes.
pub fn largest(boxes: &[Box3], item: usize) -> Option<usize> {
    boxes.iter().map(|b| b.bytes(item)).max()
}

/// The C-order box of `count[d]` elements starting at `start[d]` along each dimension.
pub struct Box3<'a> {
    pub start: &'a [u64],
    pub count: &'a [u64],
}

impl Box3<'_> {
    /// The bytes of this box's elements of `item` bytes each.
    pub fn bytes(&self, item: usize) -> usize {
        self.count.iter().product::<u64>() as usize * item
    }
}

/// One implementation under test. `path` is a Zarr array directory, v2 or v3 (the array is its
/// root), or for those that can read object storage (see [`Subject::use_store_options`]) an
/// `s3://bucket/prefix` URL. Each call includes opening the array; the worker loop times whole
/// calls.
pub trait Subject {
    /// The implementation's version.
    fn version(&self) -> String;

    /// `"threads: ..."`-style description of the parallelism this implementation uses.
    fn threads(&self) -> String;

    /// The settings every later `s3://` location is opened with (a JSON object, e.g.
    /// `{"endpoint": "http://127.0.0.1:8333"}`; `null`: the environment's alone).
    fn use_store_options(&self, options: &Value) -> Result<()> {
        match options {
            Value::Null => Ok(()),
            _ => Err(Unsupported("no remote stores in this benchmark").into()),
        }
    }

    /// Opens the group at `path` the way a reader of a hierarchy does (its consolidated
    /// metadata read once), then its array `array`.
    fn open_hierarchy(&self, _path: &str, _array: &str) -> Result<()> {
        Err(Unsupported("no hierarchy opening").into())
    }

    /// Reads the whole array in one call.
    fn read_all(&self, _path: &str, _sink: &mut Sink) -> Result<()> {
        Err(Unsupported("not a whole-array reader").into())
    }

    /// Reads each box, one call per box, in order.
    fn read_boxes(&self, _path: &str, _boxes: &[Box3], _sink: &mut Sink) -> Result<()> {
        Err(Unsupported("no box reads").into())
    }

    /// Reads each box once from `threads` threads at once sharing one array handle (GDAL's
    /// pattern: each thread reads its own blocks), with [`read_boxes_in_threads`].
    fn read_boxes_threads(
        &self,
        _path: &str,
        _boxes: &[Box3],
        _threads: usize,
        _sink: &mut Sink,
    ) -> Result<()> {
        Err(Unsupported("no threaded box reads").into())
    }

    /// Reads every `step`-th element along each dimension of the whole array in one call.
    fn read_strided(&self, _path: &str, _step: u64, _sink: &mut Sink) -> Result<()> {
        Err(Unsupported("no strided selection").into())
    }

    /// Creates the array described by `metadata` (a v2 `.zarray` or a v3 `zarr.json`
    /// document) at `path` and writes the whole of `data` (C order, native byte order) into it.
    fn write(&self, _path: &str, _metadata: &Value, _data: &[u16]) -> Result<()> {
        Err(Unsupported("no writer").into())
    }
}

/// The `shape` and `chunks` of a `.zarray` document.
pub fn shape_and_chunks(zarray: &Value) -> Result<(Vec<u64>, Vec<u64>)> {
    let dims = |key: &str| -> Result<Vec<u64>> {
        zarray[key]
            .as_array()
            .and_then(|a| a.iter().map(Value::as_u64).collect())
            .ok_or_else(|| format!(".zarray has no integer list {key:?}").into())
    };
    Ok((dims("shape")?, dims("chunks")?))
}

/// Reads and parses `<path>/.zarray`.
pub fn read_zarray(path: &str) -> Result<Value> {
    let text = std::fs::read_to_string(format!("{path}/.zarray"))?;
    Ok(serde_json::from_str(&text)?)
}

/// The bytes of `u16` elements in native order.
pub fn bytes_of(data: &[u16]) -> &[u8] {
    bytemuck::cast_slice(data)
}
