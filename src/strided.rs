//! The one copy on the hot path: moving elements between a chunk and a caller's buffer.
//!
//! A copy is described per dimension by the byte offsets it visits in the source and in the
//! destination ([`DimOffsets`]); the elements copied are the product of those lists. Ranges,
//! strides, index lists, Fortran order and caller buffer strides all reduce to this, and byte
//! order is swapped inside the same copy. Where the innermost dimension is contiguous on both
//! sides, whole rows move with one `memcpy`.

use crate::dtype::ByteSwap;
use crate::error::{Error, Result};

/// `(source offset, destination offset)` in bytes for each position one dimension visits.
pub type DimOffsets = Vec<(usize, usize)>;

/// Byte strides of a dense array of extent `dims` with `elem`-byte elements, in C (row-major)
/// or Fortran (column-major) order.
pub fn dense_strides(dims: &[u64], elem: usize, fortran: bool) -> Vec<usize> {
    let mut layout: Vec<usize> = (0..dims.len()).collect();
    if fortran {
        layout.reverse();
    }
    layout_strides(dims, elem, &layout)
}

/// Byte strides of a dense array of extent `dims` with `elem`-byte elements whose dimensions
/// vary in memory from slowest to fastest in the order `layout` lists them (`0, 1, ...` is C
/// order; a v3 `transpose` codec's `order` is such a list).
pub fn layout_strides(dims: &[u64], elem: usize, layout: &[usize]) -> Vec<usize> {
    let mut strides = vec![0usize; dims.len()];
    let mut step = elem;
    for &d in layout.iter().rev() {
        strides[d] = step;
        step = step.saturating_mul(dims[d] as usize);
    }
    strides
}

/// Whether a box of extent `dims` laid out with byte `strides` is one contiguous run in C order.
pub fn is_c_contiguous(dims: &[u64], strides: &[usize], elem: usize) -> bool {
    let mut step = elem;
    for d in (0..dims.len()).rev() {
        if dims[d] > 1 && strides[d] != step {
            return false;
        }
        step = step.saturating_mul(dims[d] as usize);
    }
    true
}

/// A mutable byte buffer that several threads write disjoint parts of.
#[derive(Debug, Clone, Copy)]
pub struct SharedBuffer {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the buffer is only written through `copy_elements`/`fill_elements`/`slice_mut`, whose
// callers give each thread a disjoint set of elements (the chunk parts of one selection never
// overlap, and caller buffer layouts are checked not to overlap).
unsafe impl Send for SharedBuffer {}
unsafe impl Sync for SharedBuffer {}

impl SharedBuffer {
    /// Wraps a buffer for the duration of one parallel operation.
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

/// How each element crosses a copy: its size on each side, the bytes that move, and the
/// byte-order conversion of the result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElementCopy {
    /// Bytes of one source element.
    pub src_size: usize,
    /// Bytes of one destination element.
    pub dst_size: usize,
    /// `(source offset, destination offset, length)` of the byte ranges that move (fields of a
    /// record); empty: the whole element, when both sizes are equal.
    pub ranges: Vec<(usize, usize, usize)>,
    /// Byte-order conversion applied to each destination element.
    pub swap: ByteSwap,
}

impl ElementCopy {
    /// Whole elements of `size` bytes, converted by `swap`.
    pub fn whole(size: usize, swap: ByteSwap) -> ElementCopy {
        ElementCopy {
            src_size: size,
            dst_size: size,
            ranges: Vec::new(),
            swap,
        }
    }

    /// Whether elements move byte for byte, unchanged.
    pub fn is_plain(&self) -> bool {
        self.ranges.is_empty() && self.swap.is_none()
    }

