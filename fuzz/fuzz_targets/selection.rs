//! Writes and reads of random selections checked against a model (a flat C-order byte
//! vector): a small array in a memory store (0 to 4 dimensions, any chunking with overhanging
//! edge chunks, a few data types and byte orders, v2 in C or F order or v3 on a regular or a
//! rectilinear chunk grid, optionally sharded and transposed, a compressor or none), then a
//! script of box, strided, orthogonal and point
//! writes and reads (dense or strided caller buffers), out-of-bounds selections (which must
//! fail and change nothing), resizes, reopened handles and the chunk cache. Every value read
//! must be the model's.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use libzarr_fuzz::Rng;
use serde_json::{json, Value};
use std::sync::Arc;
use zarr::selection::DimSelection;
use zarr::{Array, OpenMode, StoreHandle};

/// At most this many elements in the array, and in one selection.
const MAX_ELEMENTS: u64 = 4096;
/// At most this many chunks (or, sharded, inner chunks) in the array.
const MAX_CHUNKS: u64 = 128;

#[derive(Arbitrary, Debug)]
struct Input {
    format: Format,
    dtype: u8,
    big_endian: bool,
    compressor: u8,
    fill: u8,
    dims: Vec<Dim>,
    seed: u64,
    ops: Vec<Op>,
}

#[derive(Arbitrary, Debug)]
enum Format {
    V2 {
        fortran: bool,
        nested: bool,
    },
    V3 {
        transpose: bool,
        nested: bool,
    },
    V3Sharded {
        transpose: bool,
        index_at_start: bool,
    },
}

#[derive(Arbitrary, Debug)]
struct Dim {
    extent: u8,
    chunk: u8,
    inner: u8,
}

#[derive(Arbitrary, Debug)]
enum Sel {
    Range { start: u8, count: u8, step: u8 },
    Indices(Vec<u8>),
}

#[derive(Arbitrary, Debug)]
enum Layout {
    Dense,
    Strided {
        fortran: bool,
        pad: [u8; 4],
        tail: u8,
    },
}

#[derive(Arbitrary, Debug)]
enum Op {
    Write(Vec<Sel>, Layout),
    WriteRegion(Vec<(u8, u8)>),
    WritePoints(Vec<Vec<u8>>),
    Read(Vec<Sel>, Layout),
    ReadRegion(Vec<(u8, u8)>),
    ReadStrided(Vec<(u8, u8, u8)>),
    ReadPoints(Vec<Vec<u8>>),
    OutOfBounds { dim: u8, by: u8, write: bool },
    Resize(Vec<u8>),
    Reopen { cache: bool },
    WriteEmptyChunks(bool),
}

/// (v2 type string without byte order, v3 name, item size)
const DTYPES: &[(&str, &str, usize)] = &[
    ("u1", "uint8", 1),
    ("i2", "int16", 2),
    ("u4", "uint32", 4),
    ("f4", "float32", 4),
    ("f8", "float64", 8),
    ("i8", "int64", 8),
    ("c8", "complex64", 8),
    ("b1", "bool", 1),
];

struct Model {
    shape: Vec<u64>,
    item: usize,
    fill: Vec<u8>,
    bytes: Vec<u8>,
    boolean: bool,
}

impl Model {
    fn elements(&self) -> u64 {
        self.shape.iter().product()
    }

    /// The model offset (in bytes) of the element at `coords`.
    fn offset(&self, coords: &[u64]) -> usize {
        let mut linear = 0u64;
        for (c, n) in coords.iter().zip(&self.shape) {
            linear = linear * n + c;
        }
        linear as usize * self.item
    }

    /// Random element values: booleans are 0 or 1, anything else any bit pattern.
    fn values(&self, rng: &mut Rng, n: usize) -> Vec<u8> {
        let mut data = rng.bytes(n * self.item);
        if self.boolean {
            data.iter_mut().for_each(|b| *b &= 1);
        }
        data
    }
}

