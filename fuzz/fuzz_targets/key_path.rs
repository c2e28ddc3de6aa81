//! Keys, prefixes and logical paths: the key rules (`zarr::path`) and a directory store
//! driven by a script of operations on arbitrary keys, side by side with a memory store.
//! A key the directory store accepts must name a file below its root (no `..`, no absolute
//! path, no NUL), a value set must read back from exactly that file, nothing may appear
//! outside the root (a sibling directory whose name extends the root's is watched too), and
//! both stores must agree on what they hold.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use std::path::{Component, Path};
use zarr::path::{normalize, validate_key, validate_prefix};
use zarr::{hierarchy, Group, OpenMode, StoreHandle};

#[derive(Arbitrary, Debug)]
enum Op {
    Set(String, u8),
    Get(String),
    Erase(String),
    Contains(String),
    Len(String),
    ListPrefix(String),
    ListDir(String),
    Group(String),
    Delete(String),
    Move(String, String),
}

/// Checks the rules on one string, whatever it is used as.
fn check_rules(text: &str) {
    if validate_key(text).is_ok() {
        assert!(!text.is_empty() && !text.contains('\0'), "{text:?}");
        for component in Path::new(text).components() {
            assert!(
                matches!(component, Component::Normal(_)),
                "key {text:?} has the path component {component:?}"
            );
        }
    }
    match validate_prefix(text) {
        Ok(()) if text.is_empty() => {}
        Ok(()) => {
            let inner = text.strip_suffix('/').expect("a prefix ends with '/'");
            assert!(validate_key(inner).is_ok(), "prefix {text:?}");
        }
        Err(_) => {}
    }
    if let Ok(path) = normalize(text) {
        assert_eq!(
            normalize(&path).ok().as_deref(),
            Some(path.as_str()),
            "{text:?}"
        );
        assert!(!path.contains('\\') && !path.contains('\0'), "{path:?}");
        assert!(
            validate_key(&zarr::path::join(&path, ".zgroup")).is_ok(),
            "{text:?} normalised to {path:?}"
        );
        if !path.is_empty() {
            assert!(
                validate_key(&path).is_ok(),
                "{text:?} normalised to {path:?}"
            );
        }
    }
}

/// Makes `memory` hold exactly the keys and values of `disk`.
fn resync(disk: &StoreHandle, memory: &StoreHandle) {
    for key in memory.list_prefix("").unwrap() {
        memory.erase(&key).unwrap();
    }
    for key in disk.list_prefix("").unwrap() {
        memory.set(&key, &disk.get(&key).unwrap().unwrap()).unwrap();
    }
}

/// Every file and directory below `dir`, as paths relative to `base`.
fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        out.push(
            path.strip_prefix(base)
                .expect("below the base")
                .to_string_lossy()
                .into_owned(),
        );
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            walk(base, &path, out);
        }
    }
}

fuzz_target!(|ops: Vec<Op>| {
    if ops.len() > 32 {
        return;
    }
    let base = libzarr_fuzz::temp_dir();
    let root = base.path().join("root");
    std::fs::create_dir_all(base.path().join("rootx")).unwrap();
    std::fs::write(base.path().join("sentinel"), b"outside").unwrap();
    let disk = StoreHandle::open(root.to_str().unwrap(), OpenMode::Write).expect("a directory");
    let memory = StoreHandle::open("memory:", OpenMode::Write).expect("a memory store");

    for op in &ops {
        match op {
            Op::Set(key, byte) => {
                check_rules(key);
                let value = vec![*byte; usize::from(*byte % 8)];
                if disk.set(key, &value).is_ok() {
                    assert!(validate_key(key).is_ok(), "set {key:?} accepted");
                    let file = root.join(key);
                    assert_eq!(
                        std::fs::read(&file).ok().as_deref(),
                        Some(&value[..]),
                        "{key:?} is not the file {}",
                        file.display()
                    );
                    memory
                        .set(key, &value)
                        .expect("the memory store takes it too");
                }
            }
            Op::Get(key) => {
                check_rules(key);
                let (d, m) = (disk.get(key), memory.get(key));
                if let (Ok(d), Ok(m)) = (&d, &m) {
                    assert_eq!(d, m, "get {key:?}");
                }
                assert_eq!(d.is_ok(), m.is_ok(), "get {key:?}: {d:?} {m:?}");
            }
            Op::Erase(key) => {
                check_rules(key);
                if disk.erase(key).is_ok() {
                    memory.erase(key).expect("the memory store erases it too");
                }
            }
            Op::Contains(key) => {
                check_rules(key);
                let (d, m) = (disk.contains(key), memory.contains(key));
                assert_eq!(d.ok(), m.ok(), "contains {key:?}");
            }
            Op::Len(key) => {
                check_rules(key);
                let (d, m) = (disk.value_len(key), memory.value_len(key));
                assert_eq!(d.ok(), m.ok(), "value_len {key:?}");
            }
            Op::ListPrefix(prefix) => {
                check_rules(prefix);
                let d = disk.list_prefix(prefix);
                let m = memory.list_prefix(prefix);
                assert_eq!(d.is_ok(), m.is_ok(), "list_prefix {prefix:?}");
                if let (Ok(mut d), Ok(mut m)) = (d, m) {
                    d.sort();
                    m.sort();
                    assert_eq!(d, m, "list_prefix {prefix:?}");
                }
            }
            Op::ListDir(prefix) => {
                check_rules(prefix);
                let _ = disk.list_dir(prefix);
            }
            // Hierarchy operations may stop halfway on a directory (a key where a directory
            // is, or the reverse): the memory store then takes the directory's keys again.
            Op::Group(path) => {
                check_rules(path);
                let _ = Group::create(disk.clone(), path);
                resync(&disk, &memory);
            }
            Op::Delete(path) => {
                check_rules(path);
                let _ = hierarchy::delete_node(&disk, path);
                resync(&disk, &memory);
            }
            Op::Move(from, to) => {
                check_rules(from);
                check_rules(to);
                let _ = hierarchy::move_node(&disk, from, to);
                resync(&disk, &memory);
            }
        }
    }

    // Nothing outside the root, and the stores agree on every key.
    let mut found = Vec::new();
    walk(base.path(), base.path(), &mut found);
    for path in &found {
        assert!(
            path == "root" || path.starts_with("root/") || path == "rootx" || path == "sentinel",
            "{path:?} appeared outside the store root"
        );
    }
    assert_eq!(
        std::fs::read(base.path().join("sentinel")).unwrap(),
        b"outside"
    );
    let (mut d, mut m) = (
        disk.list_prefix("").unwrap(),
        memory.list_prefix("").unwrap(),
    );
    d.sort();
    m.sort();
    assert_eq!(d, m, "the stores hold different keys");
    for key in &d {
        assert_eq!(disk.get(key).unwrap(), memory.get(key).unwrap(), "{key:?}");
    }
});
