//! Benchmark worker for the Rust-side implementations: libzarr, zarrs and the two physical
//! references. `zarr-bench IMPL` prints a greeting line, then answers each JSON request read
//! from stdin with one JSON line on stdout (protocol: bench/README.md). `bench/run.py` drives
//! it; timings cover whole operations, opening the array included.

mod libzarr;
mod network;
mod reference;
mod subject;
mod zarrs_subject;

use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::time::Instant;
use subject::{Box3, Result, Sink, Subject, Unsupported};

fn subject(name: &str) -> Option<Box<dyn Subject>> {
    Some(match name {
        "libzarr" => Box::<libzarr::Libzarr>::default(),
        "libzarr-aligned" => Box::new(libzarr::Libzarr::aligned()),
        "libzarr-cache-64M" => Box::new(libzarr::Libzarr::caching(64 << 20)),
        "libzarr-cache-1G" => Box::new(libzarr::Libzarr::caching(1 << 30)),
        "zarrs" => Box::new(zarrs_subject::Zarrs),
        "raw-files" => Box::new(reference::RawFiles),
        "memcpy" => Box::new(reference::Memcpy::default()),
        "codec" => Box::new(reference::CodecFloor::new(0)),
        "codec-1t" => Box::new(reference::CodecFloor::new(1)),
        "network" => Box::new(network::NetworkFloor::new()),
        _ => return None,
    })
}

/// Loads a raw little-endian `u16` file (the array's values in C order).
fn load_u16(path: &str) -> Result<Vec<u16>> {
    let bytes = std::fs::read(path)?;
    Ok(bytes
        .chunks_exact(2)
        .map(|b| u16::from_le_bytes([b[0], b[1]]))
        .collect())
}

fn u64s(value: &Value) -> Result<Vec<u64>> {
    value
        .as_array()
        .and_then(|a| a.iter().map(Value::as_u64).collect())
        .ok_or_else(|| format!("expected a list of integers, got {value}").into())
}

/// A list of integer lists (`starts`, `counts`).
fn u64_lists(value: &Value, what: &str) -> Result<Vec<Vec<u64>>> {
    value
        .as_array()
        .ok_or_else(|| format!("no {what}"))?
        .iter()
        .map(u64s)
        .collect()
}

/// A box request's `starts` (one list per box) and each box's shape: its `counts` (one list
/// per box: a rectilinear grid's chunks), or its `count` shared by all boxes.
fn box_fields(request: &Value) -> Result<(Vec<Vec<u64>>, Vec<Vec<u64>>)> {
    let starts = u64_lists(&request["starts"], "starts")?;
    let counts = match request.get("counts") {
        Some(counts) => u64_lists(counts, "counts")?,
        None => vec![u64s(&request["count"])?; starts.len()],
    };
    match counts.len() == starts.len() {
        true => Ok((starts, counts)),
        false => Err("starts and counts differ in length".into()),
    }
}

fn boxes<'a>(starts: &'a [Vec<u64>], counts: &'a [Vec<u64>]) -> Vec<Box3<'a>> {
    starts
        .iter()
        .zip(counts)
        .map(|(start, count)| Box3 { start, count })
        .collect()
}

/// The worker's state across requests: the implementation and the write sources it loaded.
struct Worker {
    subject: Box<dyn Subject>,
    sources: HashMap<String, Vec<u16>>,
}

