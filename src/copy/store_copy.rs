//! Copying keys verbatim from one store (or subtree) to another: chunks are moved as stored,
//! never decoded, so any codec and either chunk key layout (`.` or nested `/`) copies as is.

use super::copy_log::{CopyCounts, LogFn};
use super::options::{IfExists, StoreCopyOptions};
use super::progress::{ProgressFn, Reporter};
use crate::error::{Error, Result};
use crate::hierarchy::{self, NodeKind};
use crate::metadata::{ZARRAY, ZGROUP};
use crate::parallel;
use crate::path;
use crate::store::StoreHandle;
use rayon::prelude::*;
use std::collections::HashSet;
use std::sync::Mutex;

/// At most this many keys are copied between two progress reports.
const BATCH_KEYS: usize = 256;
/// At most this many value bytes are copied between two progress reports (a larger value
/// makes a batch of its own).
const BATCH_BYTES: u64 = 64 << 20;

/// A key to copy and its size.
struct Entry {
    key: String,
    size: u64,
}

/// Copies every key below `src_path` of `src` (an array, a group with everything below it,
/// or `""`: the whole store) to the same relative keys below `dst_path` of `dst`, values
/// verbatim. `dst_path` must hold no array or group; its missing ancestors become groups.
/// `src` and `dst` may be the same store, as long as `dst_path` is not `src_path` or inside it.
///
/// Copying into an N5 container from another kind of store is refused: its chunks are not N5
/// blocks (out of one, they are: zarr-python 2 and libzarr read them under the `n5_wrapper`
/// compressor the copied `.zarray` names).
///
/// Node metadata (`.zarray`, `.zgroup`) is copied last, deepest first, so a copy that stops
/// early (cancelled, or an error) leaves only complete nodes visible: every array or group
/// that exists in the destination has all its keys. Keys below `dst_path` that belong to no
/// node, such as those of such a partial copy, are overwritten, so a copy can be retried.
/// Progress counts keys (items) and value bytes.
pub fn copy_store(
    src: &StoreHandle,
    src_path: &str,
    dst: &StoreHandle,
    dst_path: &str,
    progress: &mut ProgressFn,
) -> Result<()> {
    copy_keys(
        src,
        src_path,
        dst,
        dst_path,
        Mode::VacantNode,
        &mut |_| {},
        progress,
    )
    .map(drop)
}

/// [`copy_store`] with zarr-python 2's `copy_store` options: `src_path` is any prefix with keys
/// below it (not only a node), and the source keys `options.filter`
/// accepts (excludes and includes searched for in the whole source key), each destination key
/// that exists refused (`raise`: before anything is written, naming the first such key in key
/// order), overwritten (`replace`) or left (`skip`); a dry run decides and logs but writes
/// nothing. `dst_path` may hold a node already (only keys conflict); as in zarr-python, only the
/// keys are written: missing ancestors of `dst_path` do not become groups. `log` gets zarr-python's lines, decided in sorted key order
/// before the copy starts (`copy KEY`, `copy KEY -> DEST_KEY`, `skip ...`), then the summary
/// (`all done: ...` or `dry run: ...`). Returns the counts of keys copied and skipped and the
/// bytes of the values copied.
pub fn copy_store_with_options(
    src: &StoreHandle,
    src_path: &str,
    dst: &StoreHandle,
    dst_path: &str,
    options: &StoreCopyOptions,
    log: &mut LogFn,
    progress: &mut ProgressFn,
) -> Result<CopyCounts> {
    copy_keys(
        src,
        src_path,
        dst,
        dst_path,
        Mode::Keys(options),
        log,
        progress,
    )
}

/// How a key copy treats the destination.
#[derive(Clone, Copy)]
enum Mode<'o> {
    /// [`copy_store`]: no node at the destination path; every key copied.
    VacantNode,
    /// [`copy_store_with_options`]: conflicts key by key, filters, dry runs.
    Keys(&'o StoreCopyOptions),
}

