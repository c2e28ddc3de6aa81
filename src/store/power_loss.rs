//! Simulated power losses of the directory store (as LevelDB's and RocksDB's fault-injection
//! file systems simulate them): a workload's file-system steps are recorded
//! (`directory::journal`), and for a loss after every step every state the disk may be left in
//! is built: of each directory's changes since it was last flushed, any first few survive
//! (a journaling file system keeps them in order); a file never flushed keeps its contents or
//! loses them. In each state every key must hold the value of the last write that returned,
//! or of the write under way; with `fsync` that holds, without it some states break it.

use super::directory::journal::{self, Event};
use super::{DirectoryStore, OpenMode, Store};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What a name in a directory points to.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Entry {
    /// The file with this number.
    File(usize),
    Directory,
}

/// A change of a directory's names, lasting only once the directory is flushed.
#[derive(Debug, Clone)]
enum Change {
    Add(PathBuf, Entry),
    Rename(PathBuf, PathBuf),
    Remove(PathBuf),
}

/// A file's contents, and whether they were flushed.
struct File {
    data: Vec<u8>,
    synced: bool,
}

/// The disk as a power loss after the first `steps` events may leave it.
struct Disk {
    /// Names that last (full paths).
    durable: BTreeMap<PathBuf, Entry>,
    /// Per directory, the changes since it was last flushed.
    pending: BTreeMap<PathBuf, Vec<Change>>,
    /// The names as the running program sees them.
    live: BTreeMap<PathBuf, Entry>,
    files: Vec<File>,
}

fn apply(names: &mut BTreeMap<PathBuf, Entry>, change: &Change) {
    match change {
        Change::Add(path, entry) => {
            names.insert(path.clone(), *entry);
        }
        Change::Rename(from, to) => {
            if let Some(entry) = names.remove(from) {
                names.insert(to.clone(), entry);
            }
        }
        Change::Remove(path) => {
            names.remove(path);
        }
    }
}

fn parent(path: &Path) -> PathBuf {
    path.parent().expect("paths below the root").to_path_buf()
}

impl Disk {
    fn replay(root: &Path, events: &[Event]) -> Disk {
        let mut disk = Disk {
            durable: BTreeMap::from([(root.to_path_buf(), Entry::Directory)]),
            pending: BTreeMap::new(),
            live: BTreeMap::from([(root.to_path_buf(), Entry::Directory)]),
            files: Vec::new(),
        };
        for event in events {
            let change = match event {
                Event::Created(path, data) => {
                    let data = data.as_ref().expect("the new file reads back").clone();
                    disk.files.push(File {
                        data,
                        synced: false,
                    });
                    Change::Add(path.clone(), Entry::File(disk.files.len() - 1))
                }
                Event::Made(dir) => Change::Add(dir.clone(), Entry::Directory),
                Event::Renamed(from, to) => Change::Rename(from.clone(), to.clone()),
                Event::Removed(path) => Change::Remove(path.clone()),
                Event::SyncedFile(path) => {
                    if let Some(Entry::File(n)) = disk.live.get(path) {
                        disk.files[*n].synced = true;
                    }
                    continue;
                }
                Event::SyncedDir(dir) => {
                    for change in disk.pending.remove(dir).unwrap_or_default() {
                        apply(&mut disk.durable, &change);
                    }
                    continue;
                }
                Event::Returned => continue,
            };
            apply(&mut disk.live, &change);
            let dir = match &change {
                Change::Add(p, _) | Change::Rename(p, _) | Change::Remove(p) => parent(p),
            };
            disk.pending.entry(dir).or_default().push(change);
        }
        disk
    }

