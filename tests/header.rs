//! The committed `include/zarr.h` must equal a fresh cbindgen generation.
//! Regenerate with `scripts/generate-header.sh` (or `ZARR_UPDATE_HEADER=1 cargo test --test header`).

use std::path::PathBuf;

#[test]
fn committed_header_is_up_to_date() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml");
    let mut fresh = Vec::new();
    cbindgen::Builder::new()
        .with_crate(&root)
        .with_config(config)
        .generate()
        .expect("cbindgen generation")
        .write(&mut fresh);
    let header = root.join("include/zarr.h");
    if std::env::var_os("ZARR_UPDATE_HEADER").is_some() {
        std::fs::write(&header, &fresh).expect("writing include/zarr.h");
    }
    let committed = std::fs::read(&header).unwrap_or_default();
    assert!(
        committed == fresh,
        "include/zarr.h is stale: run scripts/generate-header.sh and commit the result"
    );
}

/// Every name the header defines carries the library's prefix (`zarr_`, `ZARR_`), so that no
/// user type or macro (a `Unit`, an `ENTRY_OVERHEAD`) clashes with it.
#[test]
fn header_names_are_prefixed() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let header = std::fs::read_to_string(root.join("include/zarr.h")).expect("include/zarr.h");
    let mut unprefixed = Vec::new();
    for line in header.lines() {
        let name = if let Some(rest) = line.strip_prefix("#define ") {
            rest.split_whitespace().next()
        } else if let Some((_, rest)) = line
            .split_once("(*")
            .filter(|_| line.starts_with("typedef "))
        {
            rest.split(')').next() // a function pointer type
        } else if line.starts_with("typedef ") && line.ends_with(';') {
            line.trim_end_matches(';').split_whitespace().next_back()
        } else if let Some(rest) = line.strip_prefix("} ").filter(|r| r.ends_with(';')) {
            Some(rest.trim_end_matches(';')) // the end of `typedef struct { ... } name;`
        } else if line.starts_with("typedef ") {
            None // the start of a typedef'd struct or enum
        } else if line.starts_with(|c: char| c.is_ascii_alphabetic()) && line.contains('(') {
            // A function declaration: `type name(`, or `type *name(`.
            line.split('(')
                .next()
                .and_then(|head| head.split([' ', '*']).next_back())
        } else {
            None
        };
        let Some(name) = name.map(|n| n.trim_start_matches('*')) else {
            continue;
        };
        let internal = name == "ZARR_H" || name.starts_with("zarr_") || name.starts_with("ZARR_");
        if !internal {
            unprefixed.push(name.to_string());
        }
    }
    assert!(
        unprefixed.is_empty(),
        "unprefixed names in zarr.h: {unprefixed:?}"
    );
}
