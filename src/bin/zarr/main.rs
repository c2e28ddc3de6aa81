//! `zarr`: look into a Zarr store from the shell, as `ncdump`, `h5ls` and `gdalinfo` do for
//! their formats. Built on the library; every command takes a store location (a directory,
//! `.zip`, `s3://`, `az://`, `gs://`, `http(s)://`, as `zarr_store_open` reads them) and a node
//! path inside it (the root when left out). Errors go to stderr as `zarr: MESSAGE`, with exit
//! status 1; usage errors exit with 2.

mod attrs;
mod info;
mod listing;

use clap::{Parser, Subcommand};
use std::process::ExitCode;
use std::sync::Arc;
use zarr::{OpenMode, StoreHandle};

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
}

/// What a command gives: the text to print, or the error to report.
type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

impl Node {
    /// Opens the store, read-only unless `writable`.
    fn store(&self, writable: bool) -> zarr::Result<Arc<StoreHandle>> {
        let mode = if writable {
            OpenMode::Write
        } else {
            OpenMode::Read
        };
        StoreHandle::open_with_options(&self.location, mode, self.options.as_deref())
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
    /// A group's members, one per line: kind, name, and for arrays shape and data type
    Ls {
        #[command(flatten)]
        node: Node,
        /// Print JSON instead of text
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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Info { node, json } => info::run(&node, json),
        Command::Tree { node, json } => listing::tree(&node, json),
        Command::Ls { node, json } => listing::ls(&node, json),
        Command::Attrs { node, set, delete } => attrs::run(&node, &set, &delete),
    };
    match result {
        Ok(text) => {
            println!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("zarr: {e}");
            ExitCode::FAILURE
        }
    }
}
