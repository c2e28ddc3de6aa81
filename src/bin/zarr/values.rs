//! `zarr cat`: the values of a selection of an array, printed block by block (so any size
//! streams), as text (one value per line for one dimension; for more, one line per innermost
//! row and a blank line between 2-D slabs) or JSON (nested lists).

use crate::{Node, Result};
use serde_json::Value;
use std::io::Write;
use zarr::dtype::{DataType, DataTypeKind, SmallType};
use zarr::{Array, Error};

/// Values read and printed at once (about; at least one row of the first dimension).
pub const BLOCK_ELEMENTS: u64 = 1 << 20;

/// One dimension of a selection: `start`, `count` elements `step` apart; `index`: selected
/// by a single index, so left out of the printed shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    start: u64,
    count: u64,
    step: u64,
    index: bool,
}

impl Range {
    /// The box of `count` from `start`, every dimension printed.
    pub fn boxed(start: &[u64], count: &[u64]) -> Vec<Range> {
        start
            .iter()
            .zip(count)
            .map(|(&start, &count)| Range {
                start,
                count,
                step: 1,
                index: false,
            })
            .collect()
    }
}

/// Parses `select` (`"0:10, 5, ::2"`: per dimension `START:STOP[:STEP]` with parts left out
/// as in Python, negative positions from the end, or one index; dimensions left out entirely)
/// against `shape`.
fn parse_selection(select: &str, shape: &[u64]) -> Result<Vec<Range>> {
    let parts: Vec<&str> = match select.trim() {
        "" => Vec::new(),
        text => text.split(',').map(str::trim).collect(),
    };
    if parts.len() > shape.len() {
        return Err(bad(
            select,
            &format!("{} dimensions, the array has {}", parts.len(), shape.len()),
        ));
    }
    let mut ranges = Vec::with_capacity(shape.len());
    for (d, &n) in shape.iter().enumerate() {
        let part = parts.get(d).copied().unwrap_or(":");
        let integer = |text: &str| -> Result<i128> {
            text.parse()
                .map_err(|_| bad(select, &format!("{text:?} is no integer")))
        };
        // A position counted from the end when negative, not yet clamped to the dimension.
        let from_end = |value: i128| if value < 0 { n as i128 + value } else { value };
        let position = |text: &str, default: u64| -> Result<u64> {
            match text {
                "" => Ok(default),
                text => Ok(from_end(integer(text)?).clamp(0, n as i128) as u64),
            }
        };
        let range = match part.split(':').collect::<Vec<_>>()[..] {
            [index] => {
                let at = from_end(integer(index)?);
                if !(0..n as i128).contains(&at) {
                    return Err(bad(
                        select,
                        &format!("index {index} is outside dimension {d} of length {n}"),
                    ));
                }
                Range {
                    start: at as u64,
                    count: 1,
                    step: 1,
                    index: true,
                }
            }
            [from, to] | [from, to, ""] => step_range(position(from, 0)?, position(to, n)?, 1),
            [from, to, step] => {
                let step: u64 = step.parse().ok().filter(|&s| s > 0).ok_or_else(|| {
                    bad(select, &format!("step {step:?} must be a positive integer"))
                })?;
                step_range(position(from, 0)?, position(to, n)?, step)
            }
            _ => {
                return Err(bad(
                    select,
                    &format!("{part:?} is neither START:STOP[:STEP] nor an index"),
                ))
            }
        };
        ranges.push(range);
    }
    Ok(ranges)
}

/// The range from `start` up to (not including) `stop`, `step` apart.
fn step_range(start: u64, stop: u64, step: u64) -> Range {
    let count = if stop > start {
        (stop - start).div_ceil(step)
    } else {
        0
    };
    Range {
        start,
        count,
        step,
        index: false,
    }
}

/// The error for a selection that cannot be read, saying why.
fn bad(select: &str, why: &str) -> Box<dyn std::error::Error> {
    Error::InvalidArgument(format!("--select {select:?}: {why}")).into()
}

/// Prints the selection's values to stdout.
pub fn cat(node: &Node, select: &str, json: bool) -> Result<String> {
    let store = node.store(false)?;
    let array = Array::open(store, &zarr::path::normalize(&node.path)?)?;
    let ranges = parse_selection(select, &array.shape())?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    write_selection(&mut out, &array, &ranges, json)?;
    out.flush()?;
    Ok(String::new())
}

/// Whether `cat` prints the values of `array` (not those of raw types and records, unless
/// records with object fields, whose elements are JSON text).
pub fn printable(array: &Array) -> bool {
    array.object_codec().is_some()
        || !matches!(
            array.metadata().dtype.kind,
            DataTypeKind::Raw | DataTypeKind::Structured(_)
        )
}

