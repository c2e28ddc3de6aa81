//! Listing keys held in a sorted map, shared by the stores that keep their keys in memory.

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
