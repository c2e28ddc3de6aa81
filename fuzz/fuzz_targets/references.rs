//! A Kerchunk reference file (JSON, versions 0 and 1, templates, `gen`) parsed as
//! `reference://` stores parse it; the keys it holds inline (metadata documents, small chunks)
//! are then opened and read as a store through the public API. Target files are never read.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zarr::store::reference_file::{parse, Reference};
use zarr::{OpenMode, StoreHandle};

fuzz_target!(|input: &[u8]| {
    let Ok(references) = parse(input, "fuzz.json") else {
        return;
    };
    let store = StoreHandle::open("memory:", OpenMode::Write).expect("a memory store");
    for (key, reference) in references {
        if let Reference::Inline(bytes) = reference {
            let _ = store.set(&key, &bytes);
        }
    }
    libzarr_fuzz::explore(&store);
});
