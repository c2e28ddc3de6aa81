//! Region reads and writes checked against a simple model: a dense C-order byte vector.
//! Random shapes, chunkings, orders, byte orders, compressors and boxes; every write is
//! mirrored in the model and every read must agree with it, including never-written chunks
//! (the fill value) and chunks overhanging the array's edge.

use serde_json::json;
use zarr::{Array, OpenMode, StoreHandle};

/// A small deterministic generator (xorshift64*), so failures reproduce.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Pairs of (byte offset in the dense C-order model of `shape`, byte offset in the box's own
/// C-order buffer) for every element of the box `start`/`count`.
fn element_offsets(
    shape: &[u64],
    item: usize,
    start: &[u64],
    count: &[u64],
) -> Vec<(usize, usize)> {
    let total: u64 = count.iter().product();
    (0..total)
        .map(|linear| {
            let mut rest = linear;
            let mut model = 0u64;
            let mut stride = 1u64;
            for d in (0..count.len()).rev() {
                model += (start[d] + rest % count[d]) * stride;
                rest /= count[d];
                stride *= shape[d];
            }
            (model as usize * item, linear as usize * item)
        })
        .collect()
}

fn random_box(rng: &mut Rng, shape: &[u64]) -> (Vec<u64>, Vec<u64>) {
    let start: Vec<u64> = shape.iter().map(|&n| rng.below(n)).collect();
    let count = shape
        .iter()
        .zip(&start)
        .map(|(&n, &s)| 1 + rng.below(n - s))
        .collect();
    (start, count)
}

fn run_case(seed: u64, store: std::sync::Arc<StoreHandle>) {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let ndim = 1 + rng.below(3) as usize;
    let shape: Vec<u64> = (0..ndim).map(|_| 1 + rng.below(12)).collect();
    let chunks: Vec<u64> = (0..ndim).map(|_| 1 + rng.below(6)).collect();
    let dtypes = ["|u1", "<i2", ">i2", "<f4", ">f8", ">c8", "<u8"];
    let dtype = dtypes[rng.below(dtypes.len() as u64) as usize];
    let order = if rng.below(2) == 0 { "C" } else { "F" };
    let separator = if rng.below(2) == 0 { "." } else { "/" };
    let compressor = [
        json!(null),
        json!({"id": "zlib", "level": 1}),
        json!({"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}),
    ][rng.below(3) as usize]
        .clone();
    let fill = if dtype.contains('u') {
        json!(7)
    } else {
        json!(3)
    };
    let meta = json!({"shape": shape, "chunks": chunks, "dtype": dtype, "order": order,
        "dimension_separator": separator, "compressor": compressor, "fill_value": fill});
    let path = format!("case{seed}");
    let array = Array::create(store.clone(), &path, &meta.to_string()).unwrap();
    let item = array.metadata().dtype.size;
    let fill_bytes = array.fill_native().to_vec();
    let mut model = fill_bytes.repeat(shape.iter().product::<u64>() as usize);
    for round in 0..6 {
        let (start, count) = random_box(&mut rng, &shape);
        let n: u64 = count.iter().product();
        let data: Vec<u8> = (0..n as usize * item).map(|_| rng.next() as u8).collect();
        array.write_region(&start, &count, &data).unwrap();
        for (m, b) in element_offsets(&shape, item, &start, &count) {
            model[m..m + item].copy_from_slice(&data[b..b + item]);
        }
        // Reads go through freshly parsed metadata.
        let reader = Array::open(store.clone(), &path).unwrap();
        let (start, count) = random_box(&mut rng, &shape);
        let n: u64 = count.iter().product();
        let mut out = vec![0u8; n as usize * item];
        reader.read_region(&start, &count, &mut out).unwrap();
        let mut expected = vec![0u8; out.len()];
        for (m, b) in element_offsets(&shape, item, &start, &count) {
            expected[b..b + item].copy_from_slice(&model[m..m + item]);
        }
        assert_eq!(
            out, expected,
            "seed {seed} round {round}: {meta} read {start:?}+{count:?}"
        );
    }
}

#[test]
fn random_regions_match_the_model_in_memory() {
    let store = StoreHandle::open("memory:", OpenMode::Write).unwrap();
    for seed in 0..300 {
        run_case(seed, store.clone());
    }
}

#[test]
fn random_regions_match_the_model_on_disk() {
    let dir = std::env::temp_dir().join(format!("libzarr-model-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let store = StoreHandle::open(dir.to_str().unwrap(), OpenMode::Write).unwrap();
    for seed in 1000..1060 {
        run_case(seed, store.clone());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
