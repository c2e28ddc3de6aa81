//! Logical paths and store keys, normalised as the Zarr v2 specification requires.
//!
//! Names may hold any Unicode character but NUL and `/` (`\` is read as `/`), in both
//! formats. The v2 spec says a logical path is an ASCII string, but zarr-python 2 and 3 accept
//! non-ASCII names and so does libzarr (keys are their UTF-8 bytes, as zarr-python stores
//! them). The v3 spec's node names may be any Unicode string except the empty string, names
//! made only of periods (`.`, `..`, `...`) and names starting with `__` (reserved for the
//! spec): libzarr refuses those when creating a v3 node ([`check_v3_node_names`]) and reads
//! them where others wrote them. In every format `.` and `..` segments are errors, as the v2
//! spec requires, and so are the metadata names ([`normalize`]).

use crate::error::{Error, Result};

/// Names that hold a node's metadata; a path segment with one of these names would shadow it.
const RESERVED_NAMES: [&str; 5] = [".zarray", ".zgroup", ".zattrs", "zarr.json", ".zmetadata"];

/// Whether `key` names a node's metadata document (`.zarray`, `.zgroup`, `.zattrs` or
/// `zarr.json`): the keys that consolidated metadata holds.
pub fn is_metadata_key(key: &str) -> bool {
    RESERVED_NAMES[..4].contains(&last_segment(key))
}

/// Whether `name` is that of a document that makes a node (`.zarray`, `.zgroup`,
/// `zarr.json`).
pub fn is_node_document(name: &str) -> bool {
    matches!(name, ".zarray" | ".zgroup" | "zarr.json")
}

/// The last `/`-separated segment of a key or path (`"a/b/.zarray"` gives `".zarray"`; the
/// root `""` gives `""`).
pub fn last_segment(key: &str) -> &str {
    key.rsplit('/').next().unwrap_or(key)
}

/// Normalises a logical path: `\` becomes `/`, leading and trailing `/` are stripped and runs
/// of `/` collapse into one. A `.` or `..` segment, a segment named like a metadata key
/// (`.zarray`, `.zgroup`, `.zattrs`, `zarr.json`, `.zmetadata`), a segment holding
/// [`TEMP_MARKER`] (no key below it could be stored), or a NUL character is an error.
/// The root is the empty string.
pub fn normalize(path: &str) -> Result<String> {
    if path.contains('\0') {
        return Err(Error::InvalidPath(format!(
            "{path:?} contains a NUL character"
        )));
    }
    let replaced = path.replace('\\', "/");
    let segments: Vec<&str> = replaced.split('/').filter(|s| !s.is_empty()).collect();
    if let Some(bad) = segments.iter().find(|s| **s == "." || **s == "..") {
        return Err(Error::InvalidPath(format!(
            "{path:?} has a {bad:?} segment, which Zarr forbids"
        )));
    }
    if let Some(bad) = segments.iter().find(|s| RESERVED_NAMES.contains(s)) {
        return Err(Error::InvalidPath(format!(
            "{path:?} has a {bad:?} segment, which is reserved for metadata"
        )));
    }
    if let Some(bad) = segments.iter().find(|s| s.contains(TEMP_MARKER)) {
        return Err(Error::InvalidPath(format!(
            "{path:?} has a {bad:?} segment, holding {TEMP_MARKER:?}, which marks temporary files"
        )));
    }
    Ok(segments.join("/"))
}

/// Checks the names of a normalised path at which a Zarr v3 node is created against the v3
/// spec's rules for node names: none may be made only of periods (`"..."`; `.` and `..` are
/// refused by [`normalize`] already) or start with `__`, the prefix the spec reserves. Any
/// other Unicode name is accepted. [`Error::InvalidPath`] names the path and the segment.
pub fn check_v3_node_names(path: &str) -> Result<()> {
    for name in path.split('/').filter(|s| !s.is_empty()) {
        let why = if name.chars().all(|c| c == '.') {
            "is made only of periods"
        } else if name.starts_with("__") {
            "starts with \"__\", a prefix the Zarr v3 spec reserves"
        } else {
            continue;
        };
        return Err(Error::InvalidPath(format!(
            "{path:?}: the node name {name:?} {why}, which Zarr v3 forbids"
        )));
    }
    Ok(())
}

/// The key of `name` below the normalised logical path `path` (`"a/b"` + `".zarray"` is
/// `"a/b/.zarray"`; the root has no prefix).
pub fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}/{name}")
    }
}

