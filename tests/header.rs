//! The committed `include/zarr.h` must equal a fresh cbindgen generation with its section
//! titles. Regenerate with `scripts/generate-header.sh` (or `ZARR_UPDATE_HEADER=1 cargo test
//! --test header`).

use std::path::PathBuf;

/// The header's sections, in the order a user meets them: the first function of each and its
/// title. cbindgen writes the functions in the order of the modules of `src/ffi/mod.rs`.
const SECTIONS: [(&str, &str); 15] = [
    (
        "zarr_version",
        "The library: version, features, statuses and errors",
    ),
    (
        "zarr_store_open",
        "Stores: directories, zip files, memory, object storage, web servers",
    ),
    (
        "zarr_store_callback_error",
        "Stores of the caller's own: callbacks",
    ),
    (
        "zarr_store_value_size",
        "Store keys: raw values, listings, sizes, removal",
    ),
    ("zarr_group_create", "Groups"),
    ("zarr_array_create", "Arrays: create, open, describe"),
    ("zarr_array_read", "Reading and writing boxes"),
    ("zarr_array_resize", "Resizing and appending"),
    (
        "zarr_array_read_strided",
        "Selections: strided boxes, orthogonal indices, points",
    ),
    (
        "zarr_array_object_codec",
        "Variable-length values: strings, byte strings, arrays (|O)",
    ),
    (
        "zarr_array_dtype",
        "Data types, fields of structured types, text encodings",
    ),
    (
        "zarr_codec_register",
        "Codecs of the caller's own: registration",
    ),
    (
        "zarr_store_node_kind",
        "Hierarchy operations: node kinds, delete, move, info",
    ),
    ("zarr_store_copy", "Copies between stores"),
    (
        "zarr_set_num_threads",
        "Tuning: threads, chunk cache, empty chunks",
    ),
];

/// `header` with a title before the documentation of the first function of each section;
/// panics when a section's function is missing or out of order.
fn with_sections(header: &str) -> String {
    let mut lines: Vec<String> = header.lines().map(str::to_string).collect();
    let mut after = 0;
    for (function, title) in SECTIONS {
        let declaration = lines
            .iter()
            .position(|line| {
                !line.starts_with(' ')
                    && !line.starts_with('#')
                    && line.contains(&format!("{function}("))
            })
            .unwrap_or_else(|| panic!("no function {function} in the header"));
        assert!(
            declaration > after,
            "{function} comes before the section above it"
        );
        let doc = (0..declaration)
            .rev()
            .find(|&i| lines[i] == "/**")
            .unwrap_or(declaration);
        let rule = "=".repeat(88 - title.len().min(80));
        lines.splice(
            doc..doc,
            [format!("/* ==== {title} {rule} */"), String::new()],
        );
        after = declaration + 2;
    }
    lines.join("\n") + "\n"
}

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
    let fresh = with_sections(&String::from_utf8(fresh).expect("UTF-8")).into_bytes();
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

/// The README's argument order holds in every declaration: once an output (`out_*`) comes, no
/// input follows (a buffer named `out` is followed by its size).
#[test]
fn outputs_come_last() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let header = std::fs::read_to_string(root.join("include/zarr.h")).expect("include/zarr.h");
    let mut declarations = 0;
    let mut lines = header.lines();
    while let Some(line) = lines.next() {
        let starts = line.starts_with(|c: char| c.is_ascii_alphabetic())
            && !line.starts_with("typedef")
            && line.contains("zarr_")
            && line.contains('(');
        if !starts {
            continue;
        }
        let mut declaration = line.to_string();
        while !declaration.ends_with(");") {
            declaration.push_str(lines.next().expect("a declaration's end"));
        }
        declarations += 1;
        let (head, params) = declaration.split_once('(').expect("a parameter list");
        let names: Vec<&str> = params
            .trim_end_matches(");")
            .split(',')
            .filter_map(|p| p.split([' ', '*']).next_back())
            .collect();
        if let Some(first_out) = names.iter().position(|n| n.starts_with("out_")) {
            assert!(
                names[first_out..].iter().all(|n| n.starts_with("out_")),
                "{head}: an input after an output: {names:?}"
            );
        }
    }
    assert!(declarations >= 80, "only {declarations} declarations found");
}
