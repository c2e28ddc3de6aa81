//! Changing an array's shape: resize any dimension, append along one.

use super::Array;
use crate::error::{Error, Result};
use crate::hierarchy;
use crate::metadata::ChunkGrid;
use crate::parallel;
use crate::path;
use rayon::prelude::*;
use std::sync::Arc;

impl Array {
    /// Checks that this handle may change the array's shape: not a view (whose metadata is
    /// not stored), with writes allowed.
    fn check_resizable(&self) -> Result<()> {
        if self.is_view {
            return Err(self.named(Error::Unsupported(
                "a view cannot be resized or appended to: its metadata is not stored".into(),
            )));
        }
        self.check_writable()
    }

    /// Changes the array's shape to `new_shape` (same number of dimensions), keeping the data
    /// inside both shapes and the attributes. Chunks wholly outside the new shape are deleted
    /// from the store; the part of an edge chunk that falls outside a shrunk dimension is reset
    /// to the fill value, so growing again later shows the fill value there, never old data.
    /// The metadata document (`.zarray` or `zarr.json`) is rewritten last with the new shape,
    /// its other members kept as stored.
    ///
    /// Calls in flight on this handle keep the shape they started with; other handles of the
    /// same array keep theirs until reopened.
    pub fn resize(&self, new_shape: &[u64]) -> Result<()> {
        let key = path::join(&self.path, self.metadata_key());
        self.check_resizable()?;
        self.store.check_writable(&key)?;
        if new_shape.len() != self.ndim() {
            return Err(self.named(Error::InvalidArgument(format!(
                "new shape {new_shape:?} has {} dimensions, the array has {}",
                new_shape.len(),
                self.ndim()
            ))));
        }
        let _resizing = self
            .resizing
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let old_shape = self.shape();
        let vanished = || Error::NotFound(format!("{key:?} vanished"));
        let stored =
            hierarchy::read_array_metadata(&self.store, &self.path)?.ok_or_else(vanished)?;
        let forms = self.forms();
        let old_grid = forms.array_grid().clone();
        // A rectilinear grid whose listed chunks fall short of the new shape gains a chunk (a
        // whole number of a sharded array's inner chunks).
        let unit = forms.sharding().map(|s| s.shard_unit());
        let grid = old_grid.resized(new_shape, unit);
        let new_grid = grid.grid_shape(new_shape);
        // Only a dimension that shrinks leaves chunks, or parts of them, outside: a grow (every
        // append) needs no listing of the stored chunks.
        let shrinks = new_shape.iter().zip(&old_shape).any(|(new, old)| new < old);
        let stored_chunks = match shrinks {
            true => self.stored_chunks()?,
            false => Vec::new(),
        };
        let (kept, outside): (Vec<_>, Vec<_>) = stored_chunks
            .into_iter()
            .partition(|coords| coords.iter().zip(&new_grid).all(|(c, n)| c < n));
        parallel::run(|| {
            kept.par_iter()
                .try_for_each(|coords| self.clear_cut_part(&grid, coords, &old_shape, new_shape))
        })?;
        parallel::run(|| {
            outside
                .par_iter()
                .try_for_each(|coords| self.erase_chunk(&self.chunk_key(coords)))
        })?;
        if self.sharded {
            // The cache holds inner chunks, which erasing their shards did not invalidate.
            self.clear_chunk_cache();
        }
        let written = {
            // Read again under the lock, so attributes written meanwhile are kept.
            let _lock = self.store.lock_chunk(&stored.key)?;
            let mut stored =
                hierarchy::stored_array_metadata(&self.store, &self.path)?.ok_or_else(vanished)?;
            stored.document.set("shape", &new_shape.into());
            if grid != old_grid {
                stored.document.set("chunk_grid", &grid.to_v3_json());
            }
            hierarchy::write_document(&self.store, &stored.key, &stored.document)
        };
        // A write can fail after the new document is in place (with `fsync`, flushing its
        // directory): the handle then takes the shape the store has, as a reopened one would.
        let stored_now = || {
            let stored = hierarchy::stored_array_metadata(&self.store, &self.path).ok()??;
            let shape: Vec<u64> = serde_json::from_value(stored.document.get("shape")?).ok()?;
            Some(shape)
        };
        if written.is_ok() || stored_now().as_deref() == Some(new_shape) {
            if grid != old_grid {
                let forms = self.forms().with_array_grid(grid);
                *self
                    .forms
                    .write()
                    .unwrap_or_else(|poisoned| poisoned.into_inner()) = Arc::new(forms);
            }
            *self
                .shape
                .write()
                .unwrap_or_else(|poisoned| poisoned.into_inner()) = new_shape.to_vec();
        }
        written
    }