/// The engine of both key copies.
fn copy_keys(
    src: &StoreHandle,
    src_path: &str,
    dst: &StoreHandle,
    dst_path: &str,
    mode: Mode,
    log: &mut LogFn,
    progress: &mut ProgressFn,
) -> Result<CopyCounts> {
    let (src_path, dst_path) = (path::normalize(src_path)?, path::normalize(dst_path)?);
    let dry_run = matches!(mode, Mode::Keys(o) if o.dry_run);
    if !dry_run {
        dst.check_writable(&dst_path)?;
    }
    if dst.capabilities().n5 && !src.capabilities().n5 {
        // Zarr chunks copied verbatim would lack N5's block headers and byte order.
        return Err(Error::Unsupported(format!(
            "copying keys verbatim into the N5 container {:?} from a Zarr store: its chunks are not N5 blocks (re-encode arrays with zarr_array_copy_to)",
            dst.location()
        )));
    }
    if src.is_same_store(dst)
        && (src_path.is_empty()
            || dst_path == src_path
            || dst_path.starts_with(&format!("{src_path}/")))
    {
        return Err(Error::InvalidPath(format!(
            "cannot copy {src_path:?} into itself ({dst_path:?}) in the same store"
        )));
    }
    let src_prefix = path::join(&src_path, "");
    let mut keys = src.list_prefix_sized(&src_prefix)?;
    // The plain copy copies a node (or the whole store); with options, keys below a prefix.
    let nothing_there = match (src_path.is_empty(), mode) {
        (true, _) | (false, Mode::Keys(_)) => keys.is_empty(),
        (false, Mode::VacantNode) => hierarchy::node_kind(src, &src_path)? == NodeKind::None,
    };
    if nothing_there {
        return Err(Error::NotFound(format!(
            "nothing to copy at path {src_path:?}"
        )));
    }
    let dst_prefix = path::join(&dst_path, "");
    let dst_key = |key: &str| format!("{dst_prefix}{}", &key[src_prefix.len()..]);
    let mut counts = CopyCounts::default();
    let keys = match mode {
        Mode::VacantNode => {
            hierarchy::require_vacant(dst, &dst_path)?;
            keys
        }
        Mode::Keys(options) => {
            keys.retain(|(key, _)| options.filter.accepts(key));
            keys.sort();
            let existing: HashSet<String> = match options.if_exists {
                IfExists::Replace => HashSet::new(),
                _ => dst.list_prefix(&dst_prefix)?.into_iter().collect(),
            };
            let exists = |key: &str| existing.contains(&dst_key(key));
            if options.if_exists == IfExists::Raise {
                if let Some((key, _)) = keys.iter().find(|(key, _)| exists(key)) {
                    return Err(Error::AlreadyExists(format!(
                        "key {:?} exists in destination (if_exists \"raise\": nothing was copied)",
                        dst_key(key)
                    )));
                }
            }
            // Decided and logged in key order, as zarr-python does.
            let mut copied = Vec::new();
            for (key, size) in keys {
                let dest = dst_key(&key);
                let skip = exists(&key);
                let action = if skip { "skip" } else { "copy" };
                match dest == key {
                    true => log(&format!("{action} {key}")),
                    false => log(&format!("{action} {key} -> {dest}")),
                }
                if skip {
                    counts.skipped += 1;
                } else {
                    counts.copied += 1;
                    counts.bytes_copied += if dry_run { 0 } else { size };
                    copied.push((key, size));
                }
            }
            copied
        }
    };
    if dry_run {
        log(&counts.summary(true));
        return Ok(counts);
    }
    let entries = copy_order(keys);
    let bytes_total = entries.iter().map(|e| e.size).sum();
    let what = format!("copying {src_path:?} to {dst_path:?}");
    let mut reporter = Reporter::start(what, bytes_total, entries.len() as u64, progress)?;
    if let Mode::VacantNode = mode {
        let format = hierarchy::node(src, &src_path)?.format;
        hierarchy::create_ancestor_groups(dst, &dst_path, format)?;
    }
    let dst_entry_key = |entry: &Entry| dst_key(&entry.key);
    let batched = [src, dst].iter().any(|s| s.capabilities().batched);
    for batch in batches(&entries) {
        match batched {
            true => copy_in_flight(src, dst, batch, &dst_entry_key)?,
            false => parallel::run(|| {
                batch
                    .par_iter()
                    .try_for_each(|entry| copy_value(src, dst, entry, &dst_entry_key(entry)))
            })?,
        }
        let bytes = batch.iter().map(|e| e.size).sum();
        reporter.advance(batch.len() as u64, bytes)?;
    }
    if let Mode::Keys(_) = mode {
        log(&counts.summary(false));
    }
    Ok(counts)
}