    /// The same copy in the other direction (destination to source). The swap must be one
    /// that suits the new destination: callers give it.
    pub fn reversed(&self, swap: ByteSwap) -> ElementCopy {
        ElementCopy {
            src_size: self.dst_size,
            dst_size: self.src_size,
            ranges: self.ranges.iter().map(|&(s, d, n)| (d, s, n)).collect(),
            swap,
        }
    }
}

/// Checks that every offset the copy visits, plus one element, stays inside both buffers.
fn check_extent(
    dims: &[DimOffsets],
    src_elem: usize,
    dst_elem: usize,
    src_len: usize,
    dst_len: usize,
) -> Result<()> {
    let (mut src_end, mut dst_end) = (src_elem, dst_elem);
    for offsets in dims {
        let src_max = offsets.iter().map(|o| o.0).max().unwrap_or(0);
        let dst_max = offsets.iter().map(|o| o.1).max().unwrap_or(0);
        src_end = src_end.saturating_add(src_max);
        dst_end = dst_end.saturating_add(dst_max);
    }
    if src_end > src_len || dst_end > dst_len {
        return Err(Error::Internal(format!(
            "copy reaches byte {src_end} of a {src_len}-byte source or {dst_end} of a {dst_len}-byte destination"
        )));
    }
    Ok(())
}

/// Calls `row(src_base, dst_base)` for every combination of the outer dimensions' offsets
/// (all dimensions but the last); a copy with no dimensions is one row at offset 0.
fn for_each_row(dims: &[DimOffsets], mut row: impl FnMut(usize, usize)) {
    if dims.iter().any(Vec::is_empty) {
        return;
    }
    let outer = &dims[..dims.len().saturating_sub(1)];
    let mut index = vec![0usize; outer.len()];
    loop {
        let (mut s, mut d) = (0, 0);
        for (offsets, &i) in outer.iter().zip(&index) {
            s += offsets[i].0;
            d += offsets[i].1;
        }
        row(s, d);
        // Advance the outer index like an odometer.
        let mut k = outer.len();
        loop {
            if k == 0 {
                return;
            }
            k -= 1;
            index[k] += 1;
            if index[k] < outer[k].len() {
                break;
            }
            index[k] = 0;
        }
    }
}

/// Calls `f(source offset, destination offset)` for every element named by `dims`, in C order.
pub fn for_each_offset(dims: &[DimOffsets], mut f: impl FnMut(usize, usize)) {
    let inner = inner(dims);
    for_each_row(dims, |s, d| {
        inner.iter().for_each(|&(si, di)| f(s + si, d + di))
    });
}

/// The innermost dimension's offsets, or one element at 0 for a copy with no dimensions.
fn inner(dims: &[DimOffsets]) -> &[(usize, usize)] {
    dims.last().map_or(&[(0, 0)], Vec::as_slice)
}

/// Whether both sides of the innermost dimension advance one element at a time.
fn is_contiguous_run(inner: &[(usize, usize)], src_elem: usize, dst_elem: usize) -> bool {
    inner
        .windows(2)
        .all(|w| w[1].0 == w[0].0 + src_elem && w[1].1 == w[0].1 + dst_elem)
}

/// Copies the elements named by `dims` from `src` to `dst`, each as `how` says.
///
/// # Safety
/// No other thread may touch the destination bytes the copy writes during the call.
pub unsafe fn copy_elements(
    src: &[u8],
    dst: SharedBuffer,
    dims: &[DimOffsets],
    how: &ElementCopy,
) -> Result<()> {
    let (src_elem, dst_elem) = (how.src_size, how.dst_size);
    check_extent(dims, src_elem, dst_elem, src.len(), dst.len)?;
    if how
        .ranges
        .iter()
        .any(|&(s, d, n)| s + n > src_elem || d + n > dst_elem)
    {
        return Err(Error::Internal(format!(
            "element ranges {:?} exceed the elements",
            how.ranges
        )));
    }
    let inner = inner(dims);
    let plain = how.is_plain() && src_elem == dst_elem;
    let whole_rows = plain && is_contiguous_run(inner, src_elem, dst_elem);
    let (s0, d0) = inner[0];
    let src = src.as_ptr();
    for_each_row(dims, |s, d| {
        if whole_rows {
            std::ptr::copy_nonoverlapping(
                src.add(s + s0),
                dst.ptr.add(d + d0),
                inner.len() * src_elem,
            );
            return;
        }
        if plain {
            let (from, to) = (src.add(s), dst.ptr.add(d));
            match src_elem {
                1 => copy_each::<1>(from, to, inner),
                2 => copy_each::<2>(from, to, inner),
                4 => copy_each::<4>(from, to, inner),
                8 => copy_each::<8>(from, to, inner),
                16 => copy_each::<16>(from, to, inner),
                n => inner.iter().for_each(|&(si, di)| {
                    std::ptr::copy_nonoverlapping(from.add(si), to.add(di), n)
                }),
            }
            return;
        }
        for &(si, di) in inner {
            let (from, to) = (src.add(s + si), dst.ptr.add(d + di));
            if how.ranges.is_empty() {
                std::ptr::copy_nonoverlapping(from, to, src_elem);
            }
            for &(rs, rd, n) in &how.ranges {
                std::ptr::copy_nonoverlapping(from.add(rs), to.add(rd), n);
            }
            how.swap.apply(std::slice::from_raw_parts_mut(to, dst_elem));
        }
    });
    Ok(())
}

/// Copies one `N`-byte element for each `(source offset, destination offset)` pair (a fixed
/// size lets the compiler make each copy a single move).
///
/// # Safety
/// Every offset plus `N` must lie inside its side, and the destinations must not overlap the
/// source.
#[inline]
unsafe fn copy_each<const N: usize>(src: *const u8, dst: *mut u8, pairs: &[(usize, usize)]) {
    for &(si, di) in pairs {
        std::ptr::copy_nonoverlapping(src.add(si), dst.add(di), N);
    }
}

/// Writes the one-element `pattern` at every destination offset named by `dims` (the source
/// offsets are ignored).
///
/// # Safety
/// No other thread may touch the destination bytes the fill writes during the call.
pub unsafe fn fill_elements(dst: SharedBuffer, dims: &[DimOffsets], pattern: &[u8]) -> Result<()> {
    let elem = pattern.len();
    check_extent(dims, elem, elem, usize::MAX, dst.len)?;
    let inner = inner(dims);
    let zero_rows =
        pattern.iter().all(|&b| b == 0) && inner.windows(2).all(|w| w[1].1 == w[0].1 + elem);
    for_each_row(dims, |_, d| {
        if zero_rows {
            std::ptr::write_bytes(dst.ptr.add(d + inner[0].1), 0, inner.len() * elem);
            return;
        }
        for &(_, di) in inner {
            std::ptr::copy_nonoverlapping(pattern.as_ptr(), dst.ptr.add(d + di), elem);
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offsets(src_stride: usize, dst_stride: usize, n: usize) -> DimOffsets {
        (0..n).map(|i| (i * src_stride, i * dst_stride)).collect()
    }

    #[test]
    fn dense_layouts() {
        assert_eq!(dense_strides(&[4, 5, 6], 2, false), vec![60, 12, 2]);
        assert_eq!(dense_strides(&[4, 5, 6], 2, true), vec![2, 8, 40]);
        assert!(is_c_contiguous(&[4, 5, 6], &[60, 12, 2], 2));
        assert!(is_c_contiguous(&[1, 5, 6], &[999, 12, 2], 2));
        assert!(!is_c_contiguous(&[4, 5, 6], &[2, 8, 40], 2));
    }

    #[test]
    fn copies_transposes_and_swaps() {
        // 2x3 u16 source in F order -> C order destination with byte swap.
        let values: [u16; 6] = [0x0102, 0x0304, 0x0506, 0x0708, 0x090a, 0x0b0c];
        let src: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
        let mut dst = vec![0u8; 12];
        let dims = [offsets(2, 6, 2), offsets(4, 2, 3)];
        unsafe {
            copy_elements(
                &src,
                SharedBuffer::new(&mut dst),
                &dims,
                &ElementCopy::whole(2, ByteSwap::Uniform(2)),
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
    fn copies_whole_rows_and_scattered_elements() {
        let src: Vec<u8> = (0..16).collect();
        let mut dst = vec![0u8; 16];
        // Rows 1 and 3 of a 4x4 byte matrix, columns 1..3, into a dense 2x2 at the start.
        let dims = [vec![(4, 0), (12, 2)], vec![(1, 0), (2, 1)]];
        unsafe {
            copy_elements(
                &src,
                SharedBuffer::new(&mut dst),
                &dims,
                &ElementCopy::whole(1, ByteSwap::None),
            )
        }
        .unwrap();
        assert_eq!(&dst[..4], &[5, 6, 13, 14]);
        // Scattered innermost positions.
        let dims = [vec![(0, 0)], vec![(3, 0), (0, 1), (3, 2)]];
        unsafe {
            copy_elements(
                &src,
                SharedBuffer::new(&mut dst),
                &dims,
                &ElementCopy::whole(1, ByteSwap::None),
            )
        }
        .unwrap();
        assert_eq!(&dst[..3], &[3, 0, 3]);
    }

    #[test]
    fn copies_selected_fields_into_packed_elements() {
        // Records of (u8 a, u16 b big-endian, u8 c); pick b then a, swapping b to native.
        let src = [1u8, 0x01, 0x02, 9, 2, 0x03, 0x04, 9];
        let mut dst = vec![0u8; 6];
        let how = ElementCopy {
            src_size: 4,
            dst_size: 3,
            ranges: vec![(1, 0, 2), (0, 2, 1)],
            swap: ByteSwap::Ranges(vec![(0, 2)]),
        };
        let dims = [vec![(0, 0), (4, 3)]];
        unsafe { copy_elements(&src, SharedBuffer::new(&mut dst), &dims, &how) }.unwrap();
        assert_eq!(dst, vec![0x02, 0x01, 1, 0x04, 0x03, 2]);
        let bad = ElementCopy {
            ranges: vec![(3, 0, 2)],
            ..how
        };
        assert!(unsafe { copy_elements(&src, SharedBuffer::new(&mut dst), &dims, &bad) }.is_err());
    }

    #[test]
    fn fills_and_refuses_overruns() {
        let mut dst = vec![0u8; 16];
        let dims = [offsets(0, 4, 2), offsets(0, 1, 3)];
        unsafe { fill_elements(SharedBuffer::new(&mut dst), &dims, &[7]) }.unwrap();
        assert_eq!(dst.iter().filter(|&&b| b == 7).count(), 6);
        let too_far = [offsets(0, 4, 4), offsets(0, 2, 3)];
        assert!(unsafe { fill_elements(SharedBuffer::new(&mut dst), &too_far, &[1]) }.is_err());
        let src = [0u8; 4];
        assert!(unsafe {
            copy_elements(
                &src,
                SharedBuffer::new(&mut dst),
                &[offsets(1, 1, 5)],
                &ElementCopy::whole(1, ByteSwap::None),
            )
        }
        .is_err());
    }

    #[test]
    fn zero_dimensional_copies_move_one_element() {
        let mut dst = vec![0u8; 4];
        unsafe {
            copy_elements(
                &[1, 2, 3, 4],
                SharedBuffer::new(&mut dst),
                &[],
                &ElementCopy::whole(4, ByteSwap::None),
            )
        }
        .unwrap();
        assert_eq!(dst, vec![1, 2, 3, 4]);
    }
}
