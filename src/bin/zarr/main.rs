//! `zarr`: look into a Zarr store from the shell, as `ncdump`, `h5ls` and `gdalinfo` do for
//! their formats. Built on the library; every command takes a store location (a directory,
//! `.zip`, `s3://`, `az://`, `gs://`, `http(s)://`, as `zarr_store_open` reads them) and a node
//! path inside it (the root when left out). Errors go to stderr as `zarr: MESSAGE`, with exit
//! status 1; usage errors exit with 2.

mod attrs;
mod bench;
mod copy;
mod diff;
mod dump;
mod edit;
mod info;
mod listing;
mod values;

use clap::{CommandFactory, Parser, Subcommand};
use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use zarr::hierarchy::{self, NodeKind};
use zarr::redact::{redact, redact_url};
use zarr::store::AccessMode;
use zarr::{Consolidated, StoreHandle};

#[derive(Parser)]
#[command(
    name = "zarr",
    version,
    about = "Look into Zarr v2 and v3 stores (libzarr)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Where a command looks: the store and the node in it.
#[derive(clap::Args)]
struct Node {
    /// The store: a directory, a .zip file, s3://bucket/prefix, az://, gs://, http(s)://
    location: String,
    /// The node's path in the store (default: the root)
    #[arg(default_value = "")]
    path: String,
    /// Store options as a JSON object (zarr_store_open_options), e.g. '{"endpoint": "..."}'
    #[arg(long, value_name = "JSON")]
    options: Option<String>,
    /// Read each node's own metadata documents, not the store's consolidated metadata
    /// (ZARR_OPEN_IGNORE_CONSOLIDATED)
    #[arg(long)]
    ignore_consolidated: bool,
}

/// What a command gives: the text to print, or the error to report.
type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

impl Node {
    /// Opens the store as the C API's `zarr_store_open_options` does (consolidated metadata
    /// read when there is some, unless told not to), read-only unless `writable`.
    fn store(&self, writable: bool) -> zarr::Result<Arc<StoreHandle>> {
        let mode = match writable {
            true => AccessMode::Append,
            false => AccessMode::Read,
        };
        let consolidated = match self.ignore_consolidated {
            true => Consolidated::Ignore,
            false => Consolidated::Use,
        };
        zarr::open_store(&self.location, mode, self.options.as_deref(), consolidated)
    }

    /// The location for messages: its secrets hidden ([`redact_url`]).
    fn shown(&self) -> Cow<'_, str> {
        redact_url(&self.location)
    }

    /// Opens the store and finds the array or group at the node's path: the store, the
    /// normalised path and what lives there (kind and format); an error naming path and store
    /// when nothing does.
    fn find(&self, writable: bool) -> Result<(Arc<StoreHandle>, String, hierarchy::Node)> {
        let store = self.store(writable)?;
        let path = zarr::path::normalize(&self.path)?;
        let found = hierarchy::node(&store, &path)?;
        if found.kind == NodeKind::None {
            return Err(zarr::Error::NotFound(format!(
                "no array or group at {path:?} in {}",
                self.shown()
            ))
            .into());
        }
        Ok((store, path, found))
    }
}

/// Attributes as a JSON value: those holding NaN or Infinity (as zarr-python writes them) are
/// no strict JSON, and are kept as the text stored.
fn attributes_json(text: String) -> serde_json::Value {
    serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text))
}

/// An array's metadata document without what is shown on its own: the format, the node type
/// and the attributes.
fn metadata_members(array: &zarr::Array) -> zarr::Result<serde_json::Value> {
    let mut document = array.metadata_json()?;
    if let Some(members) = document.as_object_mut() {
        for shown_apart in ["zarr_format", "node_type", "attributes"] {
            members.remove(shown_apart);
        }
    }
    Ok(document)
}

/// A group's members with their kinds, arrays and groups together, by name.
fn members_by_name(group: &zarr::Group) -> zarr::Result<Vec<(String, NodeKind)>> {
    let members = group.members()?;
    let mut names: Vec<(String, NodeKind)> = (members.arrays.into_iter())
        .map(|n| (n, NodeKind::Array))
        .chain(members.groups.into_iter().map(|n| (n, NodeKind::Group)))
        .collect();
    names.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(names)
}

/// `"array"` or `"group"`.
fn kind_name(kind: NodeKind) -> &'static str {
    match kind {
        NodeKind::Array => "array",
        _ => "group",
    }
}

