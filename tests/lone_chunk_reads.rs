//! A read that touches one large chunk splits its work across the pool (an uncompressed chunk
//! read in parts at once, a blosc chunk decoded by blosc's own threads): the values must be
//! those written, whatever the pool's size.

use zarr::{parallel, Array, OpenMode, StoreHandle};

fn values(n: usize) -> Vec<u8> {
    (0..n as u32)
        .flat_map(|v| (v.wrapping_mul(2_654_435_761) >> 7).to_ne_bytes())
        .collect()
}

#[test]
fn lone_large_chunks_read_back_with_any_pool_size() {
    let dir = std::env::temp_dir().join(format!("libzarr-lone-chunk-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let store = StoreHandle::open(dir.to_str().unwrap(), OpenMode::Write).unwrap();
    // Chunks of 1000 × 301 × 4 bytes (1.15 MiB, an odd size that splits unevenly).
    let compressors = [
        ("none", "null"),
        (
            "blosc",
            r#"{"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}"#,
        ),
    ];
    let data = values(2000 * 301);
    for (name, compressor) in compressors {
        let document = format!(
            r#"{{"shape": [2000, 301], "chunks": [1000, 301], "dtype": "<u4", "fill_value": 0,
                 "compressor": {compressor}}}"#
        );
        let array = Array::create(store.clone(), name, &document).unwrap();
        array.write_region(&[0, 0], &[2000, 301], &data).unwrap();
        for threads in [1, 2, 3, 7] {
            parallel::set_num_threads(threads).unwrap();
            let mut chunk = vec![0u8; 1000 * 301 * 4];
            array
                .read_region(&[1000, 0], &[1000, 301], &mut chunk)
                .unwrap();
            assert!(chunk == data[1000 * 301 * 4..], "{name}, {threads} threads");
            let mut all = vec![0u8; data.len()];
            array.read_region(&[0, 0], &[2000, 301], &mut all).unwrap();
            assert!(all == data, "{name}, {threads} threads, whole array");
        }
    }
    parallel::set_num_threads(0).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}
