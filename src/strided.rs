//! The one copy on the hot path: moving an N-d box of elements between two buffers laid out
//! with arbitrary byte strides, swapping byte order on the way when asked.

use crate::error::{Error, Result};

/// Where a box lives inside a buffer: the byte offset of its first element and the byte
/// stride of each dimension.
#[derive(Debug, Clone)]
pub struct BoxLayout {
    /// Byte offset of the box's first element.
    pub offset: usize,
    /// Byte step between neighbours along each dimension.
    pub strides: Vec<usize>,
}

impl BoxLayout {
    /// A box at `start` inside a dense array of extent `dims`, in C (row-major) or
    /// Fortran (column-major) order, with `elem`-byte elements.
    pub fn dense(dims: &[u64], start: &[u64], elem: usize, fortran: bool) -> BoxLayout {
        let mut strides = vec![0usize; dims.len()];
        let mut step = elem;
        let order: Vec<usize> = if fortran {
            (0..dims.len()).collect()
        } else {
            (0..dims.len()).rev().collect()
        };
        for d in order {
            strides[d] = step;
            step *= dims[d] as usize;
        }
        let offset = start
            .iter()
            .zip(&strides)
            .map(|(&s, &st)| s as usize * st)
            .sum();
        BoxLayout { offset, strides }
    }

    /// One past the last byte the box touches, checked against a buffer of `len` bytes.
    fn check_fits(&self, counts: &[u64], elem: usize, len: usize) -> Result<()> {
        if counts.contains(&0) {
            return Ok(());
        }
        let end = counts
            .iter()
            .zip(&self.strides)
            .try_fold(self.offset + elem, |acc, (&c, &s)| {
                (c as usize - 1)
                    .checked_mul(s)
                    .and_then(|x| x.checked_add(acc))
            });
        match end {
            Some(end) if end <= len => Ok(()),
            _ => Err(Error::Internal(format!(
                "box {counts:?} at {self:?} does not fit a buffer of {len} bytes"
            ))),
        }
    }
}

/// A mutable byte buffer that several threads write disjoint parts of.
#[derive(Debug, Clone, Copy)]
pub struct SharedBuffer {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the buffer is only written through `copy_box`/`fill_box`, whose callers give each
// thread a disjoint set of elements (the chunk parts of one region never overlap).
unsafe impl Send for SharedBuffer {}
unsafe impl Sync for SharedBuffer {}

impl SharedBuffer {
    /// Wraps a buffer for the duration of one parallel region operation.
    pub fn new(buf: &mut [u8]) -> SharedBuffer {
        SharedBuffer {
            ptr: buf.as_mut_ptr(),
            len: buf.len(),
        }
    }