    /// Resets to the fill value the part of the stored chunk at `coords` that lies inside
    /// `old_shape` but outside `new_shape`: in one write, so a failure leaves the chunk as it
    /// was (as points when several shrunk dimensions cut it; object arrays, which have no
    /// point writes, take one box per such dimension).
    fn clear_cut_part(
        &self,
        grid: &ChunkGrid,
        coords: &[u64],
        old_shape: &[u64],
        new_shape: &[u64],
    ) -> Result<()> {
        let span = |d: usize, shape: &[u64]| {
            let axis = grid.axis(d);
            let first = axis.start(coords[d]);
            (first, (first + axis.len(coords[d])).min(shape[d]))
        };
        let ndim = coords.len();
        let cuts = (0..ndim)
            .filter(|&d| span(d, new_shape).1 < span(d, old_shape).1)
            .count();
        if cuts > 1 && self.object.is_none() {
            let (low, high): (Vec<u64>, Vec<u64>) = (0..ndim).map(|d| span(d, old_shape)).unzip();
            let mut points = Vec::new();
            let mut at = low.clone();
            'odometer: loop {
                if at.iter().zip(new_shape).any(|(i, n)| i >= n) {
                    points.extend_from_slice(&at);
                }
                for d in (0..ndim).rev() {
                    at[d] += 1;
                    if at[d] < high[d] {
                        continue 'odometer;
                    }
                    at[d] = low[d];
                }
                break;
            }
            let npoints = points.len() / ndim;
            return self.write_points(npoints, &points, &self.fill_native.repeat(npoints));
        }
        for d in 0..ndim {
            let ((first, old_end), (_, new_end)) = (span(d, old_shape), span(d, new_shape));
            if new_end >= old_end {
                continue;
            }
            let mut start: Vec<u64> = (0..ndim).map(|e| span(e, old_shape).0).collect();
            let mut count: Vec<u64> = (0..ndim).map(|e| span(e, old_shape).1 - start[e]).collect();
            (start[d], count[d]) = (new_end.max(first), old_end - new_end.max(first));
            self.write_fill_box(&start, &count)?;
        }
        Ok(())
    }

    /// Writes the fill value over the box `start`/`count` (at most one chunk).
    fn write_fill_box(&self, start: &[u64], count: &[u64]) -> Result<()> {
        let n = count.iter().product::<u64>() as usize;
        match &self.object {
            None => self.write_region(start, count, &self.fill_native.repeat(n)),
            Some(codec) => {
                let mut item = self.fill_item(codec)?;
                let swap = codec.byte_swap();
                item.chunks_exact_mut(codec.element_size())
                    .for_each(|e| swap.apply(e));
                let offsets: Vec<i64> = (0..=n as i64).map(|i| i * item.len() as i64).collect();
                self.write_vlen(start, count, &offsets, &item.repeat(n))
            }
        }
    }

    /// Appends `data` (dense C order, native byte order) along `axis`: the array grows by
    /// `count` along it and the data fills the new part, whose other extents are the array's.
    /// If the write fails the array is shrunk back to its old shape.
    pub fn append(&self, axis: usize, count: u64, data: &[u8]) -> Result<()> {
        self.require_fixed_size()?;
        self.append_with(
            axis,
            count,
            |extent| {
                let needed = extent
                    .iter()
                    .try_fold(self.item_size() as u64, |acc, &n| acc.checked_mul(n));
                match needed == Some(data.len() as u64) {
                    true => Ok(()),
                    false => Err(Error::BufferSize(format!(
                        "appending {extent:?} elements of {} bytes needs {needed:?} bytes, got {}",
                        self.item_size(),
                        data.len()
                    ))),
                }
            },
            |start, extent| self.write_region(start, extent, data),
        )
    }

    /// Appends the items of an object array along `axis`, as [`Array::append`] does, given
    /// as [`Array::write_vlen`] takes them (`offsets` one more than the items).
    pub fn append_vlen(&self, axis: usize, count: u64, offsets: &[i64], data: &[u8]) -> Result<()> {
        self.append_with(
            axis,
            count,
            |extent| {
                let items = extent.iter().try_fold(1u64, |acc, &n| acc.checked_mul(n));
                match items.and_then(|n| n.checked_add(1)) == Some(offsets.len() as u64) {
                    true => Ok(()),
                    false => Err(Error::BufferSize(format!(
                        "appending {extent:?} items needs {items:?} + 1 offsets, got {}",
                        offsets.len()
                    ))),
                }
            },
            |start, extent| self.write_vlen(start, extent, offsets, data),
        )
    }

    /// Grows the array by `count` along `axis` and has `write` fill the new part (given its
    /// start and extent), after `check` accepted the extent; shrinks it back if `write` fails.
    fn append_with(
        &self,
        axis: usize,
        count: u64,
        check: impl FnOnce(&[u64]) -> Result<()>,
        write: impl FnOnce(&[u64], &[u64]) -> Result<()>,
    ) -> Result<()> {
        self.check_resizable()?;
        let old_shape = self.shape();
        if axis >= old_shape.len() {
            return Err(self.named(Error::InvalidArgument(format!(
                "axis {axis} is out of range for {} dimensions",
                old_shape.len()
            ))));
        }
        let mut new_shape = old_shape.clone();
        new_shape[axis] = old_shape[axis].checked_add(count).ok_or_else(|| {
            self.named(Error::Overflow(format!(
                "appending {count} to dimension {axis} of length {} overflows",
                old_shape[axis]
            )))
        })?;
        let mut start = vec![0; old_shape.len()];
        start[axis] = old_shape[axis];
        let mut extent = old_shape;
        extent[axis] = count;
        check(&extent).map_err(|e| self.named(e))?;
        self.resize(&new_shape)?;
        write(&start, &extent).inspect_err(|_| {
            new_shape[axis] = start[axis];
            // Best effort: the write's error is the one to report.
            let _ = self.resize(&new_shape);
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::{Array, Error, OpenMode, StoreHandle};

    fn array(meta: &str) -> (std::sync::Arc<StoreHandle>, Array) {
        let store = StoreHandle::open("memory:", OpenMode::Write).unwrap();
        let a = Array::create(store.clone(), "a", meta).unwrap();
        (store, a)
    }

    fn read_all_i32(a: &Array) -> Vec<i32> {
        let shape = a.shape();
        let mut out = vec![0u8; shape.iter().product::<u64>() as usize * 4];
        a.read_region(&vec![0; shape.len()], &shape, &mut out)
            .unwrap();
        out.chunks(4)
            .map(|b| i32::from_ne_bytes(b.try_into().unwrap()))
            .collect()
    }

    fn bytes(values: impl IntoIterator<Item = i32>) -> Vec<u8> {
        values.into_iter().flat_map(i32::to_ne_bytes).collect()
    }

    #[test]
    fn shrinking_deletes_outside_chunks_and_resets_cut_parts() {
        let (store, a) = array(
            r#"{"shape": [10, 10], "chunks": [4, 4], "dtype": "<i4", "fill_value": -1,
                "dimension_separator": "/"}"#,
        );
        a.set_attributes(r#"{"keep": NaN}"#).unwrap();
        a.write_region(&[0, 0], &[10, 10], &bytes(0..100)).unwrap();
        // Cached chunks must not bring back what the resize removed.
        a.set_chunk_cache(1 << 20);
        read_all_i32(&a);
        a.resize(&[5, 6]).unwrap();
        assert_eq!(a.shape(), vec![5, 6]);
        assert_eq!(
            read_all_i32(&a),
            (0..5)
                .flat_map(|r| (0..6).map(move |c| r * 10 + c))
                .collect::<Vec<_>>()
        );
        let chunks: Vec<String> = store
            .list_prefix("a/")
            .unwrap()
            .into_iter()
            .filter(|k| !k.contains(".z"))
            .collect();
        assert_eq!(chunks, vec!["a/0/0", "a/0/1", "a/1/0", "a/1/1"]);
        assert_eq!(a.attributes().unwrap(), r#"{"keep": NaN}"#);
        let reopened = Array::open(store.clone(), "a").unwrap();
        assert_eq!(reopened.shape(), vec![5, 6]);
        // Growing again shows the fill value where the old data was cut off.
        a.resize(&[8, 8]).unwrap();
        let values = read_all_i32(&a);
        assert_eq!(values[4 * 8 + 5], 45);
        assert_eq!(values[4 * 8 + 6], -1);
        assert_eq!(values[5 * 8], -1);
        assert_eq!(values[7 * 8 + 7], -1);
    }

    #[test]
    fn growing_keeps_data_and_reads_fill_beyond() {
        let (_store, a) =
            array(r#"{"shape": [3], "chunks": [2], "dtype": "<i4", "fill_value": 7}"#);
        a.write_region(&[0], &[3], &bytes([1, 2, 3])).unwrap();
        a.resize(&[6]).unwrap();
        assert_eq!(read_all_i32(&a), vec![1, 2, 3, 7, 7, 7]);
        assert!(matches!(a.resize(&[1, 2]), Err(Error::InvalidArgument(_))));
    }

    #[test]
    fn appends_along_any_axis() {
        let (_store, a) = array(r#"{"shape": [2, 3], "chunks": [2, 2], "dtype": "<i4"}"#);
        a.write_region(&[0, 0], &[2, 3], &bytes(0..6)).unwrap();
        a.append(0, 1, &bytes([6, 7, 8])).unwrap();
        a.append(1, 1, &bytes([9, 10, 11])).unwrap();
        assert_eq!(a.shape(), vec![3, 4]);
        assert_eq!(read_all_i32(&a), vec![0, 1, 2, 9, 3, 4, 5, 10, 6, 7, 8, 11]);
        assert!(matches!(
            a.append(0, 1, &bytes([1])),
            Err(Error::BufferSize(_))
        ));
        assert!(matches!(
            a.append(2, 1, &[]),
            Err(Error::InvalidArgument(_))
        ));
        assert!(matches!(
            a.append(0, u64::MAX, &[]),
            Err(Error::Overflow(_))
        ));
        assert_eq!(a.shape(), vec![3, 4]);
    }

    #[test]
    fn resizes_object_arrays() {
        let (_store, a) = array(
            r#"{"shape": [5], "chunks": [3], "dtype": "|O", "fill_value": "",
                "filters": [{"id": "vlen-utf8"}]}"#,
        );
        a.write_vlen(&[0], &[5], &[0, 1, 2, 3, 4, 5], b"abcde")
            .unwrap();
        a.resize(&[4]).unwrap();
        a.resize(&[6]).unwrap();
        let mut offsets = [0i64; 7];
        let mut data = [0u8; 8];
        a.read_vlen(&[0], &[6], &mut offsets, &mut data).unwrap();
        assert_eq!(&data[..offsets[6] as usize], b"abcd");
        assert_eq!(offsets, [0, 1, 2, 3, 4, 4, 4]);
        a.append_vlen(0, 2, &[0, 2, 5], b"xyzzy").unwrap();
        let mut offsets = [0i64; 9];
        let mut data = [0u8; 16];
        a.read_vlen(&[0], &[8], &mut offsets, &mut data).unwrap();
        assert_eq!(&data[..offsets[8] as usize], b"abcdxyzzy");
        assert_eq!(offsets[6..], [4, 6, 9]);
        assert!(matches!(
            a.append_vlen(0, 2, &[0, 1], b"x"),
            Err(Error::BufferSize(_))
        ));
        // A write that fails (text that is not UTF-8) leaves the shape as it was.
        assert!(a.append_vlen(0, 1, &[0, 1], b"\xff").is_err());
        assert_eq!(a.shape(), vec![8]);
        assert!(matches!(
            a.append(0, 1, &[0]),
            Err(Error::InvalidArgument(_))
        ));
    }

    #[test]
    fn a_vanished_zarray_is_an_error_naming_it() {
        let (store, a) = array(r#"{"shape": [3], "chunks": [2], "dtype": "<i4"}"#);
        store.erase("a/.zarray").unwrap();
        let err = a.resize(&[4]).unwrap_err();
        assert!(matches!(err, Error::NotFound(_)), "{err}");
        assert!(err.to_string().contains("a/.zarray"), "{err}");
        assert_eq!(a.shape(), vec![3]);
    }

    #[test]
    fn read_only_stores_refuse_resize() {
        let dir = std::env::temp_dir().join(format!("libzarr-resize-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let rw = StoreHandle::open(dir.to_str().unwrap(), OpenMode::Write).unwrap();
        Array::create(rw, "x", r#"{"shape": [3], "chunks": [2], "dtype": "<i4"}"#).unwrap();
        let ro = StoreHandle::open(dir.to_str().unwrap(), OpenMode::Read).unwrap();
        let x = Array::open(ro, "x").unwrap();
        assert!(matches!(x.resize(&[4]), Err(Error::ReadOnly(_))));
        assert!(matches!(x.append(0, 1, &[0; 4]), Err(Error::ReadOnly(_))));
        assert_eq!(x.shape(), vec![3]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
