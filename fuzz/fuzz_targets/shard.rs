//! One shard's stored bytes read through partial shard decoding: the first byte picks the
//! sharding configuration (index at the start or end, with or without `crc32c`, inner codecs,
//! nested shards, a compressor after sharding), the next eight pick two boxes to read (so
//! that only some inner chunks are fetched through the index), the rest is the shard.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zarr::{Array, OpenMode, StoreHandle};

fuzz_target!(|input: &[u8]| {
    if input.len() < 9 {
        return;
    }
    let (head, shard) = input.split_at(9);
    let i = usize::from(head[0]) % libzarr_fuzz::SHARDS.len();
    let store = StoreHandle::open("memory:", OpenMode::Write).expect("a memory store");
    let array = Array::create(store.clone(), "a", &libzarr_fuzz::shard_document(i))
        .expect("the fixed arrays are valid");
    store
        .set("a/c/0/0", shard)
        .expect("a memory store takes any value");
    let item = array.item_size();
    for b in head[1..].chunks(4) {
        let start = [u64::from(b[0] % 16), u64::from(b[1] % 16)];
        let count = [
            1 + u64::from(b[2]) % (16 - start[0]),
            1 + u64::from(b[3]) % (16 - start[1]),
        ];
        if array.object_codec().is_some() {
            if let Ok(bytes) = array.vlen_size(&start, &count) {
                if bytes <= 1 << 20 {
                    let n = (count[0] * count[1]) as usize;
                    let mut offsets = vec![0i64; n + 1];
                    let mut data = vec![0u8; bytes as usize];
                    let _ = array.read_vlen(&start, &count, &mut offsets, &mut data);
                }
            }
            continue;
        }
        let mut out = vec![0u8; (count[0] * count[1]) as usize * item];
        let _ = array.read_region(&start, &count, &mut out);
    }
    let _ = array.info();
});
