//! Reads and writes of every selection kind checked against a simple model: a dense C-order
//! byte vector. Random shapes, chunkings (regular, and rectilinear v3 grids), orders, byte orders, compressors, selections (ranges
//! with steps, index lists with repeats, points) and caller buffer layouts (dense, padded,
//! Fortran); every write is mirrored in the model and every read must agree with it, including
//! never-written chunks (the fill value) and chunks overhanging the array's edge.

use serde_json::json;
use std::sync::Arc;
use zarr::selection::DimSelection;
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
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

/// The array indices a dimension selection names, in output order.
fn indices(sel: &DimSelection) -> Vec<u64> {
    match sel {
        DimSelection::Range { start, count, step } => {
            (0..*count).map(|k| start + k * step).collect()
        }
        DimSelection::Indices(list) => list.clone(),
    }
}

fn random_dim(rng: &mut Rng, extent: u64) -> DimSelection {
    match rng.below(3) {
        0 => {
            let start = rng.below(extent);
            DimSelection::range(start, 1 + rng.below(extent - start))
        }
        1 => {
            let start = rng.below(extent);
            let step = 1 + rng.below(4);
            DimSelection::Range {
                start,
                count: 1 + rng.below((extent - 1 - start) / step + 1),
                step,
            }
        }
        _ => DimSelection::Indices((0..1 + rng.below(6)).map(|_| rng.below(extent)).collect()),
    }
}

/// Buffer strides in elements (`None`: dense C order) and the buffer length in bytes.
fn random_layout(rng: &mut Rng, out_shape: &[u64], item: usize) -> (Option<Vec<u64>>, usize) {
    let fortran = rng.below(2) == 0;
    match rng.below(3) {
        0 => (None, out_shape.iter().product::<u64>() as usize * item),
        kind => {
            let mut strides = vec![0u64; out_shape.len()];
            let mut step = 1u64;
            let dims: Vec<usize> = if fortran {
                (0..out_shape.len()).collect()
            } else {
                (0..out_shape.len()).rev().collect()
            };
            for d in dims {
                strides[d] = step;
                step *= out_shape[d] + if kind == 2 { rng.below(3) } else { 0 };
            }
            let end = out_shape
                .iter()
                .zip(&strides)
                .map(|(n, s)| (n - 1) * s)
                .sum::<u64>()
                + 1;
            (Some(strides), (end as usize + rng.below(3) as usize) * item)
        }
    }
}

/// Calls `f(model_offset, buffer_offset)` for every element of an orthogonal selection, in
/// C order of the result.
fn for_each_element(
    shape: &[u64],
    sel: &[Vec<u64>],
    strides: &[u64],
    item: usize,
    mut f: impl FnMut(usize, usize),
) {
    let total: usize = sel.iter().map(Vec::len).product();
    for linear in 0..total {
        let (mut rest, mut model, mut buffer, mut model_stride) = (linear, 0u64, 0u64, 1u64);
        for d in (0..sel.len()).rev() {
            let k = rest % sel[d].len();
            rest /= sel[d].len();
            model += sel[d][k] * model_stride;
            model_stride *= shape[d];
            buffer += k as u64 * strides[d];
        }
        f(model as usize * item, buffer as usize * item);
    }
}

fn dense_strides(out_shape: &[u64]) -> Vec<u64> {
    let mut strides = vec![1u64; out_shape.len()];
    for d in (0..out_shape.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * out_shape[d + 1];
    }
    strides
}

