//! The caller's buffer: where each element of a selection's result lives in it.

use crate::error::{Error, Result};
use crate::strided::dense_strides;

/// Byte strides of a caller's buffer along each dimension of a selection's result.
#[derive(Debug)]
pub struct BufferLayout {
    /// Byte step between neighbours along each dimension.
    pub strides: Vec<usize>,
}

impl BufferLayout {
    /// Lays out a result of extent `shape` with `elem`-byte elements in a buffer of `len`
    /// bytes. Without `strides` (in elements) the buffer is dense C order and must have exactly
    /// the result's size; with them it must reach every element. A buffer that the library
    /// writes (`written`) must not place two elements on the same bytes.
    pub fn new(
        shape: &[u64],
        elem: usize,
        strides: Option<&[u64]>,
        len: usize,
        written: bool,
    ) -> Result<BufferLayout> {
        let Some(strides) = strides else {
            let needed = shape
                .iter()
                .try_fold(elem as u64, |acc, &n| acc.checked_mul(n))
                .ok_or_else(|| {
                    Error::Overflow(format!(
                        "a selection of {shape:?} elements has more than 2^64 bytes"
                    ))
                })?;
            if needed != len as u64 {
                return Err(Error::BufferSize(format!(
                    "a selection of {shape:?} {elem}-byte elements needs {needed} bytes but the buffer has {len}"
                )));
            }
            return Ok(BufferLayout {
                strides: dense_strides(shape, elem, false),
            });
        };
        if strides.len() != shape.len() {
            return Err(Error::InvalidArgument(format!(
                "{} buffer strides for a {}-dimensional selection",
                strides.len(),
                shape.len()
            )));
        }
        let overflow = || Error::Overflow(format!("buffer strides {strides:?} overflow"));
        let bytes: Vec<usize> = strides
            .iter()
            .map(|&s| {
                usize::try_from(s)
                    .ok()
                    .and_then(|s| s.checked_mul(elem))
                    .ok_or_else(overflow)
            })
            .collect::<Result<_>>()?;
        if shape.contains(&0) {
            return Ok(BufferLayout { strides: bytes });
        }
        let mut end = elem as u64;
        for (&n, &s) in shape.iter().zip(&bytes) {
            end = (n - 1)
                .checked_mul(s as u64)
                .and_then(|x| x.checked_add(end))
                .ok_or_else(overflow)?;
        }
        if end > len as u64 {
            return Err(Error::BufferSize(format!(
                "buffer strides {strides:?} reach byte {end} of a {len}-byte buffer"
            )));
        }
        if written {
            check_no_overlap(shape, &bytes, elem, strides)?;
        }
        Ok(BufferLayout { strides: bytes })
    }
}

/// Refuses strides that could place two elements on the same bytes: taken from the smallest
/// stride up, each must clear the extent of the dimensions below it.
fn check_no_overlap(shape: &[u64], bytes: &[usize], elem: usize, strides: &[u64]) -> Result<()> {
    let mut dims: Vec<(usize, u64)> = bytes
        .iter()
        .copied()
        .zip(shape.iter().copied())
        .filter(|&(_, n)| n > 1)
        .collect();
    dims.sort_unstable();
    let mut extent = elem as u64;
    for (stride, n) in dims {
        if (stride as u64) < extent {
            return Err(Error::InvalidArgument(format!(
                "buffer strides {strides:?} make elements overlap"
            )));
        }
        extent += stride as u64 * (n - 1);
    }
    Ok(())
}

/// Buffers at least this large, about to be filled whole, are offered huge pages.
#[cfg(all(target_os = "linux", not(miri)))]
const HUGE_PAGE_MIN: usize = 16 << 20;

/// Asks the kernel to back the 2 MiB-aligned interior of `out`, a large buffer of the
/// caller's that a read is about to fill whole, with transparent huge pages
/// (`madvise(MADV_HUGEPAGE)`; Linux). A freshly allocated buffer is otherwise faulted in 4 KiB
/// at a time as the read writes it: 65,536 faults for 256 MiB, which cost more than the copy.
/// Only advice: where the kernel says no (huge pages off, a mapping that is not anonymous
/// memory), nothing changes.
#[cfg_attr(any(miri, not(target_os = "linux")), allow(unused_variables))]
pub(super) fn advise_huge_pages(out: &mut [u8]) {
    // (Miri cannot make the system call.)
    #[cfg(all(target_os = "linux", not(miri)))]
    if out.len() >= HUGE_PAGE_MIN {
        const HUGE_PAGE: usize = 2 << 20;
        let start = out.as_mut_ptr().align_offset(HUGE_PAGE);
        let len = out.len().saturating_sub(start) / HUGE_PAGE * HUGE_PAGE;
        if len > 0 {
            // SAFETY: the range lies within `out`, which the caller lets this call write;
            // the advice changes how its pages are backed, never their contents.
            unsafe { libc::madvise(out.as_mut_ptr().add(start).cast(), len, libc::MADV_HUGEPAGE) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_buffers_must_match_exactly() {
        assert_eq!(
            BufferLayout::new(&[2, 3], 4, None, 24, true)
                .unwrap()
                .strides,
            vec![12, 4]
        );
        assert!(matches!(
            BufferLayout::new(&[2, 3], 4, None, 25, true),
            Err(Error::BufferSize(_))
        ));
        assert!(matches!(
            BufferLayout::new(&[u64::MAX, 3], 4, None, 24, true),
            Err(Error::Overflow(_))
        ));
    }

    #[test]
    fn strided_buffers_must_reach_every_element_without_overlap() {
        // A 2x3 box inside a 4x5 image of u16, and the same box in Fortran order.
        assert_eq!(
            BufferLayout::new(&[2, 3], 2, Some(&[5, 1]), 40, true)
                .unwrap()
                .strides,
            vec![10, 2]
        );
        assert!(BufferLayout::new(&[2, 3], 2, Some(&[1, 2]), 12, true).is_ok());
        assert!(matches!(
            BufferLayout::new(&[2, 3], 2, Some(&[5, 1]), 15, true),
            Err(Error::BufferSize(_))
        ));
        assert!(matches!(
            BufferLayout::new(&[2, 3], 2, Some(&[1, 1]), 40, true),
            Err(Error::InvalidArgument(_))
        ));
        assert!(matches!(
            BufferLayout::new(&[2, 3], 2, Some(&[0, 1]), 40, true),
            Err(Error::InvalidArgument(_))
        ));
        // Reading the same source element repeatedly is fine for data the library only reads.
        assert!(BufferLayout::new(&[2, 3], 2, Some(&[0, 1]), 40, false).is_ok());
        assert!(matches!(
            BufferLayout::new(&[2, 3], 2, Some(&[1]), 40, true),
            Err(Error::InvalidArgument(_))
        ));
        assert!(matches!(
            BufferLayout::new(&[2, 3], 2, Some(&[u64::MAX, 1]), 40, true),
            Err(Error::Overflow(_))
        ));
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "40 MiB is too slow under Miri, which skips the advice anyway"
    )]
    fn huge_page_advice_keeps_contents_at_any_address() {
        let mut memory: Vec<u8> = (0..(40u32 << 20) + 3).map(|i| (i % 253) as u8).collect();
        for (start, len) in [(3, 20 << 20), (0, 40 << 20), (1, 1000), (5, (16 << 20) + 1)] {
            advise_huge_pages(&mut memory[start..start + len]);
        }
        assert!(memory
            .iter()
            .enumerate()
            .all(|(i, &b)| b == (i % 253) as u8));
    }
}