/// Copies one value; a file goes file to file where both stores keep files.
fn copy_value(src: &StoreHandle, dst: &StoreHandle, entry: &Entry, key: &str) -> Result<()> {
    match dst.copy_value_from(src, &entry.key, key)? {
        true => Ok(()),
        false => Err(vanished(&entry.key)),
    }
}

fn vanished(key: &str) -> Error {
    Error::NotFound(format!("key {key:?} vanished while copying"))
}

/// Copies a batch where either store is remote: the chunk values are fetched with many
/// requests in flight, then sent the same way (a batch holds at most [`BATCH_BYTES`]);
/// metadata goes one key at a time through the handles, keeping consolidated metadata in use
/// on either side right.
fn copy_in_flight(
    src: &StoreHandle,
    dst: &StoreHandle,
    batch: &[Entry],
    dst_key: &(dyn Fn(&Entry) -> String + Sync),
) -> Result<()> {
    let (metadata, chunks): (Vec<&Entry>, Vec<&Entry>) =
        batch.iter().partition(|e| path::is_metadata_key(&e.key));
    let values: Vec<Mutex<Option<Vec<u8>>>> = chunks.iter().map(|_| Mutex::new(None)).collect();
    src.get_many(chunks.len(), &|i| chunks[i].key.clone(), &|i, value| {
        let value = value.ok_or_else(|| vanished(&chunks[i].key))?;
        *values[i].lock().unwrap_or_else(|p| p.into_inner()) = Some(value.to_vec());
        Ok(())
    })?;
    dst.set_many(chunks.len(), &|i| {
        let value = values[i].lock().unwrap_or_else(|p| p.into_inner()).take();
        Ok(Some((dst_key(chunks[i]), value)))
    })?;
    metadata
        .iter()
        .try_for_each(|entry| copy_value(src, dst, entry, &dst_key(entry)))
}

/// Whether a key is a node's metadata document (`.zarray` or `.zgroup`).
fn is_node_document(key: &str) -> bool {
    let name = path::last_segment(key);
    name == ZARRAY || name == ZGROUP
}

/// Which run of the copy a key belongs to: `None` for everything but node documents, else the
/// depth of the document (its number of `/`).
fn document_depth(key: &str) -> Option<usize> {
    is_node_document(key).then(|| key.matches('/').count())
}

/// The keys (with their sizes) in the order they are copied: everything else first (sorted),
/// then the node documents, deepest first.
fn copy_order(keys: Vec<(String, u64)>) -> Vec<Entry> {
    let (mut documents, mut rest): (Vec<Entry>, Vec<Entry>) = keys
        .into_iter()
        .map(|(key, size)| Entry { key, size })
        .partition(|e| is_node_document(&e.key));
    rest.sort_by(|a, b| a.key.cmp(&b.key));
    documents.sort_by(|a, b| {
        document_depth(&b.key)
            .cmp(&document_depth(&a.key))
            .then_with(|| a.key.cmp(&b.key))
    });
    rest.extend(documents);
    rest
}