    /// The bytes `range` of the buffer, for a caller that owns that range exclusively.
    ///
    /// # Safety
    /// No other thread may access `range` while the slice lives, and the slice must not
    /// outlive the buffer given to [`SharedBuffer::new`].
    pub unsafe fn slice_mut<'a>(self, range: std::ops::Range<usize>) -> Result<&'a mut [u8]> {
        if range.start > range.end || range.end > self.len {
            return Err(Error::Internal(format!(
                "range {range:?} outside buffer of {}",
                self.len
            )));
        }
        Ok(std::slice::from_raw_parts_mut(
            self.ptr.add(range.start),
            range.len(),
        ))
    }
}

/// Copies a box of `counts` elements of `elem` bytes from `src` to `dst`, reversing the
/// bytes of every `swap`-byte unit when `swap` is given (byte-order conversion).
///
/// # Safety
/// No other thread may touch the box's bytes in `dst` during the call.
pub unsafe fn copy_box(
    src: &[u8],
    src_box: &BoxLayout,
    dst: SharedBuffer,
    dst_box: &BoxLayout,
    counts: &[u64],
    elem: usize,
    swap: Option<usize>,
) -> Result<()> {
    src_box.check_fits(counts, elem, src.len())?;
    dst_box.check_fits(counts, elem, dst.len)?;
    let src = src.as_ptr();
    for_each_row(counts, src_box, dst_box, |s, d, n, s_step, d_step| {
        let (s, d) = (src.add(s), dst.ptr.add(d));
        if swap.is_none() && s_step == elem && d_step == elem {
            std::ptr::copy_nonoverlapping(s, d, n * elem);
            return;
        }
        for i in 0..n {
            let (se, de) = (s.add(i * s_step), d.add(i * d_step));
            std::ptr::copy_nonoverlapping(se, de, elem);
            if let Some(unit) = swap {
                std::slice::from_raw_parts_mut(de, elem)
                    .chunks_exact_mut(unit)
                    .for_each(|u| u.reverse());
            }
        }
    });
    Ok(())
}

/// Fills a box of `dst` with copies of the one-element `pattern`.
///
/// # Safety
/// No other thread may touch the box's bytes in `dst` during the call.
pub unsafe fn fill_box(
    dst: SharedBuffer,
    dst_box: &BoxLayout,
    counts: &[u64],
    pattern: &[u8],
) -> Result<()> {
    let elem = pattern.len();
    dst_box.check_fits(counts, elem, dst.len)?;
    let zero = pattern.iter().all(|&b| b == 0);
    for_each_row(counts, dst_box, dst_box, |_, d, n, _, d_step| {
        let d = dst.ptr.add(d);
        if zero && d_step == elem {
            std::ptr::write_bytes(d, 0, n * elem);
            return;
        }
        for i in 0..n {
            std::ptr::copy_nonoverlapping(pattern.as_ptr(), d.add(i * d_step), elem);
        }
    });
    Ok(())
}

/// Calls `row(src_offset, dst_offset, n, src_step, dst_step)` for every innermost row of the
/// box; a 0-d box is one row of one element.
fn for_each_row(
    counts: &[u64],
    a: &BoxLayout,
    b: &BoxLayout,
    mut row: impl FnMut(usize, usize, usize, usize, usize),
) {
    if counts.contains(&0) {
        return;
    }
    let Some((&inner, outer)) = counts.split_last() else {
        row(a.offset, b.offset, 1, 0, 0);
        return;
    };
    let last = counts.len() - 1;
    let mut index = vec![0u64; outer.len()];
    loop {
        let offset = |layout: &BoxLayout| {
            layout.offset
                + index
                    .iter()
                    .zip(&layout.strides)
                    .map(|(&i, &s)| i as usize * s)
                    .sum::<usize>()
        };
        row(
            offset(a),
            offset(b),
            inner as usize,
            a.strides[last],
            b.strides[last],
        );
        // Advance the outer index like an odometer.
        let mut d = outer.len();
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            index[d] += 1;
            if index[d] < outer[d] {
                break;
            }
            index[d] = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_layouts() {
        let c = BoxLayout::dense(&[4, 5, 6], &[1, 2, 3], 2, false);
        assert_eq!(c.strides, vec![60, 12, 2]);
        assert_eq!(c.offset, 60 + 24 + 6);
        let f = BoxLayout::dense(&[4, 5, 6], &[1, 2, 3], 2, true);
        assert_eq!(f.strides, vec![2, 8, 40]);
    }

    #[test]
    fn copies_transposes_and_swaps() {
        // 2x3 u16 source in F order -> C order destination with byte swap.
        let values: [u16; 6] = [0x0102, 0x0304, 0x0506, 0x0708, 0x090a, 0x0b0c];
        let src: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
        let mut dst = vec![0u8; 12];
        let src_box = BoxLayout::dense(&[2, 3], &[0, 0], 2, true);
        let dst_box = BoxLayout::dense(&[2, 3], &[0, 0], 2, false);
        unsafe {
            copy_box(
                &src,
                &src_box,
                SharedBuffer::new(&mut dst),
                &dst_box,
                &[2, 3],
                2,
                Some(2),
            )
        }
        .unwrap();
        let got: Vec<u16> = dst
            .chunks(2)
            .map(|b| u16::from_ne_bytes([b[0], b[1]]).swap_bytes())
            .collect();
        // F order element (i, j) is at i + 2j.
        assert_eq!(
            got,
            vec![values[0], values[2], values[4], values[1], values[3], values[5]]
        );
    }

    #[test]
    fn fills_a_sub_box_and_refuses_overruns() {
        let mut dst = vec![0u8; 16];
        let layout = BoxLayout::dense(&[4, 4], &[1, 1], 1, false);
        unsafe { fill_box(SharedBuffer::new(&mut dst), &layout, &[2, 3], &[7]) }.unwrap();
        assert_eq!(dst.iter().filter(|&&b| b == 7).count(), 6);
        assert_eq!(dst[5], 7);
        assert_eq!(dst[4], 0);
        let too_big = BoxLayout::dense(&[4, 4], &[3, 3], 1, false);
        assert!(unsafe { fill_box(SharedBuffer::new(&mut dst), &too_big, &[2, 2], &[1]) }.is_err());
    }

    #[test]
    fn zero_dimensional_boxes_copy_one_element() {
        let mut dst = vec![0u8; 4];
        let layout = BoxLayout::dense(&[], &[], 4, false);
        unsafe {
            copy_box(
                &[1, 2, 3, 4],
                &layout,
                SharedBuffer::new(&mut dst),
                &layout,
                &[],
                4,
                None,
            )
        }
        .unwrap();
        assert_eq!(dst, vec![1, 2, 3, 4]);
    }
}
