//! `zarr copy`: keys verbatim between any two stores, or an array re-encoded with changed
//! metadata (rechunk, recompress, v2 to v3), with a progress bar when stderr is a terminal.

use crate::Result;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::ops::ControlFlow;
use zarr::copy::{copy_array, copy_store, Progress};
use zarr::redact::redact_url;
use zarr::store::AccessMode;
use zarr::{open_store, Array, Consolidated};

/// Blocks an array copy moves at once (or one destination chunk, if larger).
const BLOCK_BYTES: u64 = 64 << 20;

/// Both ends of a copy and how.
pub struct Copy<'a> {
    pub src: &'a str,
    pub src_path: &'a str,
    pub src_options: Option<&'a str>,
    pub dst: &'a str,
    pub dst_path: &'a str,
    pub dst_options: Option<&'a str>,
    /// Metadata members to change (a JSON object): the array is re-encoded.
    pub overrides: Option<&'a str>,
}

/// Runs the copy and says what it moved.
pub fn run(copy: &Copy) -> Result<String> {
    let src = open_store(
        copy.src,
        AccessMode::Read,
        copy.src_options,
        Consolidated::Use,
    )?;
    let dst = open_store(
        copy.dst,
        AccessMode::Append,
        copy.dst_options,
        Consolidated::Use,
    )?;
    let bar = progress_bar();
    let mut last = Progress::default();
    let mut report = |p: &Progress| {
        if let Some(bar) = &bar {
            bar.set_length(p.bytes_total);
            bar.set_position(p.bytes_done);
        }
        last = *p;
        ControlFlow::Continue(())
    };
    let what = match copy.overrides {
        None => {
            copy_store(&src, copy.src_path, &dst, copy.dst_path, &mut report)?;
            "keys"
        }
        Some(overrides) => {
            let array = Array::open(src, copy.src_path)?;
            copy_array(
                &array,
                dst.clone(),
                copy.dst_path,
                overrides,
                BLOCK_BYTES,
                &mut report,
            )?;
            "elements"
        }
    };
    dst.close()?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    Ok(format!(
        "copied {} {what} ({} bytes) from {} to {}",
        last.items_done,
        last.bytes_done,
        redact_url(copy.src),
        redact_url(copy.dst)
    ))
}

/// A bar on stderr when it is a terminal; nothing on a pipe or a file.
fn progress_bar() -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::new(0);
    let style =
        ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {bytes_per_sec} {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    Some(bar)
}
