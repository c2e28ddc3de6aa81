//! Byte-order conversion of whole elements, including records with fields of mixed order.

use super::{ByteOrder, DataType, DataTypeKind};

/// How one stored element becomes native (or back): which byte ranges are reversed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ByteSwap {
    /// The stored order is native (or the type has none).
    None,
    /// Every `n`-byte unit of the element is reversed (e.g. each half of a complex value).
    Uniform(usize),
    /// The listed `(offset, length)` ranges are reversed (records with mixed fields).
    Ranges(Vec<(usize, usize)>),
}

impl ByteSwap {
    /// The conversion `dtype` needs on this machine.
    pub fn for_type(dtype: &DataType) -> ByteSwap {
        let mut ranges = Vec::new();
        collect(dtype, 0, &mut ranges);
        match ranges.first() {
            None => ByteSwap::None,
            Some(&(_, unit)) if tiles(&ranges, unit, dtype.size) => ByteSwap::Uniform(unit),
            Some(_) => ByteSwap::Ranges(ranges),
        }
    }

    /// Whether elements are copied as they are.
    pub fn is_none(&self) -> bool {
        matches!(self, ByteSwap::None)
    }

    /// Converts one element in place.
    pub fn apply(&self, element: &mut [u8]) {
        match self {
            ByteSwap::None => {}
            ByteSwap::Uniform(unit) => element.chunks_exact_mut(*unit).for_each(<[u8]>::reverse),
            ByteSwap::Ranges(ranges) => ranges
                .iter()
                .for_each(|&(o, n)| element[o..o + n].reverse()),
        }
    }

    /// The ranges that are reversed, shifted by `offset`, for embedding in a larger element.
    pub fn ranges(&self, size: usize) -> Vec<(usize, usize)> {
        match self {
            ByteSwap::None => Vec::new(),
            ByteSwap::Uniform(unit) => (0..size / unit).map(|i| (i * unit, *unit)).collect(),
            ByteSwap::Ranges(ranges) => ranges.clone(),
        }
    }
}

/// Whether `ranges` are consecutive `unit`-byte ranges covering `size` bytes from 0.
fn tiles(ranges: &[(usize, usize)], unit: usize, size: usize) -> bool {
    ranges.len() * unit == size
        && ranges
            .iter()
            .enumerate()
            .all(|(i, &(o, n))| o == i * unit && n == unit)
}

/// Appends the ranges to reverse for one element of `dtype` placed at `base`.
fn collect(dtype: &DataType, base: usize, out: &mut Vec<(usize, usize)>) {
    let foreign = dtype.order != ByteOrder::NotApplicable && dtype.order != ByteOrder::NATIVE;
    let unit = match &dtype.kind {
        DataTypeKind::Structured(fields) => {
            for field in fields {
                for i in 0..field.count() {
                    collect(
                        &field.dtype,
                        base + field.offset + i * field.dtype.size,
                        out,
                    );
                }
            }
            return;
        }
        _ if !foreign => return,
        DataTypeKind::Complex => dtype.size / 2,
        DataTypeKind::Unicode => 4,
        DataTypeKind::Bytes | DataTypeKind::Raw | DataTypeKind::Bool | DataTypeKind::Object => {
            return
        }
        _ => dtype.size,
    };
    if unit > 1 {
        out.extend((0..dtype.size / unit).map(|i| (base + i * unit, unit)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn swap(doc: serde_json::Value) -> ByteSwap {
        DataType::parse(&doc).unwrap().byte_swap()
    }

    #[test]
    fn plans_swaps_per_type() {
        let (native, foreign) = if cfg!(target_endian = "little") {
            ("<", ">")
        } else {
            (">", "<")
        };
        assert_eq!(swap(json!(format!("{native}f8"))), ByteSwap::None);
        assert_eq!(swap(json!(format!("{foreign}f8"))), ByteSwap::Uniform(8));
        assert_eq!(swap(json!(format!("{foreign}c8"))), ByteSwap::Uniform(4));
        assert_eq!(swap(json!(format!("{foreign}U3"))), ByteSwap::Uniform(4));
        assert_eq!(
            swap(json!(format!("{foreign}M8[ns]"))),
            ByteSwap::Uniform(8)
        );
        assert_eq!(swap(json!("|S8")), ByteSwap::None);
        let record = json!([
            ["a", format!("{foreign}i2")],
            ["b", "|S3"],
            ["c", format!("{native}f4")],
            ["d", format!("{foreign}u4"), [2]]
        ]);
        assert_eq!(
            swap(record),
            ByteSwap::Ranges(vec![(0, 2), (9, 4), (13, 4)])
        );
        let mut element = [1u8, 2, 3, 4, 5, 6];
        ByteSwap::Ranges(vec![(0, 2), (3, 3)]).apply(&mut element);
        assert_eq!(element, [2, 1, 3, 6, 5, 4]);
    }
}
