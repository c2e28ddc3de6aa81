//! One chunk's stored bytes decoded through a codec chain: the first byte picks the array
//! (`libzarr_fuzz::CODECS`: every compressor, filters, object codecs, v3 codecs, sharding with
//! its index), the rest is the chunk.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zarr::{Array, OpenMode, StoreHandle};

fuzz_target!(|input: &[u8]| {
    let Some((&pick, chunk)) = input.split_first() else {
        return;
    };
    let i = usize::from(pick) % libzarr_fuzz::CODECS.len();
    let store = StoreHandle::open("memory:", OpenMode::Write).expect("a memory store");
    let array = Array::create(store.clone(), "a", &libzarr_fuzz::codec_document(i))
        .expect("the fixed arrays are valid");
    store
        .set(&format!("a/{}", libzarr_fuzz::CODECS[i].1), chunk)
        .expect("a memory store takes any value");
    libzarr_fuzz::read_some(&array);
});