/// A v3 document of the same array with a rectilinear chunk grid: per dimension one length
/// repeated, or a list of lengths (runs among them) reaching the shape or past it; `order` F
/// as a transpose, and sometimes a compressor. A third are sharded: the lengths are then
/// multiples of the inner chunks'.
fn rectilinear_document(
    rng: &mut Rng,
    shape: &[u64],
    dtype: &str,
    order: &str,
) -> serde_json::Value {
    let sharded = rng.below(3) == 0;
    let inner: Vec<u64> = shape
        .iter()
        .map(|_| if sharded { 1 + rng.below(3) } else { 1 })
        .collect();
    let chunk_shapes: Vec<serde_json::Value> = shape
        .iter()
        .zip(&inner)
        .map(|(&n, &unit)| {
            if rng.below(4) == 0 {
                return json!(unit * (1 + rng.below(6 / unit)));
            }
            let (mut items, mut sum) = (Vec::new(), 0);
            while sum < n + rng.below(2) * 3 {
                let len = unit * (1 + rng.below(5 / unit + 1));
                let repeat = 1 + rng.below(2) * rng.below(3);
                items.push(match repeat {
                    1 => json!(len),
                    _ => json!([len, repeat]),
                });
                sum += len * repeat;
            }
            json!(items)
        })
        .collect();
    let (name, endian) = match dtype {
        "|u1" => ("uint8", "little"),
        "<i2" => ("int16", "little"),
        ">i2" => ("int16", "big"),
        "<f4" => ("float32", "little"),
        ">f8" => ("float64", "big"),
        ">c8" => ("complex64", "big"),
        _ => ("uint64", "little"),
    };
    let mut codecs = Vec::new();
    if order == "F" {
        codecs.push(json!({"name": "transpose", "configuration":
            {"order": (0..shape.len()).rev().collect::<Vec<_>>()}}));
    }
    codecs.push(json!({"name": "bytes", "configuration": {"endian": endian}}));
    if rng.below(2) == 0 {
        codecs.push(json!({"name": "zstd", "configuration": {"level": 1, "checksum": false}}));
    }
    if sharded {
        let location = ["start", "end"][rng.below(2) as usize];
        codecs = vec![json!({"name": "sharding_indexed", "configuration": {
            "chunk_shape": inner, "codecs": codecs,
            "index_codecs": [{"name": "bytes"}, {"name": "crc32c"}],
            "index_location": location}})];
    }
    json!({"zarr_format": 3, "node_type": "array", "shape": shape, "data_type": name,
        "chunk_grid": {"name": "rectilinear", "configuration":
            {"kind": "inline", "chunk_shapes": chunk_shapes}},
        "chunk_key_encoding": {"name": "default"}, "codecs": codecs,
        "fill_value": if name == "complex64" { json!([3, 0]) } else { json!(3) }})
}