    /// Every key → value map a power loss may leave: per directory, any first few of its
    /// pending changes; per file never flushed, its contents or nothing.
    fn states(&self, root: &Path) -> Vec<BTreeMap<String, Vec<u8>>> {
        let mut namings = vec![self.durable.clone()];
        for changes in self.pending.values() {
            namings = namings
                .iter()
                .flat_map(|names| {
                    (0..=changes.len()).map(move |kept| {
                        let mut names = names.clone();
                        changes[..kept].iter().for_each(|c| apply(&mut names, c));
                        names
                    })
                })
                .collect();
        }
        let unsynced: Vec<usize> = (0..self.files.len())
            .filter(|&n| !self.files[n].synced)
            .collect();
        let mut states = Vec::new();
        for names in &namings {
            for lost in 0..1u64 << unsynced.len().min(12) {
                let data = |n: usize| match unsynced.iter().position(|&u| u == n) {
                    Some(i) if lost >> i & 1 == 1 => Vec::new(),
                    _ => self.files[n].data.clone(),
                };
                let reachable = |path: &Path| {
                    path.ancestors()
                        .skip(1)
                        .take_while(|a| a.starts_with(root))
                        .all(|a| names.get(a) == Some(&Entry::Directory))
                };
                let keys = names.iter().filter_map(|(path, entry)| match entry {
                    Entry::File(n) if reachable(path) => {
                        let key = path.strip_prefix(root).ok()?.to_str()?;
                        (!key.contains(".libzarr-partial-")).then(|| (key.to_string(), data(*n)))
                    }
                    _ => None,
                });
                states.push(keys.collect());
            }
        }
        states
    }
}

/// The workload: keys written, overwritten and erased (`None`), some in new directories.
fn workload() -> Vec<(&'static str, Option<&'static [u8]>)> {
    vec![
        ("a/.zarray", Some(b"{\"shape\": [4]}")),
        ("a/0", Some(b"first")),
        ("a/0", Some(b"second")),
        ("a/1", Some(b"other")),
        ("a/.zarray", Some(b"{\"shape\": [8]}")),
        ("a/0", None),
        ("b/c/0.0", Some(b"deep")),
    ]
}

/// The losses that break the rule (described), over every step of the workload.
fn violations(fsync: bool) -> (usize, Vec<String>) {
    let root =
        std::env::temp_dir().join(format!("libzarr-power-loss-{fsync}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let store = DirectoryStore::open(root.to_str().unwrap(), OpenMode::Write, fsync).unwrap();
    journal::start();
    for (key, value) in workload() {
        match value {
            Some(value) => store.set(key, value).unwrap(),
            None => store.erase(key).unwrap(),
        }
        journal::record(|| Event::Returned);
    }
    let events = journal::take();
    std::fs::remove_dir_all(&root).unwrap();
    let ops = workload();
    let (mut states, mut broken) = (0, Vec::new());
    for steps in 0..=events.len() {
        let returned = events[..steps]
            .iter()
            .filter(|e| matches!(e, Event::Returned))
            .count();
        // Per key: the value of the last write that returned, and of the one under way.
        let mut allowed: BTreeMap<&str, Vec<Option<&[u8]>>> = BTreeMap::new();
        for (key, value) in &ops[..returned] {
            allowed.insert(key, vec![*value]);
        }
        if let Some((key, value)) = ops.get(returned) {
            allowed
                .entry(key)
                .or_insert_with(|| vec![None])
                .push(*value);
        }
        for state in Disk::replay(&root, &events[..steps]).states(&root) {
            states += 1;
            let keys: Vec<&str> = allowed
                .keys()
                .copied()
                .chain(state.keys().map(String::as_str))
                .collect();
            for key in keys {
                let found = state.get(key).map(Vec::as_slice);
                let ok = allowed
                    .get(key)
                    .map_or(found.is_none(), |a| a.contains(&found));
                if !ok {
                    broken.push(format!(
                        "after {steps} steps ({returned} calls returned): {key} holds {:?}",
                        found.map(String::from_utf8_lossy)
                    ));
                }
            }
        }
    }
    (states, broken)
}

#[test]
fn with_fsync_a_power_loss_keeps_every_returned_write_and_tears_none() {
    let (states, broken) = violations(true);
    eprintln!(
        "fsync on: {states} power-loss states, {} broken",
        broken.len()
    );
    assert!(states >= 50, "only {states} states");
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

#[test]
fn without_fsync_a_power_loss_can_lose_returned_writes() {
    let (states, broken) = violations(false);
    eprintln!(
        "fsync off: {states} power-loss states, {} broken",
        broken.len()
    );
    assert!(
        broken.iter().any(|b| b.contains("holds Some(\"\")")),
        "{states} states, none lost data: {broken:?}"
    );
}
