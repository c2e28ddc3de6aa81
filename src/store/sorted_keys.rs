//! Listing keys kept in sorted order: in a map in memory, or in a database read by seeking.

#[cfg(any(feature = "sqlite", feature = "lmdb"))]
use crate::error::Result;
use std::collections::BTreeMap;

/// The keys of `map` that start with `prefix`, in order.
fn keys_below<'a, V>(
    map: &'a BTreeMap<String, V>,
    prefix: &'a str,
) -> impl Iterator<Item = &'a String> + 'a {
    map.range(prefix.to_string()..)
        .map(|(k, _)| k)
        .take_while(move |k| k.starts_with(prefix))
}

/// Every key below `prefix`, sorted.
pub(super) fn list_prefix<V>(map: &BTreeMap<String, V>, prefix: &str) -> Vec<String> {
    keys_below(map, prefix).cloned().collect()
}

/// The names one level below `prefix`, sorted, without duplicates.
pub(super) fn list_dir<V>(map: &BTreeMap<String, V>, prefix: &str) -> Vec<String> {
    let mut names: Vec<String> = keys_below(map, prefix)
        .map(|k| {
            k[prefix.len()..]
                .split('/')
                .next()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

/// The names one level below `prefix` in a store whose keys are sorted by their bytes (a
/// database index): `first(bound, after)` gives the first key from `bound` on (strictly after
/// it when `after`), or `None` past the last. Each name below `prefix` costs one seek, and the
/// keys below a name (an array's chunks) are skipped over, never read.
#[cfg(any(feature = "sqlite", feature = "lmdb"))]
pub(super) fn list_dir_by_seeking(
    prefix: &str,
    mut first: impl FnMut(&str, bool) -> Result<Option<String>>,
) -> Result<Vec<String>> {
    let mut names = Vec::new();
    let (mut bound, mut after) = (prefix.to_string(), false);
    while let Some(key) = first(&bound, after)? {
        let Some(rest) = key.strip_prefix(prefix) else {
            break;
        };
        match rest.split_once('/') {
            Some((name, _)) => {
                names.push(name.to_string());
                // Past every key starting with `prefix name /`: '0' follows '/'.
                (bound, after) = (format!("{prefix}{name}0"), false);
            }
            None => {
                names.push(rest.to_string());
                (bound, after) = (key, true);
            }
        }
    }
    // `a.b` sorts before `a/x` but after `a`: the names come out nearly sorted.
    names.sort();
    names.dedup();
    Ok(names)
}

/// Scans a store whose keys are sorted by their bytes: `scan(bound, after, f)` hands each key
/// from `bound` on (strictly after it when `after`) with its value's length to `f`, in order,
/// until `f` returns false.
#[cfg(any(feature = "sqlite", feature = "lmdb"))]
pub(super) type Scan<'a> = dyn Fn(&str, bool, &mut dyn FnMut(&str, u64) -> bool) -> Result<()> + 'a;

/// Every key below `prefix` with its value's length, by one scan from `prefix`.
#[cfg(any(feature = "sqlite", feature = "lmdb"))]
pub(super) fn sized_by_scanning(prefix: &str, scan: &Scan) -> Result<Vec<(String, u64)>> {
    let mut keys = Vec::new();
    scan(prefix, false, &mut |key, len| {
        let below = key.starts_with(prefix);
        if below {
            keys.push((key.to_string(), len));
        }
        below
    })?;
    Ok(keys)
}

/// The names one level below `prefix`, by seeking ([`list_dir_by_seeking`]) with `scan`.
#[cfg(any(feature = "sqlite", feature = "lmdb"))]
pub(super) fn dir_by_scanning(prefix: &str, scan: &Scan) -> Result<Vec<String>> {
    list_dir_by_seeking(prefix, |bound, after| {
        let mut first = None;
        scan(bound, after, &mut |key, _| {
            first = Some(key.to_string());
            false
        })?;
        Ok(first)
    })
}

#[cfg(all(test, any(feature = "sqlite", feature = "lmdb")))]
mod tests {
    use super::*;

    #[test]
    fn seeking_lists_what_the_map_lists() {
        let keys = [
            "a",
            "a.b",
            "a/x",
            "a/y/0",
            "a0",
            "b/.zarray",
            "b/0.0",
            "b/0.1",
            "c",
            "é/1",
        ];
        let map: BTreeMap<String, ()> = keys.iter().map(|k| (k.to_string(), ())).collect();
        for prefix in ["", "a/", "b/", "a/y/", "missing/", "é/"] {
            let mut seeks = 0;
            let seeking = list_dir_by_seeking(prefix, |bound, after| {
                seeks += 1;
                Ok(map
                    .range(bound.to_string()..)
                    .map(|(k, _)| k)
                    .find(|k| !after || k.as_str() != bound)
                    .cloned())
            })
            .unwrap();
            assert_eq!(seeking, list_dir(&map, prefix), "{prefix:?}");
            assert!(seeks <= seeking.len() + 2, "{prefix:?}: {seeks} seeks");
        }
    }
}
