//! Boolean selections: a mask over the whole array (zarr-python's `get_mask_selection`), and
//! Boolean vectors along one dimension of an orthogonal selection.

use crate::error::{Error, Result};

/// The coordinates of the elements a mask selects, in C order: `mask` holds one byte per
/// element of an array of `shape` (nonzero: selected), C order. Gives the number of points and
/// their coordinates, `ndim` per point, as [`super::PointPlan`] takes them. A mask of another
/// length is [`Error::BufferSize`]; coordinates that would not fit in memory are
/// [`Error::TooLarge`].
pub fn mask_points(shape: &[u64], mask: &[u8]) -> Result<(usize, Vec<u64>)> {
    let elements = shape
        .iter()
        .try_fold(1u64, |n, &d| n.checked_mul(d))
        .ok_or_else(|| {
            Error::Overflow(format!(
                "the array of shape {shape:?} has too many elements"
            ))
        })?;
    if elements != mask.len() as u64 {
        return Err(Error::BufferSize(format!(
            "the mask has {} entries but the array of shape {shape:?} has {elements} elements",
            mask.len()
        )));
    }
    let selected = mask.iter().filter(|&&m| m != 0).count();
    let mut coords = Vec::new();
    selected
        .checked_mul(shape.len())
        .and_then(|n| coords.try_reserve_exact(n).ok())
        .ok_or_else(|| {
            Error::TooLarge(format!(
                "the coordinates of the {selected} elements the mask selects do not fit in memory"
            ))
        })?;
    let mut index = vec![0u64; shape.len()];
    for &m in mask {
        if m != 0 {
            coords.extend_from_slice(&index);
        }
        // Next index in C order.
        for d in (0..shape.len()).rev() {
            index[d] += 1;
            if index[d] < shape[d] {
                break;
            }
            index[d] = 0;
        }
    }
    Ok((selected, coords))
}

/// The indices a Boolean vector selects along dimension `dim` of length `len`: where `flags`
/// is nonzero, in order. A vector of another length is [`Error::InvalidArgument`], as in
/// NumPy and zarr-python.
pub fn flag_indices(flags: &[u8], len: u64, dim: usize) -> Result<Vec<u64>> {
    if flags.len() as u64 != len {
        return Err(Error::InvalidArgument(format!(
            "dimension {dim}: a Boolean selection of {} entries for a dimension of length {len}",
            flags.len()
        )));
    }
    Ok((0..len).filter(|&i| flags[i as usize] != 0).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mask_selects_its_elements_in_c_order() {
        let mask = [0, 1, 0, 1, 1, 0];
        let (n, coords) = mask_points(&[2, 3], &mask).unwrap();
        assert_eq!(n, 3);
        assert_eq!(coords, [0, 1, 1, 0, 1, 1]);
        assert_eq!(mask_points(&[], &[1]).unwrap(), (1, vec![]));
        assert_eq!(mask_points(&[0, 4], &[]).unwrap(), (0, vec![]));
        assert!(matches!(
            mask_points(&[2, 3], &mask[..5]),
            Err(Error::BufferSize(_))
        ));
        assert!(matches!(
            mask_points(&[u64::MAX, 3], &mask),
            Err(Error::Overflow(_))
        ));
    }

    #[test]
    fn flags_select_indices() {
        assert_eq!(flag_indices(&[1, 0, 0, 2], 4, 0).unwrap(), [0, 3]);
        assert!(matches!(
            flag_indices(&[1], 4, 1),
            Err(Error::InvalidArgument(_))
        ));
    }
}
