//! `zarr bench`: how fast libzarr reads a store here: every array at or below a node read
//! whole, `--repeat` times, block by block of whole chunk rows into one buffer (at most about
//! [`BLOCK_BYTES`], so any size fits); per array the best and median times, the decoded and
//! stored bytes per second, and on a remote store the requests of one read.

use crate::{Node, Result};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Instant;
use zarr::hierarchy::NodeKind;
use zarr::{Array, Group, StoreHandle};

/// The most bytes one block read asks for (unless one chunk row is larger).
const BLOCK_BYTES: u64 = 256 << 20;

/// What `zarr bench` measures.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    node: Node,
    /// How many times each array is read
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    repeat: u32,
    /// Worker threads (zarr_set_num_threads; default: ZARR_NUM_THREADS, else every core)
    #[arg(long)]
    threads: Option<usize>,
    /// Print JSON instead of text
    #[arg(long)]
    json: bool,
}

/// Reads every array at or below the node and reports the speeds.
pub fn run(args: &Args) -> Result<String> {
    if let Some(threads) = args.threads {
        zarr::parallel::set_num_threads(threads)?;
    }
    let (store, path, found) = args.node.find(false)?;
    let mut arrays = Vec::new();
    arrays_below(&store, &path, found.kind, &mut arrays)?;
    let mut rows = Vec::new();
    let mut buffer = Vec::new();
    for path in arrays {
        let array = Array::open(store.clone(), &path)?;
        if array.object_codec().is_some() {
            rows.push(json!({"path": path, "skipped": "object (|O) values are not timed"}));
            continue;
        }
        let before = store.request_stats();
        let mut times = Vec::new();
        for _ in 0..args.repeat {
            let started = Instant::now();
            read_whole(&array, &mut buffer)?;
            times.push(started.elapsed());
        }
        let requests = match (before, store.request_stats()) {
            (Some(a), Some(b)) => json!((b.requests - a.requests) / u64::from(args.repeat)),
            _ => Value::Null,
        };
        times.sort();
        let (best, median) = (times[0], times[times.len() / 2]);
        let decoded = array.shape().iter().product::<u64>() * array.metadata().dtype.size as u64;
        // Sizes stored need a listing, which web servers refuse.
        let stored = array.info().ok().and_then(|i| i["nbytes_stored"].as_u64());
        let per_second = |bytes: u64| bytes as f64 / best.as_secs_f64().max(1e-9);
        rows.push(json!({
            "path": path,
            "bytes_decoded": decoded,
            "bytes_stored": stored,
            "best_seconds": best.as_secs_f64(),
            "median_seconds": median.as_secs_f64(),
            "decoded_bytes_per_second": per_second(decoded),
            "stored_bytes_per_second": stored.map(per_second),
            "requests_per_read": requests,
        }));
    }
    if args.json {
        return Ok(serde_json::to_string_pretty(&rows)?);
    }
    Ok(rows.iter().map(text_line).collect::<Vec<_>>().join("\n"))
}

/// The arrays at or below `path` (of `kind`), depth first, members by name.
fn arrays_below(
    store: &Arc<StoreHandle>,
    path: &str,
    kind: NodeKind,
    out: &mut Vec<String>,
) -> Result<()> {
    if kind == NodeKind::Array {
        out.push(path.to_string());
        return Ok(());
    }
    for (name, kind) in crate::members_by_name(&Group::open(store.clone(), path)?)? {
        arrays_below(store, &zarr::path::join(path, &name), kind, out)?;
    }
    Ok(())
}

/// Reads the whole array into `buffer`, block by block of whole chunk rows.
fn read_whole(array: &Array, buffer: &mut Vec<u8>) -> Result<()> {
    let shape = array.shape();
    let item = array.metadata().dtype.size as u64;
    let Some((&rows, rest)) = shape.split_first() else {
        buffer.resize(item as usize, 0);
        return Ok(array.read_region(&[], &[], buffer)?);
    };
    let row_bytes = rest.iter().product::<u64>() * item;
    let chunk_rows = array.metadata().grid.axis(0).max_len();
    let block_rows = chunk_rows * (BLOCK_BYTES / (chunk_rows * row_bytes).max(1)).max(1);
    let mut start = vec![0; shape.len()];
    let mut count = shape.clone();
    while start[0] < rows {
        count[0] = block_rows.min(rows - start[0]);
        buffer.resize((count[0] * row_bytes) as usize, 0);
        array.read_region(&start, &count, buffer)?;
        start[0] += count[0];
    }
    Ok(())
}

/// One array's line of the text report.
fn text_line(row: &Value) -> String {
    let path = row["path"].as_str().unwrap_or_default();
    if let Some(why) = row["skipped"].as_str() {
        return format!("{path}: skipped: {why}");
    }
    let mb = |v: &Value| {
        v.as_f64()
            .map_or("?".to_string(), |b| format!("{:.1}", b / 1e6))
    };
    let ms = |v: &Value| format!("{:.2}", v.as_f64().unwrap_or(0.0) * 1e3);
    let mut line = format!(
        "{path}: {} MB decoded, {} MB stored: best {} ms, median {} ms; {} MB/s decoded, {} MB/s stored",
        mb(&row["bytes_decoded"]),
        mb(&row["bytes_stored"]),
        ms(&row["best_seconds"]),
        ms(&row["median_seconds"]),
        mb(&row["decoded_bytes_per_second"]),
        mb(&row["stored_bytes_per_second"]),
    );
    if let Some(requests) = row["requests_per_read"].as_u64() {
        line += &format!("; {requests} requests per read");
    }
    line
}