/// Consecutive runs of entries of at most [`BATCH_KEYS`] keys and [`BATCH_BYTES`] bytes
/// (at least one key each). Node documents of one depth make batches of their own, so that
/// even a batch that fails part-way never shows a node before the deeper ones.
fn batches(entries: &[Entry]) -> Vec<&[Entry]> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < entries.len() {
        let depth = document_depth(&entries[start].key);
        let mut end = start + 1;
        let mut bytes = entries[start].size;
        while end < entries.len()
            && end - start < BATCH_KEYS
            && bytes + entries[end].size <= BATCH_BYTES
            && document_depth(&entries[end].key) == depth
        {
            bytes += entries[end].size;
            end += 1;
        }
        out.push(&entries[start..end]);
        start = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::copy::Progress;
    use crate::store::OpenMode;
    use crate::{Array, Group};
    use std::ops::ControlFlow;
    use std::sync::Arc;

    fn memory() -> Arc<StoreHandle> {
        StoreHandle::open("memory:", OpenMode::Write).unwrap()
    }

    /// A hierarchy with a nested-key array, a dotted-key array with attributes, and sub-groups.
    fn hierarchy(store: &Arc<StoreHandle>) {
        Group::create(store.clone(), "g/sub").unwrap();
        let nested = r#"{"shape": [6, 5], "chunks": [2, 2], "dtype": "<i4",
            "dimension_separator": "/", "compressor": {"id": "zlib", "level": 1}}"#;
        let a = Array::create(store.clone(), "g/nested", nested).unwrap();
        let data: Vec<u8> = (0..30i32).flat_map(|v| v.to_ne_bytes()).collect();
        a.write_region(&[0, 0], &[6, 5], &data).unwrap();
        let b = Array::create(
            store.clone(),
            "g/sub/flat",
            r#"{"shape": [7], "chunks": [3], "dtype": "<f8"}"#,
        )
        .unwrap();
        b.write_region(&[0], &[7], &[7u8; 56]).unwrap();
        b.set_attributes(r#"{"units": "m"}"#).unwrap();
        Array::create(
            store.clone(),
            "top",
            r#"{"shape": [2], "chunks": [2], "dtype": "|u1"}"#,
        )
        .unwrap()
        .write_region(&[0], &[2], &[1, 2])
        .unwrap();
    }

    /// Every key of `src` below `from`, with its value, as it should be below `to`.
    fn expected(src: &StoreHandle, from: &str, to: &str) -> Vec<(String, Vec<u8>)> {
        let prefix = path::join(from, "");
        src.list_prefix(&prefix)
            .unwrap()
            .into_iter()
            .map(|k| {
                let v = src.get(&k).unwrap().unwrap();
                (path::join(to, &k[prefix.len()..]), v)
            })
            .collect()
    }

    fn contents(store: &StoreHandle, prefix: &str) -> Vec<(String, Vec<u8>)> {
        let mut keys = store.list_prefix(prefix).unwrap();
        keys.sort();
        keys.into_iter()
            .map(|k| {
                let v = store.get(&k).unwrap().unwrap();
                (k, v)
            })
            .collect()
    }

    /// Copies recording every progress report.
    fn copy_recording(
        src: &StoreHandle,
        from: &str,
        dst: &StoreHandle,
        to: &str,
    ) -> Result<Vec<Progress>> {
        let mut seen = Vec::new();
        copy_store(src, from, dst, to, &mut |p: &Progress| {
            seen.push(*p);
            ControlFlow::Continue(())
        })?;
        Ok(seen)
    }

    fn check_reports(seen: &[Progress], keys: usize, bytes: u64) {
        assert_eq!(seen[0].items_done, 0);
        assert_eq!(seen[0].bytes_done, 0);
        for pair in seen.windows(2) {
            assert!(pair[1].items_done > pair[0].items_done);
            assert!(pair[1].bytes_done >= pair[0].bytes_done);
        }
        let last = seen.last().unwrap();
        assert_eq!(
            (last.items_done, last.items_total),
            (keys as u64, keys as u64)
        );
        assert_eq!((last.bytes_done, last.bytes_total), (bytes, bytes));
    }

    #[test]
    fn copies_a_subtree_with_nested_keys_and_creates_ancestors() {
        let (src, dst) = (memory(), memory());
        hierarchy(&src);
        let seen = copy_recording(&src, "g", &dst, "x/y").unwrap();
        let want = expected(&src, "g", "x/y");
        assert!(
            want.iter().any(|(k, _)| k == "x/y/nested/2/1"),
            "nested chunk keys"
        );
        let bytes = want.iter().map(|(_, v)| v.len() as u64).sum();
        check_reports(&seen, want.len(), bytes);
        let mut got = contents(&dst, "x/y/");
        got.sort();
        assert_eq!(got, want);
        assert_eq!(
            dst.list_prefix("").unwrap().len(),
            want.len() + 2,
            "x and the root"
        );
        assert_eq!(hierarchy::node_kind(&dst, "x").unwrap(), NodeKind::Group);
        let copy = Array::open(dst.clone(), "x/y/nested").unwrap();
        let mut out = vec![0u8; 120];
        copy.read_region(&[0, 0], &[6, 5], &mut out).unwrap();
        let data: Vec<u8> = (0..30i32).flat_map(|v| v.to_ne_bytes()).collect();
        assert_eq!(out, data);
    }

    #[test]
    #[cfg(feature = "zip")]
    fn copies_a_whole_store_between_directory_zip_and_memory() {
        let dir = std::env::temp_dir().join(format!("libzarr-copy-store-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let zip = dir.with_extension("zip");
        let _ = std::fs::remove_file(&zip);
        let (src, back) = (memory(), memory());
        hierarchy(&src);
        let directory = StoreHandle::open(dir.to_str().unwrap(), OpenMode::Write).unwrap();
        copy_recording(&src, "", &directory, "").unwrap();
        assert!(
            dir.join("g/nested/2/1").is_file(),
            "nested keys become directories"
        );
        let zipped = StoreHandle::open(zip.to_str().unwrap(), OpenMode::Write).unwrap();
        copy_recording(&directory, "", &zipped, "").unwrap();
        zipped.close().unwrap();
        let zipped = StoreHandle::open(zip.to_str().unwrap(), OpenMode::Read).unwrap();
        copy_recording(&zipped, "", &back, "").unwrap();
        assert_eq!(contents(&back, ""), contents(&src, ""));
        std::fs::remove_dir_all(&dir).unwrap();
        std::fs::remove_file(&zip).unwrap();
    }

    #[test]
    fn copies_within_one_store_but_not_into_itself() {
        let store = memory();
        hierarchy(&store);
        copy_recording(&store, "g/sub", &store, "g2").unwrap();
        assert_eq!(contents(&store, "g2/"), expected(&store, "g/sub", "g2"));
        for (from, to) in [("g", "g/inner"), ("", "z"), ("g", "g")] {
            let err = copy_recording(&store, from, &store, to).unwrap_err();
            assert!(
                matches!(err, Error::InvalidPath(_)),
                "{from} -> {to}: {err}"
            );
        }
    }

    #[test]
    fn refuses_bad_sources_and_destinations() {
        let (src, dst) = (memory(), memory());
        hierarchy(&src);
        Group::create(dst.clone(), "taken").unwrap();
        copy_recording(&src, "top", &dst, "top").unwrap();
        let cases = [
            (copy_recording(&src, "nope", &dst, "x"), "NotFound"),
            (copy_recording(&memory(), "", &dst, "x"), "NotFound"),
            (copy_recording(&src, "g", &dst, "taken"), "AlreadyExists"),
            (copy_recording(&src, "g", &dst, ""), "AlreadyExists"),
            (copy_recording(&src, "g", &dst, "top/a"), "AlreadyExists"),
            (copy_recording(&src, "g/../x", &dst, "x"), "InvalidPath"),
        ];
        for (result, kind) in cases {
            let err = result.unwrap_err();
            assert!(format!("{err:?}").starts_with(kind), "{err:?}");
        }
        assert_eq!(hierarchy::node_kind(&dst, "x").unwrap(), NodeKind::None);
        let read_only = StoreHandle::open("memory:", OpenMode::Read).unwrap();
        let err = copy_recording(&src, "g", &read_only, "x").unwrap_err();
        assert!(matches!(err, Error::ReadOnly(_)), "{err}");
    }

    #[test]
    fn a_cancelled_copy_leaves_complete_nodes_only_and_can_be_retried() {
        let src = memory();
        hierarchy(&src);
        // Many small chunks, so that the copy takes several batches.
        let big = Array::create(
            src.clone(),
            "g/big",
            r#"{"shape": [2000], "chunks": [1], "dtype": "|u1", "dimension_separator": "/"}"#,
        )
        .unwrap();
        big.write_region(&[0], &[2000], &[9u8; 2000]).unwrap();
        let order = copy_order(src.list_prefix_sized("g/").unwrap());
        assert!(order.len() > 1800, "several batches");
        for stop_after in [0, 1, 300, 1700] {
            let dst = memory();
            let mut last = Progress::default();
            let err = copy_store(&src, "g", &dst, "c", &mut |p: &Progress| {
                last = *p;
                match p.items_done >= stop_after {
                    true => ControlFlow::Break(()),
                    false => ControlFlow::Continue(()),
                }
            })
            .unwrap_err();
            assert!(matches!(err, Error::Cancelled(_)), "{err}");
            assert!(last.items_done < last.items_total);
            // Exactly the first keys in copy order are there (plus the root group, made for
            // "c" unless cancelled before anything was done).
            let copied: Vec<String> = order[..last.items_done as usize]
                .iter()
                .map(|e| format!("c/{}", &e.key[2..]))
                .collect();
            let mut want = copied.clone();
            if stop_after > 0 {
                want.push(".zgroup".into());
            }
            want.sort();
            assert_eq!(
                dst.list_prefix("").unwrap(),
                want,
                "stopped after {stop_after}"
            );
            // Every node that is visible is complete.
            for key in &copied {
                if is_node_document(key) {
                    let node = &key[..key.rfind('/').unwrap()];
                    let below = contents(&dst, &format!("{node}/"));
                    let want = expected(&src, &format!("g{}", &node[1..]), node);
                    assert_eq!(below.len(), want.len(), "node {node} is incomplete");
                }
            }
            if stop_after > 0 {
                assert_eq!(hierarchy::node_kind(&dst, "c").unwrap(), NodeKind::None);
            }
            copy_recording(&src, "g", &dst, "c").unwrap();
            assert_eq!(contents(&dst, "c/"), expected(&src, "g", "c"));
        }
    }

    #[test]
    fn batches_bound_keys_and_bytes_and_keep_document_depths_apart() {
        let entry = |key: &str, size| Entry {
            key: key.into(),
            size,
        };
        let mut entries: Vec<Entry> = (0..600).map(|_| entry("a/0", 1)).collect();
        entries.push(entry("a/1", BATCH_BYTES * 2));
        entries.push(entry("a/2", BATCH_BYTES / 2));
        entries.push(entry("a/3", BATCH_BYTES / 2 + 1));
        entries.push(entry("a/4", 1));
        for key in ["a/b/.zarray", "a/c/.zgroup", "a/.zgroup", ".zgroup"] {
            entries.push(entry(key, 1));
        }
        let sizes: Vec<usize> = batches(&entries).iter().map(|b| b.len()).collect();
        assert_eq!(sizes, vec![256, 256, 88, 1, 1, 2, 2, 1, 1]);
        assert!(batches(&[]).is_empty());
        let keys = [
            "b/.zgroup",
            "a/x/.zarray",
            "a/x/0",
            ".zgroup",
            "a/.zattrs",
            "a/.zgroup",
        ];
        let order = copy_order(keys.iter().map(|k| (k.to_string(), 1)).collect());
        assert_eq!(
            order.iter().map(|e| e.key.as_str()).collect::<Vec<_>>(),
            vec![
                "a/.zattrs",
                "a/x/0",
                "a/x/.zarray",
                "a/.zgroup",
                "b/.zgroup",
                ".zgroup"
            ]
        );
    }

    /// Copies with options, recording the log.
    fn copy_with(
        src: &StoreHandle,
        from: &str,
        dst: &StoreHandle,
        to: &str,
        options: &str,
    ) -> Result<(CopyCounts, Vec<String>)> {
        let options = StoreCopyOptions::parse(Some(options))?;
        let mut lines = Vec::new();
        let counts = copy_store_with_options(
            src,
            from,
            dst,
            to,
            &options,
            &mut |line: &str| lines.push(line.to_string()),
            &mut |_: &Progress| ControlFlow::Continue(()),
        )?;
        Ok((counts, lines))
    }

    fn size_of(store: &StoreHandle, keys: &[&str]) -> u64 {
        keys.iter()
            .map(|k| store.get(k).unwrap().unwrap().len() as u64)
            .sum()
    }

    #[test]
    fn options_filter_keys_and_log_in_zarr_pythons_words() {
        let (src, dst) = (memory(), memory());
        hierarchy(&src);
        let (counts, lines) = copy_with(
            &src,
            "g/sub",
            &dst,
            "x",
            r#"{"excludes": ["zattrs$", "^g/sub/flat/"], "includes": ["flat/2$"]}"#,
        )
        .unwrap();
        let copied = ["x/.zgroup", "x/flat/2"];
        assert_eq!(
            lines,
            vec![
                "copy g/sub/.zgroup -> x/.zgroup",
                "copy g/sub/flat/2 -> x/flat/2",
                &format!(
                    "all done: 2 copied, 0 skipped, {} bytes copied",
                    size_of(&dst, &copied)
                ),
            ]
        );
        assert_eq!(counts.copied, 2);
        assert_eq!(dst.list_prefix("").unwrap(), copied, "no ancestor groups");
        // A prefix that is no node copies too; one with no keys is not found.
        src.set("raw/x", b"1").unwrap();
        let (counts, _) = copy_with(&src, "raw", &memory(), "raw", "{}").unwrap();
        assert_eq!(counts.copied, 1);
        let err = copy_with(&src, "nothing", &memory(), "x", "{}").unwrap_err();
        assert!(matches!(err, Error::NotFound(_)), "{err}");
        // Same paths: the line names the key once.
        let (_, lines) = copy_with(&src, "top", &memory(), "top", "{}").unwrap();
        assert_eq!(lines[0], "copy top/.zarray");
    }

    #[test]
    fn options_if_exists_raise_skip_replace_and_dry_runs() {
        let (src, dst) = (memory(), memory());
        hierarchy(&src);
        dst.set("g/sub/flat/.zattrs", b"{}").unwrap();
        dst.set("g/sub/flat/0", b"old").unwrap();
        let before = contents(&dst, "");
        // raise (the default): nothing written, nothing logged.
        let mut lines = Vec::new();
        let err = copy_store_with_options(
            &src,
            "g",
            &dst,
            "g",
            &StoreCopyOptions::default(),
            &mut |line: &str| lines.push(line.to_string()),
            &mut |_: &Progress| ControlFlow::Continue(()),
        )
        .unwrap_err();
        assert!(
            matches!(&err, Error::AlreadyExists(m) if m.contains("\"g/sub/flat/.zattrs\"")),
            "{err}"
        );
        assert!(lines.is_empty());
        assert_eq!(contents(&dst, ""), before);
        let total = src.list_prefix("g/").unwrap().len() as u64;
        // Dry runs write nothing, even to a read-only store, and count no bytes.
        let read_only = StoreHandle::open("memory:", OpenMode::Read).unwrap();
        let (counts, lines) =
            copy_with(&src, "g", &read_only, "g", r#"{"dry_run": true}"#).unwrap();
        assert_eq!((counts.copied, counts.bytes_copied), (total, 0));
        assert_eq!(
            lines.last().unwrap(),
            &format!("dry run: {total} copied, 0 skipped")
        );
        let (counts, lines) = copy_with(
            &src,
            "g",
            &dst,
            "g",
            r#"{"dry_run": true, "if_exists": "skip"}"#,
        )
        .unwrap();
        assert_eq!((counts.copied, counts.skipped), (total - 2, 2));
        assert!(lines.contains(&"skip g/sub/flat/0".to_string()));
        assert_eq!(contents(&dst, ""), before);
        // skip leaves the keys there, replace overwrites them.
        let (counts, _) = copy_with(&src, "g", &dst, "g", r#"{"if_exists": "skip"}"#).unwrap();
        assert_eq!((counts.copied, counts.skipped), (total - 2, 2));
        assert_eq!(dst.get("g/sub/flat/0").unwrap().unwrap(), b"old");
        let (counts, _) = copy_with(&src, "g", &dst, "g", r#"{"if_exists": "replace"}"#).unwrap();
        assert_eq!((counts.copied, counts.skipped), (total, 0));
        assert_eq!(contents(&dst, "g/"), expected(&src, "g", "g"));
        assert_eq!(counts.bytes_copied, {
            let keys = src.list_prefix("g/").unwrap();
            size_of(&src, &keys.iter().map(String::as_str).collect::<Vec<_>>())
        });
    }

    #[test]
    fn options_keep_the_checks_of_the_plain_copy() {
        let store = memory();
        hierarchy(&store);
        for (from, to, kind) in [
            ("g", "g/inner", "InvalidPath"),
            ("nope", "x", "NotFound"),
            ("g/../x", "x", "InvalidPath"),
        ] {
            let err = copy_with(&store, from, &store, to, "{}").unwrap_err();
            assert!(format!("{err:?}").starts_with(kind), "{err:?}");
        }
        let err = copy_with(&store, "g", &memory(), "x", r#"{"excludes": 1}"#).unwrap_err();
        assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
        let read_only = StoreHandle::open("memory:", OpenMode::Read).unwrap();
        let err = copy_with(&store, "g", &read_only, "x", "{}").unwrap_err();
        assert!(matches!(err, Error::ReadOnly(_)), "{err}");
    }
}