#[derive(Subcommand)]
enum Command {
    /// What a node is: an array's type, shape, chunks, codecs, fill value and sizes stored,
    /// or a group's members
    Info {
        #[command(flatten)]
        node: Node,
        /// Print JSON instead of text
        #[arg(long)]
        json: bool,
    },
    /// A group and everything below it, as zarr-python prints `group.tree()`
    Tree {
        #[command(flatten)]
        node: Node,
        /// Print JSON instead of text
        #[arg(long)]
        json: bool,
    },
    /// A node and everything below it, as ncdump prints a file: groups with their
    /// attributes, arrays with their metadata and attributes, and with --data their values
    Dump {
        #[command(flatten)]
        node: Node,
        /// Print the arrays' values too (as zarr cat prints them)
        #[arg(long)]
        data: bool,
        /// Print one JSON document instead of text
        #[arg(long)]
        json: bool,
    },
    /// A group's members, one per line: kind, name, and for arrays shape and data type
    Ls {
        #[command(flatten)]
        node: Node,
        /// Print JSON instead of text
        #[arg(long)]
        json: bool,
    },
    /// The values of an array, or of a selection of it: one value per line for one dimension,
    /// one line per innermost row for more (a blank line between 2-D slabs), or JSON lists
    Cat {
        #[command(flatten)]
        node: Node,
        /// Per dimension START:STOP[:STEP] or an index, comma-separated, as in NumPy
        /// ("0:10, 5, ::2"; negative positions count from the end; dimensions left out: all)
        #[arg(long, default_value = "", allow_hyphen_values = true)]
        select: String,
        /// Print nested JSON lists (NaN and infinities as "NaN", "Infinity", "-Infinity")
        #[arg(long)]
        json: bool,
    },
    /// A node's attributes as JSON; with --set or --delete, changes them first
    Attrs {
        #[command(flatten)]
        node: Node,
        /// Set attribute KEY to the JSON value VALUE (a string needs its quotes: 'name="x"')
        #[arg(long, value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Remove attribute KEY
        #[arg(long, value_name = "KEY")]
        delete: Vec<String>,
    },
    /// Create an array from its metadata document, or a group
    Create {
        #[command(flatten)]
        node: Node,
        /// The array's metadata: a .zarray or v3 zarr.json document, inline or as @FILE
        #[arg(long, value_name = "JSON|@FILE")]
        metadata: Option<String>,
        /// Without --metadata: the group's Zarr format
        #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(2..=3))]
        format: u8,
    },
    /// Copy a node (or the whole store) to another place, in this store or another; with
    /// --set, re-encode an array with changed metadata (chunks, codecs, "zarr_format": 3)
    Copy {
        /// The source store
        src: String,
        /// The destination store (created if missing)
        dst: String,
        /// The source node (default: the whole store)
        #[arg(long, default_value = "")]
        from: String,
        /// Where the copy goes in the destination (default: its root)
        #[arg(long, default_value = "")]
        to: String,
        /// Metadata members to change, as a JSON object (an array only), e.g.
        /// '{"chunks": [100, 100], "compressor": {"id": "zstd", "level": 3}}'
        #[arg(long, value_name = "JSON")]
        set: Option<String>,
        /// Options of the source store (JSON)
        #[arg(long, value_name = "JSON")]
        src_options: Option<String>,
        /// Options of the destination store (JSON)
        #[arg(long, value_name = "JSON")]
        dst_options: Option<String>,
    },
    /// Delete an array or group with everything below it
    Rm {
        #[command(flatten)]
        node: Node,
    },
    /// Move an array or group to another path in the same store
    Mv {
        #[command(flatten)]
        node: Node,
        /// The new path
        #[arg(long)]
        to: String,
    },
    /// The differences between two arrays or hierarchies (in any two stores): nodes on one
    /// side only, kinds, formats, metadata members, attributes, and values (how many differ,
    /// the first). Exit status 0 when they are the same, 1 when they differ, 2 on errors
    Diff(diff::Args),
    /// How fast libzarr reads the arrays at or below a node here: each read whole, --repeat
    /// times; best and median times, decoded and stored MB/s, requests on remote stores
    Bench(bench::Args),
    /// Write the store's consolidated metadata (.zmetadata, or the root zarr.json for v3)
    Consolidate {
        #[command(flatten)]
        node: Node,
    },
    /// The version of the tool (and of the library it is built with), and what it reads and
    /// writes: Zarr formats, stores, compressors, filters and codecs
    Version {
        /// The features as JSON (as zarr_features gives them)
        #[arg(long)]
        json: bool,
    },
    /// The manual pages, in roff: zarr(1) on stdout, or with --dir zarr.1 and a page per
    /// command (zarr-info.1, ...) written in a directory. Hidden: for packagers (CMake
    /// installs the pages)
    #[command(hide = true)]
    Man {
        /// Write the pages into this directory (created if missing) instead
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

/// `zarr man`: the manual pages, rendered by clap_mangen from the definitions above, without
/// clap's `help` command (`--help` covers it): zarr(1) as the text to print, or with `dir`
/// zarr.1 and the page of each command zarr(1) lists (zarr-info.1, ...) written there, every
/// one naming the tool's version.
fn man(dir: Option<&Path>) -> Result<String> {
    let mut command = Cli::command().disable_help_subcommand(true);
    command.build(); // the commands' display names: zarr-info, ...
    let source = format!("zarr {}", env!("CARGO_PKG_VERSION"));
    let page = |command: clap::Command| clap_mangen::Man::new(command).source(source.clone());
    let Some(dir) = dir else {
        let mut text = Vec::new();
        page(command).render(&mut text)?;
        return Ok(String::from_utf8(text)?.trim_end().to_string());
    };
    let written = std::fs::create_dir_all(dir).and_then(|()| {
        for sub in command.get_subcommands().filter(|sub| !sub.is_hide_set()) {
            page(sub.clone()).generate_to(dir)?;
        }
        page(command).generate_to(dir).map(drop)
    });
    written.map_err(|e| format!("cannot write the manual pages in {}: {e}", dir.display()))?;
    Ok(String::new())
}

/// `zarr version`: the version line, then one line per list of [`zarr::features::features`]
/// (`--json`: the object itself).
fn version(json: bool) -> String {
    let features = zarr::features::features();
    if json {
        return features.to_string();
    }
    let mut lines = vec![format!("zarr {} (libzarr)", env!("CARGO_PKG_VERSION"))];
    for (list, values) in features.as_object().into_iter().flatten() {
        let Some(values) = values.as_array() else {
            continue;
        };
        let values: Vec<String> = values
            .iter()
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
            .collect();
        lines.push(format!("{}: {}", list.replace('_', " "), values.join(", ")));
    }
    lines.join("\n")
}

fn main() -> ExitCode {
    // Ended quietly by a closed pipe (`zarr cat ... | head`), as cat and ncdump are, instead
    // of failing on the write; sockets are written with MSG_NOSIGNAL, so this concerns the
    // standard streams alone.
    #[cfg(unix)]
    // SAFETY: restoring a signal's default disposition before any other thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let command = Cli::parse().command;
    // diff exits as diff(1) does: 1 when the nodes differ, 2 when it fails.
    let failure = if matches!(command, Command::Diff(_)) {
        2
    } else {
        1
    };
    match run(command) {
        Ok((text, differ)) => {
            if !text.is_empty() {
                println!("{text}");
            }
            ExitCode::from(u8::from(differ))
        }
        Err(e) => {
            eprintln!("zarr: {}", redact(&e.to_string()));
            ExitCode::from(failure)
        }
    }
}

/// Runs a command: the text to print, and whether `diff` found differences.
fn run(command: Command) -> Result<(String, bool)> {
    let text = match command {
        Command::Diff(args) => return diff::command(&args),
        Command::Info { node, json } => info::run(&node, json),
        Command::Tree { node, json } => listing::tree(&node, json),
        Command::Ls { node, json } => listing::ls(&node, json),
        Command::Dump { node, data, json } => dump::run(&node, data, json),
        Command::Attrs { node, set, delete } => attrs::run(&node, &set, &delete),
        Command::Cat { node, select, json } => values::cat(&node, &select, json),
        Command::Create {
            node,
            metadata,
            format,
        } => edit::create(&node, metadata.as_deref(), format),
        Command::Copy {
            src,
            dst,
            from,
            to,
            set,
            src_options,
            dst_options,
        } => copy::run(&copy::Copy {
            src: &src,
            src_path: &from,
            src_options: src_options.as_deref(),
            dst: &dst,
            dst_path: &to,
            dst_options: dst_options.as_deref(),
            overrides: set.as_deref(),
        }),
        Command::Rm { node } => edit::rm(&node),
        Command::Mv { node, to } => edit::mv(&node, &to),
        Command::Consolidate { node } => edit::consolidate(&node),
        Command::Version { json } => Ok(version(json)),
        Command::Man { dir } => man(dir.as_deref()),
        Command::Bench(args) => bench::run(&args),
    }?;
    Ok((text, false))
}
