//! `zarr diff`: the differences between two arrays or hierarchies, in any two stores: nodes on
//! one side only, kinds, Zarr formats, metadata members, attributes, and values (how many
//! differ, and the first). Exit status as `diff(1)`: 0 when they are the same, 1 when they
//! differ, 2 when they could not be compared.

use crate::values::{read_values, value, Range, BLOCK_ELEMENTS};
use crate::{attributes_json, kind_name, metadata_members, Result};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::sync::Arc;
use zarr::hierarchy::{self, NodeKind};
use zarr::store::AccessMode;
use zarr::{open_store, Array, Consolidated, Group, StoreHandle};

/// What `zarr diff` compares.
#[derive(clap::Args)]
pub struct Args {
    /// The first store
    left: String,
    /// The second store
    right: String,
    /// The node compared, in both stores (default: the root)
    #[arg(long, default_value = "")]
    path: String,
    /// The node in the second store, when not at the same path
    #[arg(long)]
    right_path: Option<String>,
    /// Options of the first store (JSON, as zarr_store_open_options takes them)
    #[arg(long, value_name = "JSON")]
    left_options: Option<String>,
    /// Options of the second store
    #[arg(long, value_name = "JSON")]
    right_options: Option<String>,
    /// Print a JSON list of {"path", "difference"} instead of text
    #[arg(long)]
    json: bool,
}

/// One side of a comparison: the store and the node's path in it.
struct Side {
    store: Arc<StoreHandle>,
    path: String,
}

/// Opens both sides and compares them ([`run`]).
pub fn command(args: &Args) -> Result<(String, bool)> {
    let side = |location: &str, options: Option<&str>, path: &str| -> Result<Side> {
        Ok(Side {
            store: open_store(location, AccessMode::Read, options, Consolidated::Use)?,
            path: zarr::path::normalize(path)?,
        })
    };
    let left = side(&args.left, args.left_options.as_deref(), &args.path)?;
    let right_path = args.right_path.as_deref().unwrap_or(&args.path);
    let right = side(&args.right, args.right_options.as_deref(), right_path)?;
    run(&left, &right, args.json)
}

/// One difference: the path below the compared nodes (`/` for them) and what differs.
struct Difference {
    path: String,
    what: String,
}

/// Compares the two nodes and everything below them: the differences as text (one line each)
/// or a JSON list, and whether there were any.
fn run(left: &Side, right: &Side, json: bool) -> Result<(String, bool)> {
    let mut found = Vec::new();
    compare(left, right, "", &mut found)?;
    let text = match json {
        true => serde_json::to_string_pretty(
            &found
                .iter()
                .map(|d| json!({"path": d.path, "difference": d.what}))
                .collect::<Vec<_>>(),
        )?,
        false => found
            .iter()
            .map(|d| format!("{}: {}", d.path, d.what))
            .collect::<Vec<_>>()
            .join("\n"),
    };
    Ok((text, !found.is_empty()))
}

/// The node `below` the compared ones on `side`.
fn at(side: &Side, below: &str) -> String {
    match below {
        "" => side.path.clone(),
        below => zarr::path::join(&side.path, below),
    }
}

/// Compares the nodes `below` the two sides' paths, adding what differs to `found`.
fn compare(left: &Side, right: &Side, below: &str, found: &mut Vec<Difference>) -> Result<()> {
    let shown = if below.is_empty() { "/" } else { below };
    let mut differ = |what: String| {
        found.push(Difference {
            path: shown.to_string(),
            what,
        })
    };
    let (l, r) = (
        hierarchy::node(&left.store, &at(left, below))?,
        hierarchy::node(&right.store, &at(right, below))?,
    );
    match (l.kind, r.kind) {
        (NodeKind::None, NodeKind::None) => {
            differ("in neither (no array or group there)".into());
            return Ok(());
        }
        (_, NodeKind::None) => {
            differ("only in the first".into());
            return Ok(());
        }
        (NodeKind::None, _) => {
            differ("only in the second".into());
            return Ok(());
        }
        (a, b) if a != b => {
            differ(format!("{} vs {}", kind_name(a), kind_name(b)));
            return Ok(());
        }
        _ => {}
    }
    if l.format != r.format {
        differ(format!("Zarr v{} vs v{}", l.format, r.format));
    }
    if l.kind == NodeKind::Array {
        let a = Array::open(left.store.clone(), &at(left, below))?;
        let b = Array::open(right.store.clone(), &at(right, below))?;
        compare_members(
            "metadata",
            &metadata_members(&a)?,
            &metadata_members(&b)?,
            &mut differ,
        );
        compare_members(
            "attributes",
            &attributes_json(a.attributes()?),
            &attributes_json(b.attributes()?),
            &mut differ,
        );
        if let Some(what) = compare_values(&a, &b)? {
            differ(what);
        }
        return Ok(());
    }
    let a = Group::open(left.store.clone(), &at(left, below))?;
    let b = Group::open(right.store.clone(), &at(right, below))?;
    compare_members(
        "attributes",
        &attributes_json(a.attributes()?),
        &attributes_json(b.attributes()?),
        &mut differ,
    );
    let names = |g: &Group| -> Result<BTreeSet<String>> {
        let members = g.members()?;
        Ok(members.arrays.into_iter().chain(members.groups).collect())
    };
    for name in names(&a)?.union(&names(&b)?) {
        compare(left, right, &zarr::path::join(below, name), found)?;
    }
    Ok(())
}