/// Writes all the values of `array` to `out`, as `cat` prints them.
pub fn write_all(out: &mut dyn Write, array: &Array, json: bool) -> Result<()> {
    write_selection(out, array, &parse_selection("", &array.shape())?, json)
}

/// Writes the values of the selection `ranges` of `array` to `out`, block by block.
fn write_selection(out: &mut dyn Write, array: &Array, ranges: &[Range], json: bool) -> Result<()> {
    let dtype = array.metadata().dtype.clone();
    let object = array.object_codec().is_some();
    if object && ranges.iter().any(|r| r.step != 1) {
        return Err(
            Error::Unsupported("steps in a selection of an object (|O) array".into()).into(),
        );
    }
    let printed: Vec<u64> = ranges
        .iter()
        .filter(|r| !r.index)
        .map(|r| r.count)
        .collect();
    if ranges.is_empty() {
        // A 0-d array: one value.
        let values = read_values(array, &dtype, object, &[], json, &mut Vec::new())?;
        writeln!(out, "{}", values[0])?;
        return Ok(());
    }
    // Blocks of whole rows of the first dimension.
    let per_row = ranges[1..].iter().map(|r| r.count).product::<u64>() as usize;
    let rows_per_block = (BLOCK_ELEMENTS / per_row.max(1) as u64).max(1);
    let row_shape: Vec<u64> = printed[usize::from(!ranges[0].index)..].to_vec();
    let total = ranges[0].count;
    if json && !ranges[0].index {
        write!(out, "[")?;
    }
    let (mut done, mut bytes) = (0, Vec::new());
    while done < total {
        let rows = rows_per_block.min(total - done);
        let mut block = ranges.to_vec();
        block[0].start = ranges[0].start + done * ranges[0].step;
        block[0].count = rows;
        let values = read_values(array, &dtype, object, &block, json, &mut bytes)?;
        for r in 0..rows as usize {
            let row = &values[r * per_row..(r + 1) * per_row];
            let first = done == 0 && r == 0;
            if json {
                if !first {
                    write!(out, ",")?;
                }
                write!(out, "{}", nested_json(row, &row_shape))?;
            } else {
                if !first && row_shape.len() >= 2 {
                    writeln!(out)?; // a blank line between 2-D slabs
                }
                write_text(out, row, &row_shape)?;
            }
        }
        done += rows;
    }
    if json {
        writeln!(out, "{}", if ranges[0].index { "" } else { "]" })?;
    }
    Ok(())
}

/// Reads the selection `ranges` (C order), each value as it is printed (`json`: a JSON
/// token), through `bytes`, a buffer kept between blocks.
pub fn read_values(
    array: &Array,
    dtype: &DataType,
    object: bool,
    ranges: &[Range],
    json: bool,
    bytes: &mut Vec<u8>,
) -> Result<Vec<String>> {
    let start: Vec<u64> = ranges.iter().map(|r| r.start).collect();
    let count: Vec<u64> = ranges.iter().map(|r| r.count).collect();
    let n = count.iter().product::<u64>() as usize;
    if object {
        let bytes = array.vlen_size(&start, &count)? as usize;
        let (mut offsets, mut data) = (vec![0i64; n + 1], vec![0u8; bytes]);
        array.read_vlen(&start, &count, &mut offsets, &mut data)?;
        // Items that are JSON text (pickle records and objects) are JSON tokens as they are.
        let as_is = json && array.json_items();
        return Ok(offsets
            .windows(2)
            .map(|w| {
                let item = String::from_utf8_lossy(&data[w[0] as usize..w[1] as usize]);
                match as_is {
                    true => item.into_owned(),
                    false => text_value(&item, json),
                }
            })
            .collect());
    }
    let step: Vec<u64> = ranges.iter().map(|r| r.step).collect();
    bytes.resize(n * dtype.size, 0);
    array.read_strided(&start, &count, &step, bytes)?;
    bytes
        .chunks(dtype.size.max(1))
        .take(n)
        .map(|item| value(dtype, item, json))
        .collect()
}

/// A string as printed: itself, or a JSON string (`json`).
fn text_value(text: &str, json: bool) -> String {
    match json {
        true => Value::from(text).to_string(),
        false => text.to_string(),
    }
}

/// A float of 2, 4 or 8 bytes (native order) as printed: the shortest decimal that reads
/// back to the same value of its own width; NaN and infinities as Zarr spells them in
/// metadata (JSON strings with `json`).
fn float_value(b: &[u8], json: bool) -> String {
    let (wide, text) = match b.len() {
        2 => {
            let x = half::f16::from_ne_bytes([b[0], b[1]]);
            (x.to_f64(), x.to_string())
        }
        4 => {
            let x = f32::from_ne_bytes(b.try_into().expect("4 bytes"));
            (x as f64, x.to_string())
        }
        8 => {
            let x = f64::from_ne_bytes(b.try_into().expect("8 bytes"));
            (x, x.to_string())
        }
        // A long double, shown as the nearest f64.
        _ => {
            let x = zarr::dtype::float_of(b);
            (x, x.to_string())
        }
    };
    special_or(wide, text, json)
}