impl Worker {
    /// Runs one request and returns its timing (and CRC-32 of what it read, if asked).
    fn handle(&mut self, request: &Value) -> Result<Value> {
        let str_field = |key: &str| -> Result<&str> {
            request[key]
                .as_str()
                .ok_or_else(|| format!("request has no {key:?}").into())
        };
        let path = str_field("path")?;
        let mut sink = Sink::new(request["verify"].as_bool().unwrap_or(false));
        let subject = &self.subject;
        subject.use_store_options(&request["store_options"])?;
        let measured = match str_field("op")? {
            "open" => timed(|| subject.open_hierarchy(path, str_field("array")?))?,
            "read_all" => timed(|| subject.read_all(path, &mut sink))?,
            "read_boxes" => {
                let (starts, counts) = box_fields(request)?;
                let boxes = boxes(&starts, &counts);
                timed(|| subject.read_boxes(path, &boxes, &mut sink))?
            }
            "read_boxes_threads" => {
                let threads = request["threads"].as_u64().ok_or("no threads")? as usize;
                let (starts, counts) = box_fields(request)?;
                let boxes = boxes(&starts, &counts);
                timed(|| subject.read_boxes_threads(path, &boxes, threads, &mut sink))?
            }
            "read_strided" => {
                let step = request["step"].as_u64().ok_or("no step")?;
                timed(|| subject.read_strided(path, step, &mut sink))?
            }
            "write" => {
                let source = str_field("source")?;
                if !self.sources.contains_key(source) {
                    self.sources.insert(source.to_string(), load_u16(source)?);
                }
                let data = &self.sources[source];
                timed(|| subject.write(path, &request["metadata"], data))?
            }
            op => return Err(format!("unknown op {op:?}").into()),
        };
        // Memory the call needed beyond what the worker held resident before it.
        let peak_bytes = measured
            .peak_resident
            .zip(measured.resident_before)
            .map(|(peak, before)| peak.saturating_sub(before));
        Ok(json!({"seconds": measured.seconds, "crc32": sink.crc32(),
                  "read_bytes": measured.read_bytes, "peak_bytes": peak_bytes}))
    }
}

/// What one timed operation measured.
struct Measured {
    seconds: f64,
    /// Bytes read meanwhile ([`rchar`]).
    read_bytes: Option<u64>,
    /// The memory the process held resident just before.
    resident_before: Option<u64>,
    /// The most memory the process held resident meanwhile ([`reset_peak_memory`]).
    peak_resident: Option<u64>,
}

/// Runs `f` and measures it.
fn timed(f: impl FnOnce() -> Result<()>) -> Result<Measured> {
    reset_peak_memory();
    let resident_before = status_bytes("VmRSS:");
    let before = rchar();
    let start = Instant::now();
    f()?;
    let seconds = start.elapsed().as_secs_f64();
    Ok(Measured {
        seconds,
        read_bytes: rchar().zip(before).map(|(after, before)| after - before),
        resident_before,
        peak_resident: status_bytes("VmHWM:"),
    })
}

/// A field of /proc/self/status in bytes (Linux; `None` elsewhere).
fn status_bytes(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix(field))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib * 1024)
}

/// Resets the process's peak resident memory (VmHWM) to its current size by writing 5 to
/// /proc/self/clear_refs (Linux; nothing elsewhere).
fn reset_peak_memory() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Bytes this process (all its threads) has read through `read`-family system calls, from
/// page cache or disk: `rchar` of `/proc/self/io` (Linux; `None` elsewhere). Reading that
/// file counts too, a few hundred bytes; `bench/run.py` measures and subtracts it.
fn rchar() -> Option<u64> {
    let io = std::fs::read_to_string("/proc/self/io").ok()?;
    io.lines()
        .find_map(|line| line.strip_prefix("rchar:"))
        .and_then(|n| n.trim().parse().ok())
}

fn main() {
    let name = std::env::args().nth(1).unwrap_or_default();
    let Some(subject) = subject(&name) else {
        eprintln!(
            "usage: zarr-bench libzarr|libzarr-aligned|libzarr-cache-64M|libzarr-cache-1G|zarrs|raw-files|memcpy|codec|codec-1t|network  (then JSON requests on stdin)"
        );
        std::process::exit(2);
    };
    let mut out = std::io::stdout().lock();
    let hello = json!({"impl": name, "version": subject.version(), "threads": subject.threads()});
    writeln!(out, "{hello}")
        .and_then(|_| out.flush())
        .expect("stdout");
    let mut worker = Worker {
        subject,
        sources: HashMap::new(),
    };
    for line in std::io::stdin().lock().lines() {
        let line = line.expect("stdin");
        let reply = match serde_json::from_str(&line)
            .map_err(Into::into)
            .and_then(|r| worker.handle(&r))
        {
            Ok(reply) => reply,
            Err(e) if e.is::<Unsupported>() => json!({"unsupported": e.to_string()}),
            Err(e) => json!({"error": e.to_string()}),
        };
        writeln!(out, "{reply}")
            .and_then(|_| out.flush())
            .expect("stdout");
    }
}