fn dim_selection(sel: &Sel, extent: u64) -> DimSelection {
    if extent == 0 {
        return DimSelection::range(0, 0);
    }
    match sel {
        Sel::Range { start, count, step } => {
            let start = u64::from(*start) % extent;
            let step = 1 + u64::from(*step) % 5;
            let max = (extent - 1 - start) / step + 1;
            DimSelection::Range {
                start,
                count: u64::from(*count) % (max + 1),
                step,
            }
        }
        Sel::Indices(list) => {
            DimSelection::Indices(list.iter().map(|&i| u64::from(i) % extent).collect())
        }
    }
}

fn selection(sels: &[Sel], shape: &[u64]) -> Vec<DimSelection> {
    let mut out: Vec<DimSelection> = shape
        .iter()
        .enumerate()
        .map(|(d, &n)| match sels.get(d) {
            Some(sel) => dim_selection(sel, n),
            None => DimSelection::range(0, n),
        })
        .collect();
    // Keep one selection small: shrink the longest dimension until it fits.
    while out.iter().map(DimSelection::len).product::<u64>() > MAX_ELEMENTS {
        let d = (0..out.len()).max_by_key(|&d| out[d].len()).unwrap();
        match &mut out[d] {
            DimSelection::Range { count, .. } => *count /= 2,
            DimSelection::Indices(list) => list.truncate(list.len() / 2),
        }
    }
    out
}

fn indices(sel: &DimSelection) -> Vec<u64> {
    match sel {
        DimSelection::Range { start, count, step } => {
            (0..*count).map(|k| start + k * step).collect()
        }
        DimSelection::Indices(list) => list.clone(),
    }
}

/// Buffer strides in elements (`None`: dense C order) and the buffer's length in bytes.
fn layout(layout: &Layout, out_shape: &[u64], item: usize) -> (Option<Vec<u64>>, usize) {
    let elements: u64 = out_shape.iter().product();
    match layout {
        Layout::Strided { fortran, pad, tail } if elements > 0 => {
            let mut strides = vec![0u64; out_shape.len()];
            let mut step = 1u64;
            let dims: Vec<usize> = if *fortran {
                (0..out_shape.len()).collect()
            } else {
                (0..out_shape.len()).rev().collect()
            };
            for d in dims {
                strides[d] = step;
                step *= out_shape[d] + u64::from(pad[d % 4] % 3);
            }
            let end: u64 = out_shape
                .iter()
                .zip(&strides)
                .map(|(n, s)| (n - 1) * s)
                .sum::<u64>()
                + 1;
            (
                Some(strides),
                (end as usize + usize::from(*tail % 3)) * item,
            )
        }
        _ => (None, elements as usize * item),
    }
}

fn dense_strides(out_shape: &[u64]) -> Vec<u64> {
    let mut strides = vec![1u64; out_shape.len()];
    for d in (0..out_shape.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * out_shape[d + 1];
    }
    strides
}

/// Calls `f(model offset, buffer offset)` in bytes for every element of an orthogonal
/// selection, in C order of the result.
fn for_each(model: &Model, lists: &[Vec<u64>], strides: &[u64], mut f: impl FnMut(usize, usize)) {
    let total: usize = lists.iter().map(Vec::len).product();
    let mut coords = vec![0u64; lists.len()];
    for linear in 0..total {
        let (mut rest, mut buffer) = (linear, 0u64);
        for d in (0..lists.len()).rev() {
            let k = rest % lists[d].len();
            rest /= lists[d].len();
            coords[d] = lists[d][k];
            buffer += k as u64 * strides[d];
        }
        f(model.offset(&coords), buffer as usize * model.item);
    }
}

fn points(model: &Model, raw: &[Vec<u8>]) -> Vec<u64> {
    if model.elements() == 0 {
        return Vec::new();
    }
    let mut coords = Vec::new();
    for p in raw.iter().take(64) {
        for (d, &n) in model.shape.iter().enumerate() {
            coords.push(u64::from(p.get(d).copied().unwrap_or(0)) % n);
        }
    }
    coords
}