/// The logical paths of every ancestor of `path`, root first (`"a/b/c"` gives `"", "a", "a/b"`).
pub fn ancestors(path: &str) -> Vec<String> {
    if path.is_empty() {
        return Vec::new();
    }
    let mut out = vec![String::new()];
    let segments: Vec<&str> = path.split('/').collect();
    for end in 1..segments.len() {
        out.push(segments[..end].join("/"));
    }
    out
}

/// Marks the temporary files the directory store writes through (listings never show them),
/// so no key may hold it.
pub const TEMP_MARKER: &str = ".libzarr-partial-";

/// Checks that a store key is safe to map onto a file system: non-empty `/`-separated segments,
/// none of them `.` or `..`, no NUL, no leading `/`, and not the directory store's
/// temporary-file marker ([`TEMP_MARKER`]: such a key would be stored but never listed).
pub fn validate_key(key: &str) -> Result<()> {
    let bad = key.is_empty()
        || key.contains('\0')
        || key
            .split('/')
            .any(|s| s.is_empty() || s == "." || s == "..");
    if bad {
        return Err(Error::InvalidPath(format!(
            "store key {key:?} is not a valid key"
        )));
    }
    if key.contains(TEMP_MARKER) {
        return Err(Error::InvalidPath(format!(
            "store key {key:?} holds {TEMP_MARKER:?}, which marks temporary files"
        )));
    }
    Ok(())
}

/// Checks a key prefix: empty (the root) or a valid key followed by `/`.
pub fn validate_prefix(prefix: &str) -> Result<()> {
    match prefix.strip_suffix('/') {
        _ if prefix.is_empty() => Ok(()),
        Some(inner) => validate_key(inner),
        None => Err(Error::InvalidPath(format!(
            "key prefix {prefix:?} must be empty or end with '/'"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v3_node_names() {
        for ok in [
            "",
            "a",
            "a/b",
            "données/températures",
            "温度",
            "a.b",
            ".hidden",
            "_a",
            "a__",
        ] {
            assert!(check_v3_node_names(ok).is_ok(), "{ok}");
            assert!(normalize(ok).is_ok(), "{ok}");
        }
        for bad in ["...", "a/....", "__a", "a/__b/c", "__"] {
            match check_v3_node_names(bad) {
                Err(Error::InvalidPath(m)) => assert!(m.contains("v3"), "{m}"),
                other => panic!("{bad}: {other:?}"),
            }
            // v2 has no such rule (zarr-python 2 accepts them).
            assert!(normalize(bad).is_ok(), "{bad}");
        }
    }

    #[test]
    fn normalizes_as_the_spec_says() {
        assert_eq!(normalize("").unwrap(), "");
        assert_eq!(normalize("/").unwrap(), "");
        assert_eq!(normalize("//a//b/").unwrap(), "a/b");
        assert_eq!(normalize("\\a\\b").unwrap(), "a/b");
        assert_eq!(normalize("a.b/..c").unwrap(), "a.b/..c");
    }

    #[test]
    fn refuses_dot_segments_nul_and_metadata_names() {
        for bad in [
            "a/../b",
            "./x",
            "a/.",
            "..",
            "a\\..\\b",
            "a\0b",
            "a/.zarray",
            ".zgroup",
            "b/.zattrs/c",
            ".zmetadata",
            "a/zarr.json",
            "g/x.libzarr-partial-1-2",
        ] {
            assert!(
                matches!(normalize(bad), Err(Error::InvalidPath(_))),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn joins_and_lists_ancestors() {
        assert_eq!(join("", ".zgroup"), ".zgroup");
        assert_eq!(join("a/b", ".zarray"), "a/b/.zarray");
        assert_eq!(ancestors("a/b/c"), vec!["", "a", "a/b"]);
        assert!(ancestors("").is_empty());
    }

    #[test]
    fn validates_keys_and_prefixes() {
        assert!(validate_key("a/0.0").is_ok());
        for bad in [
            "",
            "/a",
            "a//b",
            "a/",
            "../x",
            "a/./b",
            "a\0",
            "a/.0.libzarr-partial-12-3",
        ] {
            assert!(validate_key(bad).is_err(), "{bad:?}");
        }
        assert!(validate_prefix("").is_ok());
        assert!(validate_prefix("a/b/").is_ok());
        assert!(validate_prefix("a/b").is_err());
        assert!(validate_prefix("../").is_err());
    }
}