/// Adds one difference per member of two JSON objects that differs (`(absent)` for a member
/// on one side only); for other values, one for the whole.
fn compare_members(what: &str, a: &Value, b: &Value, differ: &mut impl FnMut(String)) {
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
        if a != b {
            differ(format!("{what}: {a} vs {b}"));
        }
        return;
    };
    let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    let shown = |v: Option<&Value>| v.map_or("(absent)".to_string(), Value::to_string);
    for key in keys {
        if a.get(key) != b.get(key) {
            differ(format!(
                "{what} {key:?}: {} vs {}",
                shown(a.get(key)),
                shown(b.get(key))
            ));
        }
    }
}

/// Compares the values of two arrays block by block of rows: `None` when they are equal, or
/// how many differ and the first (by index, both values as `zarr cat` prints them). Values
/// differ when their bytes differ and they print differently (so NaNs of other payloads are
/// equal); arrays of other shapes or data types are not compared.
fn compare_values(a: &Array, b: &Array) -> Result<Option<String>> {
    let (shape, dtype) = (a.shape(), a.metadata().dtype.clone());
    let object = a.object_codec().is_some();
    if shape != b.shape() || dtype != b.metadata().dtype || object != b.object_codec().is_some() {
        return Ok(Some(
            "values not compared (the shapes or data types differ)".into(),
        ));
    }
    let per_row = shape.iter().skip(1).product::<u64>().max(1);
    let rows_per_block = (BLOCK_ELEMENTS / per_row).max(1);
    let total = shape.first().copied().unwrap_or(1);
    let (mut differing, mut first) = (0u64, None);
    let mut note = |flat: u64, x: String, y: String| {
        differing += 1;
        first.get_or_insert((flat, x, y));
    };
    let (mut bytes_a, mut bytes_b) = (Vec::new(), Vec::new());
    let mut row = 0;
    while row < total {
        let rows = rows_per_block.min(total - row);
        let mut start = vec![0; shape.len()];
        let mut count = shape.clone();
        if let (Some(s), Some(c)) = (start.first_mut(), count.first_mut()) {
            (*s, *c) = (row, rows);
        }
        let base = row * per_row;
        if object {
            let ranges = Range::boxed(&start, &count);
            let va = read_values(a, &dtype, true, &ranges, false, &mut bytes_a)?;
            let vb = read_values(b, &dtype, true, &ranges, false, &mut bytes_b)?;
            for (i, (x, y)) in va.into_iter().zip(vb).enumerate() {
                if x != y {
                    note(base + i as u64, x, y);
                }
            }
        } else {
            let n = count.iter().product::<u64>() as usize * dtype.size;
            bytes_a.resize(n, 0);
            bytes_b.resize(n, 0);
            a.read_region(&start, &count, &mut bytes_a)?;
            b.read_region(&start, &count, &mut bytes_b)?;
            let size = dtype.size.max(1);
            for (i, (x, y)) in bytes_a.chunks(size).zip(bytes_b.chunks(size)).enumerate() {
                if x != y {
                    let (x, y) = (shown(&dtype, x), shown(&dtype, y));
                    if x != y {
                        note(base + i as u64, x, y);
                    }
                }
            }
        }
        row += rows;
    }
    Ok(first.map(|(flat, x, y)| {
        let elements = shape.iter().product::<u64>();
        format!(
            "values: {differing} of {elements} differ, the first at {:?}: {x} vs {y}",
            unravel(flat, &shape)
        )
    }))
}

/// A value as `zarr cat` prints it, or its bytes in hexadecimal for types it does not print.
fn shown(dtype: &zarr::dtype::DataType, item: &[u8]) -> String {
    value(dtype, item, false).unwrap_or_else(|_| item.iter().map(|b| format!("{b:02x}")).collect())
}

/// The index of the `flat`-th element of an array of `shape` (C order).
fn unravel(mut flat: u64, shape: &[u64]) -> Vec<u64> {
    let mut index = vec![0; shape.len()];
    for (i, &n) in shape.iter().enumerate().rev() {
        index[i] = flat % n.max(1);
        flat /= n.max(1);
    }
    index
}
