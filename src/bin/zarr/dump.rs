//! `zarr dump`: a node and everything below it, as `ncdump` prints a netCDF file: each group
//! with its attributes, each array with its metadata document's members and its attributes,
//! and with `--data` its values (as `zarr cat` prints them, indented). Text by default, one
//! JSON document with `--json`; values stream block by block either way.

use crate::values::{printable, write_all};
use crate::{Node, Result};
use serde_json::json;
use std::io::Write;
use std::sync::Arc;
use zarr::hierarchy::NodeKind;
use zarr::{Array, Group, StoreHandle};

/// What a dump shows: the values too (`data`), as JSON (`json`).
#[derive(Clone, Copy)]
struct Show {
    data: bool,
    json: bool,
}

/// Prints the node and everything below it to stdout.
pub fn run(node: &Node, data: bool, json: bool) -> Result<String> {
    let (store, path, found) = node.find(false)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    dump(&mut out, &store, &path, found.kind, Show { data, json }, "")?;
    if json {
        writeln!(out)?;
    }
    out.flush()?;
    Ok(String::new())
}

/// The name a node is shown with: its last path segment, `/` for the root.
fn name_of(path: &str) -> &str {
    match path.rsplit('/').next() {
        Some("") | None => "/",
        Some(name) => name,
    }
}

/// A JSON object's text without its closing brace, for members that follow it.
fn open_object(object: &str) -> &str {
    object.strip_suffix('}').unwrap_or(object)
}

/// Writes the node at `path` (of `kind`), indented by `pad` in text.
fn dump(
    out: &mut dyn Write,
    store: &Arc<StoreHandle>,
    path: &str,
    kind: NodeKind,
    show: Show,
    pad: &str,
) -> Result<()> {
    let name = name_of(path);
    if kind == NodeKind::Array {
        return dump_array(out, &Array::open(store.clone(), path)?, name, show, pad);
    }
    let group = Group::open(store.clone(), path)?;
    let attributes = crate::attributes_json(group.attributes()?);
    let names = crate::members_by_name(&group)?;
    if show.json {
        let head = json!({"name": name, "kind": "group", "zarr_format": group.zarr_format(),
                          "attributes": attributes});
        let head = head.to_string();
        write!(out, "{},\"members\":[", open_object(&head))?;
    } else {
        writeln!(
            out,
            "{pad}group {name:?} (zarr v{}) {{",
            group.zarr_format()
        )?;
        if attributes.as_object().is_none_or(|a| !a.is_empty()) {
            writeln!(out, "{pad}  attributes {attributes}")?;
        }
    }
    let inner = format!("{pad}  ");
    for (i, (member, kind)) in names.into_iter().enumerate() {
        if show.json && i > 0 {
            write!(out, ",")?;
        }
        dump(
            out,
            store,
            &zarr::path::join(path, &member),
            kind,
            show,
            &inner,
        )?;
    }
    match show.json {
        true => write!(out, "]}}")?,
        false => writeln!(out, "{pad}}}")?,
    }
    Ok(())
}

/// Writes an array: its metadata document's members (all but the format, node type and
/// attributes), its attributes, and with `show.data` its values.
fn dump_array(out: &mut dyn Write, array: &Array, name: &str, show: Show, pad: &str) -> Result<()> {
    let metadata = crate::metadata_members(array)?;
    let attributes = crate::attributes_json(array.attributes()?);
    let values = show.data && printable(array);
    if show.json {
        let head = json!({"name": name, "kind": "array", "zarr_format": array.zarr_format(),
                          "metadata": metadata, "attributes": attributes});
        let head = head.to_string();
        write!(out, "{}", open_object(&head))?;
        if values {
            write!(out, ",\"data\":")?;
            write_all(out, array, true)?;
        }
        write!(out, "}}")?;
        return Ok(());
    }
    writeln!(
        out,
        "{pad}array {name:?} (zarr v{}) {{",
        array.zarr_format()
    )?;
    let members = metadata.as_object().into_iter().flatten();
    let width = members.clone().map(|(k, _)| k.len()).max().unwrap_or(0);
    for (key, value) in members {
        writeln!(out, "{pad}  {key:width$} {value}")?;
    }
    if attributes.as_object().is_none_or(|a| !a.is_empty()) {
        writeln!(out, "{pad}  attributes {attributes}")?;
    }
    if show.data {
        match values {
            true => {
                writeln!(out, "{pad}  data:")?;
                write_all(&mut Indented::new(out, format!("{pad}    ")), array, false)?;
            }
            false => writeln!(out, "{pad}  data: (values of this type are not printed)")?,
        }
    }
    writeln!(out, "{pad}}}")?;
    Ok(())
}

/// A writer that starts every line with `pad`.
struct Indented<'a> {
    out: &'a mut dyn Write,
    pad: String,
    line_start: bool,
}

impl<'a> Indented<'a> {
    fn new(out: &'a mut dyn Write, pad: String) -> Self {
        Indented {
            out,
            pad,
            line_start: true,
        }
    }
}

impl Write for Indented<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        for line in buf.split_inclusive(|&b| b == b'\n') {
            if self.line_start && line != b"\n" {
                self.out.write_all(self.pad.as_bytes())?;
            }
            self.out.write_all(line)?;
            self.line_start = line.ends_with(b"\n");
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}