fn run_case(seed: u64, store: Arc<StoreHandle>) {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let ndim = 1 + rng.below(3) as usize;
    let shape: Vec<u64> = (0..ndim).map(|_| 1 + rng.below(12)).collect();
    let chunks: Vec<u64> = (0..ndim).map(|_| 1 + rng.below(6)).collect();
    let dtype = ["|u1", "<i2", ">i2", "<f4", ">f8", ">c8", "<u8"][rng.below(7) as usize];
    let order = ["C", "F"][rng.below(2) as usize];
    let separator = [".", "/"][rng.below(2) as usize];
    let compressor = [
        json!(null),
        json!({"id": "zlib", "level": 1}),
        json!({"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}),
    ][rng.below(3) as usize]
        .clone();
    let meta = match rng.below(3) {
        0 => rectilinear_document(&mut rng, &shape, dtype, order),
        _ => json!({"shape": shape, "chunks": chunks, "dtype": dtype, "order": order,
            "dimension_separator": separator, "compressor": compressor, "fill_value": 3}),
    };
    let path = format!("case{seed}");
    let array = Array::create(store.clone(), &path, &meta.to_string()).unwrap();
    array.set_write_empty_chunks(rng.below(2) == 0);
    let item = array.item_size();
    let mut model = array
        .fill_native()
        .repeat(shape.iter().product::<u64>() as usize);
    let context = |what: &str, round| format!("seed {seed} round {round} {what}: {meta}");

    for round in 0..8 {
        // Write an orthogonal selection or a list of points, mirrored in the model.
        if rng.below(4) == 0 {
            let n = 1 + rng.below(8) as usize;
            let coords: Vec<u64> = (0..n * ndim).map(|k| rng.below(shape[k % ndim])).collect();
            let data = rng.bytes(n * item);
            array.write_points(n, &coords, &data).unwrap();
            for p in 0..n {
                let sel: Vec<Vec<u64>> = (0..ndim).map(|d| vec![coords[p * ndim + d]]).collect();
                for_each_element(&shape, &sel, &vec![0; ndim], item, |m, _| {
                    model[m..m + item].copy_from_slice(&data[p * item..(p + 1) * item])
                });
            }
        } else {
            let sel: Vec<DimSelection> = shape.iter().map(|&n| random_dim(&mut rng, n)).collect();
            let out_shape: Vec<u64> = sel.iter().map(DimSelection::len).collect();
            let (strides, len) = random_layout(&mut rng, &out_shape, item);
            let data = rng.bytes(len);
            array
                .write_orthogonal(&sel, strides.as_deref(), &data)
                .unwrap_or_else(|e| panic!("{e} {}", context("write", round)));
            let lists: Vec<Vec<u64>> = sel.iter().map(indices).collect();
            let strides = strides.unwrap_or_else(|| dense_strides(&out_shape));
            for_each_element(&shape, &lists, &strides, item, |m, b| {
                model[m..m + item].copy_from_slice(&data[b..b + item])
            });
        }

        // Read back through freshly parsed metadata: an orthogonal selection, then points.
        let reader = Array::open(store.clone(), &path).unwrap();
        let sel: Vec<DimSelection> = shape.iter().map(|&n| random_dim(&mut rng, n)).collect();
        let out_shape: Vec<u64> = sel.iter().map(DimSelection::len).collect();
        let (strides, len) = random_layout(&mut rng, &out_shape, item);
        let mut out = vec![0xAAu8; len];
        reader
            .read_orthogonal(&sel, strides.as_deref(), &mut out)
            .unwrap();
        let mut expected = vec![0xAAu8; len];
        let lists: Vec<Vec<u64>> = sel.iter().map(indices).collect();
        let strides = strides.unwrap_or_else(|| dense_strides(&out_shape));
        for_each_element(&shape, &lists, &strides, item, |m, b| {
            expected[b..b + item].copy_from_slice(&model[m..m + item])
        });
        assert_eq!(
            out,
            expected,
            "{} read {sel:?} strides {strides:?}",
            context("read", round)
        );

        let n = 1 + rng.below(8) as usize;
        let coords: Vec<u64> = (0..n * ndim).map(|k| rng.below(shape[k % ndim])).collect();
        let mut out = vec![0u8; n * item];
        reader.read_points(n, &coords, &mut out).unwrap();
        for p in 0..n {
            let sel: Vec<Vec<u64>> = (0..ndim).map(|d| vec![coords[p * ndim + d]]).collect();
            for_each_element(&shape, &sel, &vec![0; ndim], item, |m, _| {
                assert_eq!(
                    out[p * item..(p + 1) * item],
                    model[m..m + item],
                    "{} point {p}",
                    context("points", round)
                )
            });
        }
    }
}

#[test]
fn random_selections_match_the_model_in_memory() {
    let store = StoreHandle::open("memory:", OpenMode::Write).unwrap();
    for seed in 0..400 {
        run_case(seed, store.clone());
    }
}

#[test]
fn random_selections_match_the_model_on_disk() {
    let dir = std::env::temp_dir().join(format!("libzarr-model-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let store = StoreHandle::open(dir.to_str().unwrap(), OpenMode::Write).unwrap();
    for seed in 1000..1060 {
        run_case(seed, store.clone());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A chunk that ends up holding only the fill value is erased (zarr-python 3's default), or
/// kept when the array is set to write empty chunks.
#[test]
fn chunks_of_fill_value_are_erased_unless_asked_for() {
    let store = StoreHandle::open("memory:", OpenMode::Write).unwrap();
    let meta =
        json!({"shape": [4, 4], "chunks": [2, 2], "dtype": "<i4", "fill_value": 9}).to_string();
    let array = Array::create(store.clone(), "a", &meta).unwrap();
    let ones: Vec<u8> = 1i32.to_ne_bytes().repeat(4);
    let nines: Vec<u8> = 9i32.to_ne_bytes().repeat(4);
    array.write_region(&[0, 0], &[2, 2], &ones).unwrap();
    assert!(store.contains("a/0.0").unwrap());
    array.write_region(&[0, 0], &[2, 2], &nines).unwrap();
    assert!(
        !store.contains("a/0.0").unwrap(),
        "a chunk of fill value is erased"
    );
    array.write_points(1, &[3, 3], &9i32.to_ne_bytes()).unwrap();
    assert!(
        !store.contains("a/1.1").unwrap(),
        "a partial write of fill value stores nothing"
    );
    array.set_write_empty_chunks(true);
    array.write_region(&[0, 0], &[2, 2], &nines).unwrap();
    assert!(store.contains("a/0.0").unwrap());
}

/// Reads of parts of large blosc chunks decode only the blocks they need (8 MiB chunks: c-blosc
/// cuts them in blocks of 2 MiB): boxes, strided boxes, index lists and points agree with the
/// data written, in C and F order, reads of the two arrays (of other values) taking turns so
/// that a block left undecoded would show the other array's bytes.
#[test]
fn parts_of_large_blosc_chunks_read_what_was_written() {
    let store = StoreHandle::open("memory:", OpenMode::Write).unwrap();
    let mut rng = Rng(7);
    let shape = [1100u64, 1030];
    let arrays: Vec<(Array, Vec<u8>)> = ["C", "F"]
        .iter()
        .enumerate()
        .map(|(k, order)| {
            let meta = json!({"shape": shape, "chunks": [1024, 1024], "dtype": "<f8",
                "order": order, "fill_value": 0, "compressor":
                {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}});
            let array = Array::create(store.clone(), order, &meta.to_string()).unwrap();
            let bytes: Vec<u8> = (0..shape[0] * shape[1])
                .flat_map(|i| (((i / 7) % 1000 + 5000 * k as u64) as f64).to_ne_bytes())
                .collect();
            array.write_region(&[0, 0], &shape, &bytes).unwrap();
            (array, bytes)
        })
        .collect();
    for round in 0..60 {
        let (array, bytes) = &arrays[round % 2];
        let sel: Vec<DimSelection> = shape.iter().map(|&n| random_dim(&mut rng, n)).collect();
        let out_shape: Vec<u64> = sel.iter().map(DimSelection::len).collect();
        let mut out = vec![0u8; out_shape.iter().product::<u64>() as usize * 8];
        array.read_orthogonal(&sel, None, &mut out).unwrap();
        let mut expected = vec![0u8; out.len()];
        let lists: Vec<Vec<u64>> = sel.iter().map(indices).collect();
        for_each_element(&shape, &lists, &dense_strides(&out_shape), 8, |m, b| {
            expected[b..b + 8].copy_from_slice(&bytes[m..m + 8])
        });
        assert!(out == expected, "round {round}: {sel:?}");
        let points = [5u64, 7, 1099, 1029, 1030, 3];
        let mut out = [0u8; 24];
        array.read_points(3, &points, &mut out).unwrap();
        for p in 0..3 {
            let m = (points[2 * p] * shape[1] + points[2 * p + 1]) as usize * 8;
            assert_eq!(
                out[p * 8..p * 8 + 8],
                bytes[m..m + 8],
                "round {round} point {p}"
            );
        }
    }
}