fn boxes(model: &Model, raw: &[(u8, u8)]) -> (Vec<u64>, Vec<u64>) {
    let sels: Vec<Sel> = (0..model.shape.len())
        .map(|d| {
            let (start, count) = raw.get(d).copied().unwrap_or((0, 255));
            Sel::Range {
                start,
                count,
                step: 0,
            }
        })
        .collect();
    let sel = selection(&sels, &model.shape);
    let (mut start, mut count) = (Vec::new(), Vec::new());
    for s in sel {
        if let DimSelection::Range {
            start: a, count: n, ..
        } = s
        {
            start.push(a);
            count.push(n);
        }
    }
    (start, count)
}

/// The array's metadata document and the model of its contents (all fill value).
fn create(input: &Input) -> (Value, Model) {
    let (v2, v3, item) = DTYPES[usize::from(input.dtype) % DTYPES.len()];
    let boolean = v2 == "b1";
    let ndim = input.dims.len().min(4);
    let mut shape: Vec<u64> = input.dims[..ndim]
        .iter()
        .map(|d| u64::from(d.extent % 24))
        .collect();
    while shape.iter().product::<u64>() > MAX_ELEMENTS {
        let d = (0..ndim).max_by_key(|&d| shape[d]).unwrap();
        shape[d] /= 2;
    }
    let sharded = matches!(input.format, Format::V3Sharded { .. });
    // Chunks may overhang the array's edge; a shard holds a whole number of inner chunks.
    let inner: Vec<u64> = input.dims[..ndim]
        .iter()
        .zip(&shape)
        .map(|(d, &n)| 1 + u64::from(d.inner) % (n + 2))
        .collect();
    let mut chunks: Vec<u64> = input.dims[..ndim]
        .iter()
        .zip(&inner)
        .zip(&shape)
        .map(|((d, &i), &n)| {
            if sharded {
                i * (1 + u64::from(d.chunk) % 3)
            } else {
                1 + u64::from(d.chunk) % (n + 2)
            }
        })
        .collect();
    let mut inner = inner;
    let grid = |shape: &[u64], chunks: &[u64]| -> u64 {
        shape
            .iter()
            .zip(chunks)
            .map(|(&n, &c)| n.div_ceil(c))
            .product()
    };
    while grid(&shape, if sharded { &inner } else { &chunks }) > MAX_CHUNKS {
        let d = (0..ndim)
            .max_by_key(|&d| shape[d].div_ceil(if sharded { inner[d] } else { chunks[d] }))
            .unwrap();
        if sharded {
            inner[d] *= 2;
            chunks[d] *= 2;
        } else {
            chunks[d] *= 2;
        }
    }
    let fill_int = input.fill % 4;
    let fill_json = if boolean {
        json!(fill_int % 2 == 1)
    } else if v2 == "c8" {
        json!([f64::from(fill_int), 0.0])
    } else if v2.starts_with('f') && fill_int == 3 {
        json!("NaN")
    } else {
        json!(fill_int)
    };
    let endian = if input.big_endian { "big" } else { "little" };
    let order: Vec<u64> = (0..ndim as u64).rev().collect();
    let doc = match &input.format {
        Format::V2 { fortran, nested } => {
            let byte_order = match (item, input.big_endian) {
                (1, _) => "|",
                (_, true) => ">",
                _ => "<",
            };
            let compressor = match input.compressor % 4 {
                0 => json!(null),
                1 => json!({"id": "zlib", "level": 1}),
                2 => json!({"id": "blosc", "cname": "lz4", "clevel": 1, "shuffle": 1}),
                _ => json!({"id": "zstd", "level": 1}),
            };
            json!({"zarr_format": 2, "shape": shape, "chunks": chunks,
                "dtype": format!("{byte_order}{v2}"), "fill_value": fill_json,
                "order": if *fortran { "F" } else { "C" }, "compressor": compressor,
                "filters": null, "dimension_separator": if *nested { "/" } else { "." }})
        }
        Format::V3 { transpose, .. } | Format::V3Sharded { transpose, .. } => {
            let mut codecs = Vec::new();
            if *transpose && ndim > 1 {
                codecs.push(json!({"name": "transpose", "configuration": {"order": order}}));
            }
            codecs.push(json!({"name": "bytes", "configuration": {"endian": endian}}));
            match input.compressor % 4 {
                0 => {}
                1 => codecs.push(json!({"name": "gzip", "configuration": {"level": 1}})),
                2 => codecs.push(json!({"name": "blosc", "configuration":
                    {"cname": "lz4", "clevel": 1, "shuffle": "shuffle", "typesize": item,
                     "blocksize": 0}})),
                _ => codecs.push(json!({"name": "zstd", "configuration": {"level": 1}})),
            }
            let (codecs, separator) = match &input.format {
                Format::V3Sharded { index_at_start, .. } => (
                    vec![json!({"name": "sharding_indexed", "configuration": {
                        "chunk_shape": inner, "codecs": codecs,
                        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                                         {"name": "crc32c"}],
                        "index_location": if *index_at_start { "start" } else { "end" }}})],
                    "/",
                ),
                Format::V3 { nested: false, .. } => (codecs, "."),
                _ => (codecs, "/"),
            };
            // An odd seed makes the grid rectilinear: per dimension, lengths alternating
            // between the chunk length and one unit (an inner chunk, sharded) more, as far as
            // one chunk past the end; never more chunks than the regular grid has.
            let chunk_grid = match input.seed % 2 {
                0 => json!({"name": "regular", "configuration": {"chunk_shape": chunks}}),
                _ => {
                    let lengths: Vec<Vec<u64>> = (0..ndim)
                        .map(|d| {
                            let unit = if sharded { inner[d] } else { 1 };
                            let (mut list, mut sum) = (Vec::new(), 0);
                            while sum <= shape[d] {
                                let len = chunks[d] + unit * (list.len() as u64 % 2);
                                list.push(len);
                                sum += len;
                            }
                            list
                        })
                        .collect();
                    json!({"name": "rectilinear",
                        "configuration": {"kind": "inline", "chunk_shapes": lengths}})
                }
            };
            json!({"zarr_format": 3, "node_type": "array", "shape": shape,
                "data_type": v3, "fill_value": fill_json, "chunk_grid": chunk_grid,
                "chunk_key_encoding": {"name": "default",
                    "configuration": {"separator": separator}},
                "codecs": codecs})
        }
    };
    let model = Model {
        shape,
        item,
        fill: Vec::new(),
        bytes: Vec::new(),
        boolean,
    };
    (doc, model)
}

