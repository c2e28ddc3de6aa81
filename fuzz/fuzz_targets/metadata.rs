//! Metadata documents: the first byte picks which document the rest is (`.zarray`,
//! `zarr.json`, `.zgroup`, `.zattrs` of an array, `.zmetadata`, or a v3 root's `zarr.json`
//! with consolidated metadata), next to valid ones; the hierarchy is then explored.
#![no_main]

use libfuzzer_sys::fuzz_target;

/// A valid array, so that a fuzzed `.zattrs` or `.zmetadata` has something to describe.
const ZARRAY: &[u8] = br#"{"zarr_format": 2, "shape": [20, 20], "chunks": [8, 8], "dtype": "<f8",
    "compressor": null, "fill_value": "NaN", "filters": null, "order": "F"}"#;

fuzz_target!(|input: &[u8]| {
    let Some((&pick, document)) = input.split_first() else {
        return;
    };
    let members: Vec<(&str, &[u8])> = match pick % 6 {
        0 => vec![
            (".zgroup", br#"{"zarr_format": 2}"#),
            ("a/.zarray", document),
        ],
        1 => vec![("a/zarr.json", document)],
        2 => vec![(".zgroup", document), ("a/.zarray", ZARRAY)],
        3 => vec![("a/.zarray", ZARRAY), ("a/.zattrs", document)],
        4 => vec![
            (".zgroup", br#"{"zarr_format": 2}"#),
            ("a/.zarray", ZARRAY),
            (".zmetadata", document),
        ],
        _ => vec![("zarr.json", document)],
    };
    libzarr_fuzz::explore(&libzarr_fuzz::unpack(&libzarr_fuzz::pack(members)));
});