/// `text` for a finite `x`; NaN and infinities as Zarr spells them in metadata.
fn special_or(x: f64, text: String, json: bool) -> String {
    match x {
        x if x.is_nan() => text_value("NaN", json),
        x if x == f64::INFINITY => text_value("Infinity", json),
        x if x == f64::NEG_INFINITY => text_value("-Infinity", json),
        _ => text,
    }
}

/// One element (native byte order) as printed (`json`: a JSON token). Date-times and time
/// deltas are their counts of the type's unit.
pub fn value(dtype: &DataType, item: &[u8], json: bool) -> Result<String> {
    let bytes = |n: usize| -> [u8; 8] {
        let mut out = [0u8; 8];
        out[..n].copy_from_slice(&item[..n]);
        out
    };
    Ok(match &dtype.kind {
        DataTypeKind::Bool => (item[0] != 0).to_string(),
        DataTypeKind::Int | DataTypeKind::DateTime(_) | DataTypeKind::TimeDelta(_) => {
            match item.len() {
                1 => (item[0] as i8).to_string(),
                2 => i16::from_ne_bytes([item[0], item[1]]).to_string(),
                4 => i32::from_ne_bytes(item.try_into().expect("4 bytes")).to_string(),
                _ => i64::from_ne_bytes(bytes(8)).to_string(),
            }
        }
        DataTypeKind::UInt => match item.len() {
            1 => item[0].to_string(),
            2 => u16::from_ne_bytes([item[0], item[1]]).to_string(),
            4 => u32::from_ne_bytes(item.try_into().expect("4 bytes")).to_string(),
            _ => u64::from_ne_bytes(bytes(8)).to_string(),
        },
        DataTypeKind::Float => float_value(item, json),
        DataTypeKind::Complex => {
            let half = item.len() / 2;
            format!(
                "[{},{}]",
                float_value(&item[..half], json),
                float_value(&item[half..], json)
            )
        }
        DataTypeKind::Bytes => {
            let end = item.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
            text_value(&String::from_utf8_lossy(&item[..end]), json)
        }
        DataTypeKind::Unicode => {
            let text: String = item
                .chunks(4)
                .map(|c| u32::from_ne_bytes(c.try_into().expect("4 bytes")))
                .take_while(|&c| c != 0)
                .map(|c| char::from_u32(c).unwrap_or(char::REPLACEMENT_CHARACTER))
                .collect();
            text_value(&text, json)
        }
        DataTypeKind::Small(SmallType::Float(format)) => {
            let x = format.to_f64(SmallType::code(item));
            special_or(x, x.to_string(), json)
        }
        DataTypeKind::Small(SmallType::Int { signed: true, .. }) => (item[0] as i8).to_string(),
        DataTypeKind::Small(SmallType::Int { .. }) => item[0].to_string(),
        DataTypeKind::Raw | DataTypeKind::Structured(_) | DataTypeKind::Object => {
            return Err(Error::Unsupported(format!(
                "printing values of type {} (zarr info describes it)",
                dtype.to_json()
            ))
            .into());
        }
    })
}

/// `values` (C order, of `shape`) as nested JSON lists.
fn nested_json(values: &[String], shape: &[u64]) -> String {
    match shape.split_first() {
        None => values.first().cloned().unwrap_or_default(),
        Some((&n, rest)) => {
            let per = rest.iter().product::<u64>() as usize;
            let items: Vec<String> = (0..n as usize)
                .map(|i| nested_json(&values[i * per..(i + 1) * per], rest))
                .collect();
            format!("[{}]", items.join(","))
        }
    }
}

/// `values` (C order, of `shape`) as lines of the innermost dimension, a blank line between
/// 2-D slabs.
fn write_text(out: &mut dyn Write, values: &[String], shape: &[u64]) -> std::io::Result<()> {
    let line = shape.last().map_or(1, |&n| n as usize);
    if line == 0 {
        return Ok(());
    }
    let slab = shape.iter().rev().take(2).product::<u64>() as usize;
    for (i, row) in values.chunks(line).enumerate() {
        if i > 0 && shape.len() >= 3 && (i * line).is_multiple_of(slab) {
            writeln!(out)?;
        }
        writeln!(out, "{}", row.join(" "))?;
    }
    Ok(())
}