fuzz_target!(|input: Input| {
    if input.ops.len() > 24 {
        return;
    }
    let (doc, mut model) = create(&input);
    let store = StoreHandle::open("memory:", OpenMode::Write).expect("a memory store");
    let array = Array::create(store.clone(), "a", &doc.to_string())
        .unwrap_or_else(|e| panic!("creating {doc}: {e}"));
    model.fill = array.fill_native().to_vec();
    assert_eq!(model.fill.len(), model.item, "{doc}");
    model.bytes = model.fill.repeat(model.elements() as usize);
    let mut rng = Rng::new(input.seed);
    run(&input, &doc, &store, array, &mut model, &mut rng);
});

fn run(
    input: &Input,
    doc: &Value,
    store: &Arc<StoreHandle>,
    mut array: Array,
    model: &mut Model,
    rng: &mut Rng,
) {
    let item = model.item;
    for (round, op) in input.ops.iter().enumerate() {
        let context = || format!("op {round} {op:?} of {doc}");
        match op {
            Op::Write(sels, how) => {
                let sel = selection(sels, &model.shape);
                let out_shape: Vec<u64> = sel.iter().map(DimSelection::len).collect();
                let (strides, len) = layout(how, &out_shape, item);
                let data = model.values(rng, len / item);
                array
                    .write_orthogonal(&sel, strides.as_deref(), &data)
                    .unwrap_or_else(|e| panic!("{e}: {}", context()));
                let lists: Vec<Vec<u64>> = sel.iter().map(indices).collect();
                let strides = strides.unwrap_or_else(|| dense_strides(&out_shape));
                let mut writes = Vec::new();
                for_each(model, &lists, &strides, |m, b| writes.push((m, b)));
                for (m, b) in writes {
                    model.bytes[m..m + item].copy_from_slice(&data[b..b + item]);
                }
            }
            Op::WriteRegion(raw) => {
                let (start, count) = boxes(model, raw);
                let n: u64 = count.iter().product();
                let data = model.values(rng, n as usize);
                array
                    .write_region(&start, &count, &data)
                    .unwrap_or_else(|e| panic!("{e}: {}", context()));
                let lists: Vec<Vec<u64>> = (0..start.len())
                    .map(|d| (start[d]..start[d] + count[d]).collect())
                    .collect();
                let mut writes = Vec::new();
                for_each(model, &lists, &dense_strides(&count), |m, b| {
                    writes.push((m, b))
                });
                for (m, b) in writes {
                    model.bytes[m..m + item].copy_from_slice(&data[b..b + item]);
                }
            }
            Op::WritePoints(raw) => {
                let coords = points(model, raw);
                let ndim = model.shape.len();
                let n = if model.elements() == 0 {
                    0
                } else {
                    raw.len().min(64)
                };
                let data = model.values(rng, n);
                array
                    .write_points(n, &coords, &data)
                    .unwrap_or_else(|e| panic!("{e}: {}", context()));
                for p in 0..n {
                    let m = model.offset(&coords[p * ndim..(p + 1) * ndim]);
                    model.bytes[m..m + item].copy_from_slice(&data[p * item..(p + 1) * item]);
                }
            }
            Op::Read(sels, how) => {
                let sel = selection(sels, &model.shape);
                let out_shape: Vec<u64> = sel.iter().map(DimSelection::len).collect();
                let (strides, len) = layout(how, &out_shape, item);
                let mut out = vec![0xA5u8; len];
                array
                    .read_orthogonal(&sel, strides.as_deref(), &mut out)
                    .unwrap_or_else(|e| panic!("{e}: {}", context()));
                let mut expected = vec![0xA5u8; len];
                let lists: Vec<Vec<u64>> = sel.iter().map(indices).collect();
                let strides = strides.unwrap_or_else(|| dense_strides(&out_shape));
                for_each(model, &lists, &strides, |m, b| {
                    expected[b..b + item].copy_from_slice(&model.bytes[m..m + item])
                });
                assert!(out == expected, "read {sel:?} differs: {}", context());
            }
            Op::ReadRegion(raw) => {
                let (start, count) = boxes(model, raw);
                let n: u64 = count.iter().product();
                let mut out = vec![0xA5u8; n as usize * item];
                array
                    .read_region(&start, &count, &mut out)
                    .unwrap_or_else(|e| panic!("{e}: {}", context()));
                let lists: Vec<Vec<u64>> = (0..start.len())
                    .map(|d| (start[d]..start[d] + count[d]).collect())
                    .collect();
                let mut expected = vec![0xA5u8; out.len()];
                for_each(model, &lists, &dense_strides(&count), |m, b| {
                    expected[b..b + item].copy_from_slice(&model.bytes[m..m + item])
                });
                assert!(out == expected, "read region differs: {}", context());
            }
            Op::ReadStrided(raw) => {
                let sels: Vec<Sel> = raw
                    .iter()
                    .map(|&(start, count, step)| Sel::Range { start, count, step })
                    .collect();
                let sel = selection(&sels, &model.shape);
                let (mut start, mut count, mut step) = (Vec::new(), Vec::new(), Vec::new());
                for s in &sel {
                    if let DimSelection::Range {
                        start: a,
                        count: n,
                        step: k,
                    } = s
                    {
                        start.push(*a);
                        count.push(*n);
                        step.push(*k);
                    }
                }
                let n: u64 = count.iter().product();
                let mut out = vec![0xA5u8; n as usize * item];
                array
                    .read_strided(&start, &count, &step, &mut out)
                    .unwrap_or_else(|e| panic!("{e}: {}", context()));
                let lists: Vec<Vec<u64>> = sel.iter().map(indices).collect();
                let mut expected = vec![0xA5u8; out.len()];
                for_each(model, &lists, &dense_strides(&count), |m, b| {
                    expected[b..b + item].copy_from_slice(&model.bytes[m..m + item])
                });
                assert!(out == expected, "strided read differs: {}", context());
            }
            Op::ReadPoints(raw) => {
                let coords = points(model, raw);
                let ndim = model.shape.len();
                let n = if model.elements() == 0 {
                    0
                } else {
                    raw.len().min(64)
                };
                let mut out = vec![0xA5u8; n * item];
                array
                    .read_points(n, &coords, &mut out)
                    .unwrap_or_else(|e| panic!("{e}: {}", context()));
                for p in 0..n {
                    let m = model.offset(&coords[p * ndim..(p + 1) * ndim]);
                    assert!(
                        out[p * item..(p + 1) * item] == model.bytes[m..m + item],
                        "point {p} differs: {}",
                        context()
                    );
                }
            }
            Op::OutOfBounds { dim, by, write } => {
                let ndim = model.shape.len();
                if ndim == 0 || model.shape.contains(&0) {
                    continue;
                }
                let d = usize::from(*dim) % ndim;
                let mut start = vec![0u64; ndim];
                let mut count = vec![1u64; ndim];
                // Past the end by `by`, or a count reaching past it, or a wrapped sum.
                match by % 3 {
                    0 => start[d] = model.shape[d] + u64::from(*by / 3),
                    1 => count[d] = model.shape[d] + 1,
                    _ => {
                        start[d] = u64::MAX - u64::from(*by / 3);
                        count[d] = 2 + u64::from(*by / 3);
                    }
                }
                let n = count
                    .iter()
                    .try_fold(1u64, |a, &c| a.checked_mul(c))
                    .filter(|&n| n <= MAX_ELEMENTS)
                    .unwrap_or(1);
                let mut buf = vec![0x5Au8; n as usize * item];
                let result = if *write {
                    array.write_region(&start, &count, &buf)
                } else {
                    array.read_region(&start, &count, &mut buf)
                };
                assert!(
                    result.is_err(),
                    "{start:?} + {count:?} outside {:?} accepted: {}",
                    model.shape,
                    context()
                );
                let mut coords = vec![0u64; ndim];
                coords[d] = model.shape[d] + u64::from(*by);
                let result = if *write {
                    array.write_points(1, &coords, &buf[..item])
                } else {
                    array.read_points(1, &coords, &mut buf[..item])
                };
                assert!(result.is_err(), "point {coords:?} accepted: {}", context());
            }
            Op::Resize(raw) => {
                let ndim = model.shape.len();
                let mut shape: Vec<u64> = (0..ndim)
                    .map(|d| u64::from(raw.get(d).copied().unwrap_or(0) % 24))
                    .collect();
                while shape.iter().product::<u64>() > MAX_ELEMENTS {
                    let d = (0..ndim).max_by_key(|&d| shape[d]).unwrap();
                    shape[d] /= 2;
                }
                let grid: u64 = array.chunk_grid().grid_shape(&shape).iter().product();
                if grid > 4 * MAX_CHUNKS {
                    continue;
                }
                array
                    .resize(&shape)
                    .unwrap_or_else(|e| panic!("{e}: {}", context()));
                let mut bytes = model.fill.repeat(shape.iter().product::<u64>() as usize);
                let kept: Vec<Vec<u64>> = (0..ndim)
                    .map(|d| (0..model.shape[d].min(shape[d])).collect())
                    .collect();
                let mut copies = Vec::new();
                for_each(model, &kept, &vec![0; ndim], |m, _| copies.push(m));
                let resized = Model {
                    shape: shape.clone(),
                    item,
                    fill: Vec::new(),
                    bytes: Vec::new(),
                    boolean: false,
                };
                let mut targets = Vec::new();
                for_each(&resized, &kept, &vec![0; ndim], |m, _| targets.push(m));
                for (from, to) in copies.into_iter().zip(targets) {
                    bytes[to..to + item].copy_from_slice(&model.bytes[from..from + item]);
                }
                model.shape = shape;
                model.bytes = bytes;
                assert_eq!(array.shape(), model.shape, "{}", context());
            }
            Op::Reopen { cache } => {
                array = Array::open(store.clone(), "a")
                    .unwrap_or_else(|e| panic!("reopening: {e}: {}", context()));
                assert_eq!(array.shape(), model.shape, "{}", context());
                if *cache {
                    array.set_chunk_cache(1 << 16);
                }
            }
            Op::WriteEmptyChunks(write) => array.set_write_empty_chunks(*write),
        }
    }
}
