//! The C API driven by a script of calls with NULL pointers, wrong dimension counts, short
//! and long buffers, huge indices and arbitrary strings and JSON, on memory stores and a few
//! arrays (numbers, strings, records, sharded, 0-d, or created from fuzzed JSON). Every call
//! must return one of the documented status codes (never `ZARR_ERR_INTERNAL`, a caught panic),
//! leave `zarr_last_error` a valid string, and write nothing outside the output buffers it is
//! given: each lies between 64-byte guard bands that must stay untouched; buffers the library
//! only reads are allocated at their exact size, so AddressSanitizer sees any over-read. A
//! call refused for its arguments must leave its output buffer untouched.
//!
//! Only what the contract allows is passed: every pointer is NULL or valid for the size given
//! with it (the sizes may be wrong for the array; they are never larger than the allocation).
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use std::ffi::{c_char, c_void, CStr, CString};
use std::ptr::{null, null_mut};
use zarr::ffi::*;

const GUARD: usize = 64;
const GUARD_BYTE: u8 = 0xCD;
const FILL_BYTE: u8 = 0x3C;
/// At most this many bytes in one buffer.
const MAX_BUFFER: usize = 1 << 16;

/// Arrays the script can create (a `|O` array, records, a sharded v3 array, a 0-d array, ...).
const DOCUMENTS: &[&str] = &[
    r#"{"shape": [10, 7], "chunks": [4, 3], "dtype": "<i4", "fill_value": 5, "compressor": {"id": "zlib", "level": 1}}"#,
    r#"{"shape": [9], "chunks": [4], "dtype": "|O", "filters": [{"id": "vlen-utf8"}], "fill_value": null}"#,
    r#"{"shape": [6, 5], "chunks": [4, 4], "dtype": [["a", "<i2"], ["b", ">f8", [2]], ["c", "|S3"]], "fill_value": null}"#,
    r#"{"zarr_format": 3, "node_type": "array", "shape": [8, 6, 5], "data_type": "uint16", "fill_value": 3, "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4, 6, 5]}}, "codecs": [{"name": "sharding_indexed", "configuration": {"chunk_shape": [2, 3, 5], "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd"}]}}]}"#,
    r#"{"shape": [], "chunks": [], "dtype": "<f8", "fill_value": "NaN"}"#,
    r#"{"shape": [5, 4], "chunks": [2, 2], "dtype": "<U3", "fill_value": "", "order": "F"}"#,
    r#"{"shape": [12], "chunks": [5], "dtype": "<M8[3ms]", "fill_value": 0}"#,
    r#"{"zarr_format": 3, "node_type": "array", "shape": [7], "data_type": "string", "fill_value": "", "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [3]}}, "codecs": [{"name": "vlen-utf8"}]}"#,
    r#"{"shape": [4, 0, 3], "chunks": [2, 2, 2], "dtype": "|b1", "fill_value": true}"#,
];

/// Store locations: memory, and places that do not exist (opened read-only, nothing is
/// created on disk).
const LOCATIONS: &[&str] = &[
    "memory:",
    "/nonexistent-libzarr-fuzz/store",
    "/nonexistent-libzarr-fuzz/store.zip",
    "",
    "file://",
];

/// A number: small most of the time, sometimes huge.
#[derive(Arbitrary, Debug, Clone, Copy)]
struct Num(u8);

impl Num {
    fn get(self) -> u64 {
        match self.0 {
            0..=247 => u64::from(self.0 % 16),
            248 => u64::MAX,
            249 => u64::MAX / 2,
            250 => 1 << 32,
            251 => 1 << 63,
            252 => u64::from(u32::MAX),
            253 => 1 << 40,
            254 => u64::MAX - 1,
            _ => 100,
        }
    }
}

/// A string argument: NULL, or text that may be invalid UTF-8.
#[derive(Arbitrary, Debug)]
enum Text {
    Null,
    Bytes(Vec<u8>),
    Path(u8),
}

impl Text {
    fn c_string(&self) -> Option<CString> {
        const PATHS: &[&str] = &["", "a", "g", "g/a", "/g//a/", "a/b/c", "..", "a/.zarray"];
        match self {
            Text::Null => None,
            Text::Bytes(b) => {
                let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
                Some(CString::new(&b[..end]).expect("no NUL"))
            }
            Text::Path(i) => Some(CString::new(PATHS[usize::from(*i) % PATHS.len()]).unwrap()),
        }
    }
}

fn ptr(s: &Option<CString>) -> *const c_char {
    s.as_ref().map_or(null(), |s| s.as_ptr())
}

/// Which pointer arguments are NULL (bit i: argument i).
#[derive(Arbitrary, Debug, Clone, Copy)]
struct Nulls(u8);

impl Nulls {
    fn null(self, i: u32) -> bool {
        // Rarely: a NULL argument fails at once, so most calls get none.
        self.0 & 0xC0 == 0xC0 && self.0 & (1 << (i % 6)) != 0
    }
}

/// The size passed with a buffer: the right one for the call, or off by a few bytes.
#[derive(Arbitrary, Debug, Clone, Copy)]
struct Size(i8);

impl Size {
    fn apply(self, right: Option<usize>) -> usize {
        let right = right.filter(|&n| n <= MAX_BUFFER).unwrap_or(8);
        match self.0 {
            -128..=-100 => 0,
            100..=127 => right * 2 + 1,
            d if d.unsigned_abs() > 8 => right,
            d => right.saturating_add_signed(isize::from(d)).min(MAX_BUFFER),
        }
    }
}

#[derive(Arbitrary, Debug)]
struct Dims {
    ndim: u8,
    start: Vec<Num>,
    count: Vec<Num>,
    step: Vec<Num>,
}

#[derive(Arbitrary, Debug)]
enum Op {
    OpenStore {
        location: u8,
        mode: i32,
    },
    OpenStoreOptions {
        location: u8,
        options: Text,
    },
    CloseStore(u8),
    CreateArray {
        store: u8,
        path: Text,
        document: u8,
        nulls: Nulls,
    },
    CreateArrayJson {
        store: u8,
        path: Text,
        json: Text,
    },
    OpenArray {
        store: u8,
        path: Text,
    },
    CloseArray(u8),
    CreateGroup {
        store: u8,
        path: Text,
        format: i32,
    },
    OpenGroup {
        store: u8,
        path: Text,
    },
    CloseGroup(u8),
    Query {
        array: u8,
        which: u8,
        ndim: u8,
        nulls: Nulls,
    },
    GroupQuery {
        group: u8,
        which: u8,
        text: Text,
    },
    Read {
        array: u8,
        dims: Dims,
        size: Size,
        nulls: Nulls,
        write: bool,
    },
    Strided {
        array: u8,
        dims: Dims,
        size: Size,
        nulls: Nulls,
        write: bool,
        strides: bool,
    },
    Orthogonal {
        array: u8,
        dims: Dims,
        lists: Vec<Vec<Num>>,
        size: Size,
        nulls: Nulls,
        write: bool,
    },
    Points {
        array: u8,
        dims: Dims,
        npoints: u8,
        size: Size,
        nulls: Nulls,
        write: bool,
    },
    Vlen {
        array: u8,
        dims: Dims,
        noffsets: Size,
        size: Size,
        nulls: Nulls,
        write: bool,
        lengths: Vec<u8>,
    },
    Fields {
        array: u8,
        dims: Dims,
        names: Vec<Text>,
        size: Size,
        nulls: Nulls,
        write: bool,
    },
    Resize {
        array: u8,
        dims: Dims,
        nulls: Nulls,
    },
    Append {
        array: u8,
        axis: u8,
        count: Num,
        size: Size,
        nulls: Nulls,
    },
    AttrsSet {
        array: u8,
        json: Text,
    },
    Cache {
        array: u8,
        bytes: Num,
        empty: bool,
    },
    Store {
        store: u8,
        which: u8,
        a: Text,
        b: Text,
        nulls: Nulls,
    },
    CopyStore {
        from: u8,
        to: u8,
        a: Text,
        b: Text,
        cancel_after: u8,
    },
    CopyArray {
        array: u8,
        store: u8,
        path: Text,
        overrides: Text,
        cancel_after: u8,
    },
    Utf8 {
        text: Vec<u8>,
        nchars: Size,
        nulls: Nulls,
    },
    Utf32 {
        chars: Vec<u32>,
        size: Size,
        nulls: Nulls,
    },
    StatusName(i32),
}

/// An output buffer between guard bands, filled with `FILL_BYTE`.
struct Guarded {
    words: Vec<u64>,
    len: usize,
}

impl Guarded {
    fn new(len: usize) -> Guarded {
        let mut words = vec![0u64; (2 * GUARD + len).div_ceil(8)];
        let bytes = bytes_of(&mut words);
        bytes.fill(GUARD_BYTE);
        bytes[GUARD..GUARD + len].fill(FILL_BYTE);
        Guarded { words, len }
    }

    fn ptr<T>(&mut self) -> *mut T {
        bytes_of(&mut self.words)[GUARD..].as_mut_ptr().cast()
    }

    fn inner(&mut self) -> &mut [u8] {
        let len = self.len;
        &mut bytes_of(&mut self.words)[GUARD..GUARD + len]
    }

    /// Checks the guard bands, and that the buffer is untouched after an argument error.
    fn check(&mut self, status: zarr_status, what: &str) {
        let len = self.len;
        let bytes = bytes_of(&mut self.words);
        assert!(
            bytes[..GUARD].iter().all(|&b| b == GUARD_BYTE),
            "{what}: wrote before its buffer"
        );
        let end = (2 * GUARD + len).min(bytes.len());
        assert!(
            bytes[GUARD + len..end].iter().all(|&b| b == GUARD_BYTE),
            "{what}: wrote past its buffer of {len} bytes"
        );
        let argument_error = [
            ZARR_ERR_NULL_POINTER,
            ZARR_ERR_INVALID_ARGUMENT,
            ZARR_ERR_OUT_OF_BOUNDS,
            ZARR_ERR_BUFFER_SIZE,
        ]
        .contains(&status);
        if argument_error {
            assert!(
                bytes[GUARD..GUARD + len].iter().all(|&b| b == FILL_BYTE),
                "{what}: refused ({}) but wrote into its buffer",
                status_name(status)
            );
        }
    }
}

fn bytes_of(words: &mut [u64]) -> &mut [u8] {
    // SAFETY: any u64 storage is valid as bytes.
    unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().cast(), words.len() * 8) }
}

fn status_name(status: zarr_status) -> String {
    let name = zarr_status_name(status);
    assert!(!name.is_null(), "zarr_status_name({status}) is NULL");
    // SAFETY: a static NUL-terminated string.
    unsafe { CStr::from_ptr(name) }
        .to_string_lossy()
        .into_owned()
}

/// Checks a call's status and the last-error text.
fn check(status: zarr_status, what: &str) -> bool {
    let last = zarr_last_error();
    assert!(!last.is_null(), "{what}: zarr_last_error is NULL");
    // SAFETY: the library's thread-local NUL-terminated string.
    let text = unsafe { CStr::from_ptr(last) };
    assert!(
        status != ZARR_ERR_INTERNAL,
        "{what}: a panic reached the boundary: {text:?}"
    );
    assert!(
        status == ZARR_OK || status < 0,
        "{what}: positive status {status}"
    );
    assert!(
        status_name(status) != "ZARR_UNKNOWN_STATUS",
        "{what}: undocumented status {status}"
    );
    if status != ZARR_OK {
        assert!(
            !text.to_bytes().is_empty(),
            "{what}: failed without a message"
        );
    }
    status == ZARR_OK
}

/// Takes a string the library returned, checks it and frees it.
fn take_string(status: zarr_status, s: *mut c_char, what: &str) {
    if status == ZARR_OK {
        assert!(!s.is_null(), "{what}: succeeded without its string");
    }
    if !s.is_null() {
        // SAFETY: a string the library returned, freed once below.
        unsafe {
            let _ = CStr::from_ptr(s).to_bytes().len();
            zarr_string_free(s);
        }
    }
}

/// Exact-size input arrays (AddressSanitizer catches reads past them).
fn exact<T: Clone>(values: &[T], n: usize, default: T) -> Vec<T> {
    (0..n)
        .map(|i| values.get(i).cloned().unwrap_or(default.clone()))
        .collect()
}

fn opt<T>(v: &[T], is_null: bool) -> *const T {
    if is_null {
        null()
    } else if v.is_empty() {
        std::ptr::NonNull::dangling().as_ptr()
    } else {
        v.as_ptr()
    }
}

struct Session {
    stores: Vec<*mut zarr_store>,
    arrays: Vec<*mut zarr_array>,
    groups: Vec<*mut zarr_group>,
}

fn pick<T>(items: &[*mut T], i: u8) -> *mut T {
    // Index len picks NULL.
    items
        .get(usize::from(i) % (items.len() + 1))
        .copied()
        .unwrap_or(null_mut())
}

/// The array's dimension count and item size, when it is a live handle.
fn shape_of(array: *mut zarr_array) -> Option<(usize, usize)> {
    if array.is_null() {
        return None;
    }
    let mut ndim = 0usize;
    let mut kind = 0;
    let mut item = 0usize;
    // SAFETY: a live handle and valid outputs.
    unsafe {
        check(zarr_array_ndim(array, &mut ndim), "ndim");
        check(zarr_array_dtype(array, &mut kind, &mut item), "dtype");
    }
    Some((ndim, item))
}

impl Dims {
    fn ndim(&self, array: Option<(usize, usize)>) -> usize {
        match (self.ndim, array) {
            (0..=199, Some((n, _))) => n,
            (n, _) => usize::from(n % 6),
        }
    }

    fn start(&self, n: usize) -> Vec<u64> {
        exact(&self.start, n, Num(0))
            .iter()
            .map(|v| v.get())
            .collect()
    }

    fn count(&self, n: usize) -> Vec<u64> {
        exact(&self.count, n, Num(1))
            .iter()
            .map(|v| v.get())
            .collect()
    }

    fn step(&self, n: usize) -> Vec<u64> {
        exact(&self.step, n, Num(1))
            .iter()
            .map(|v| v.get())
            .collect()
    }
}

/// The byte size a selection of these counts needs, if it is small.
fn needed(counts: &[u64], item: usize) -> Option<usize> {
    counts
        .iter()
        .try_fold(item as u64, |a, &c| a.checked_mul(c))
        .and_then(|n| usize::try_from(n).ok())
}

unsafe extern "C" fn progress(_p: *const zarr_progress, user: *mut c_void) -> i32 {
    let left = &mut *user.cast::<u8>();
    if *left == 0 {
        return 1;
    }
    *left -= 1;
    0
}

impl Session {
    unsafe fn run(&mut self, op: &Op) {
        match op {
            Op::OpenStore { location, mode } => {
                let loc = LOCATIONS[usize::from(*location) % LOCATIONS.len()];
                // Only the memory store may be opened for writing: nothing touches the disk.
                let mode = if loc == "memory:" { *mode } else { *mode & !1 };
                let loc = CString::new(loc).unwrap();
                let mut store = null_mut();
                if check(
                    zarr_store_open(loc.as_ptr(), mode, &mut store),
                    "store_open",
                ) {
                    assert!(!store.is_null());
                    self.stores.push(store);
                }
            }
            Op::OpenStoreOptions { location, options } => {
                let loc = LOCATIONS[usize::from(*location) % LOCATIONS.len()];
                let loc = CString::new(loc).unwrap();
                let options = options.c_string();
                let mut store = null_mut();
                let status = zarr_store_open_options(loc.as_ptr(), 0, ptr(&options), &mut store);
                if check(status, "store_open_options") {
                    self.stores.push(store);
                }
            }
            Op::CloseStore(i) => {
                if !self.stores.is_empty() {
                    let store = self.stores.remove(usize::from(*i) % self.stores.len());
                    check(zarr_store_close(store), "store_close");
                } else {
                    check(zarr_store_close(null_mut()), "store_close(NULL)");
                }
            }
            Op::CreateArray {
                store,
                path,
                document,
                nulls,
            } => {
                let path = path.c_string();
                let doc =
                    CString::new(DOCUMENTS[usize::from(*document) % DOCUMENTS.len()]).unwrap();
                let mut array = null_mut();
                let out = if nulls.null(0) {
                    null_mut()
                } else {
                    &mut array
                };
                let status = zarr_array_create(
                    pick(&self.stores, *store),
                    ptr(&path),
                    if nulls.null(1) { null() } else { doc.as_ptr() },
                    out,
                );
                if check(status, "array_create") {
                    self.arrays.push(array);
                }
            }
            Op::CreateArrayJson { store, path, json } => {
                let (path, json) = (path.c_string(), json.c_string());
                let mut array = null_mut();
                let status = zarr_array_create(
                    pick(&self.stores, *store),
                    ptr(&path),
                    ptr(&json),
                    &mut array,
                );
                if check(status, "array_create(json)") {
                    self.arrays.push(array);
                }
            }
            Op::OpenArray { store, path } => {
                let path = path.c_string();
                let mut array = null_mut();
                if check(
                    zarr_array_open(pick(&self.stores, *store), ptr(&path), &mut array),
                    "array_open",
                ) {
                    self.arrays.push(array);
                }
            }
            Op::CloseArray(i) => {
                if !self.arrays.is_empty() {
                    let array = self.arrays.remove(usize::from(*i) % self.arrays.len());
                    check(zarr_array_close(array), "array_close");
                }
            }
            Op::CreateGroup {
                store,
                path,
                format,
            } => {
                let path = path.c_string();
                let mut group = null_mut();
                let status = if *format == 0 {
                    zarr_group_create(pick(&self.stores, *store), ptr(&path), &mut group)
                } else {
                    zarr_group_create_format(
                        pick(&self.stores, *store),
                        ptr(&path),
                        *format,
                        &mut group,
                    )
                };
                if check(status, "group_create") {
                    self.groups.push(group);
                }
            }
            Op::OpenGroup { store, path } => {
                let path = path.c_string();
                let mut group = null_mut();
                if check(
                    zarr_group_open(pick(&self.stores, *store), ptr(&path), &mut group),
                    "group_open",
                ) {
                    self.groups.push(group);
                }
            }
            Op::CloseGroup(i) => {
                if !self.groups.is_empty() {
                    let group = self.groups.remove(usize::from(*i) % self.groups.len());
                    check(zarr_group_close(group), "group_close");
                }
            }
            Op::Query {
                array,
                which,
                ndim,
                nulls,
            } => self.query(pick(&self.arrays, *array), *which, *ndim, *nulls),
            Op::GroupQuery { group, which, text } => {
                let group = pick(&self.groups, *group);
                let mut s = null_mut();
                let status = match which % 7 {
                    0 => zarr_group_list(group, &mut s),
                    1 => zarr_group_attrs_get(group, &mut s),
                    2 => zarr_group_info_json(group, &mut s),
                    3 => zarr_group_tree_text(group, &mut s),
                    4 => zarr_group_tree_json(group, &mut s),
                    5 => {
                        let json = text.c_string();
                        check(zarr_group_attrs_set(group, ptr(&json)), "group_attrs_set");
                        return;
                    }
                    _ => {
                        let mut format = 0;
                        check(zarr_group_zarr_format(group, &mut format), "group_format");
                        return;
                    }
                };
                check(status, "group query");
                take_string(status, s, "group query");
            }
            Op::Read {
                array,
                dims,
                size,
                nulls,
                write,
            } => {
                let array = pick(&self.arrays, *array);
                let info = shape_of(array);
                let n = dims.ndim(info);
                let (start, count) = (dims.start(n), dims.count(n));
                let len = size.apply(needed(&count, info.map_or(1, |i| i.1)));
                let mut buf = Guarded::new(len);
                let status = if *write {
                    let data = vec![7u8; len];
                    zarr_array_write(
                        array,
                        n,
                        opt(&start, nulls.null(0)),
                        opt(&count, nulls.null(1)),
                        opt(&data, nulls.null(2)).cast(),
                        len,
                    )
                } else {
                    let out = if nulls.null(2) { null_mut() } else { buf.ptr() };
                    zarr_array_read(
                        array,
                        n,
                        opt(&start, nulls.null(0)),
                        opt(&count, nulls.null(1)),
                        out,
                        len,
                    )
                };
                check(status, "array_read/write");
                buf.check(status, "array_read");
            }
            Op::Strided {
                array,
                dims,
                size,
                nulls,
                write,
                strides,
            } => {
                let array = pick(&self.arrays, *array);
                let info = shape_of(array);
                let n = dims.ndim(info);
                let (start, count, step) = (dims.start(n), dims.count(n), dims.step(n));
                // Buffer strides: dense C order over `count`, or the steps reused as strides.
                let buffer_strides: Vec<u64> = if *strides {
                    step.iter().map(|s| s % 64).collect()
                } else {
                    Vec::new()
                };
                let len = size.apply(needed(&count, info.map_or(1, |i| i.1)));
                let mut buf = Guarded::new(len);
                let bs = if *strides {
                    buffer_strides.as_ptr()
                } else {
                    null()
                };
                let status = if *write {
                    let data = vec![9u8; len];
                    zarr_array_write_strided(
                        array,
                        n,
                        opt(&start, nulls.null(0)),
                        opt(&count, nulls.null(1)),
                        opt(&step, nulls.null(3)),
                        bs,
                        opt(&data, nulls.null(2)).cast(),
                        len,
                    )
                } else {
                    let out = if nulls.null(2) { null_mut() } else { buf.ptr() };
                    zarr_array_read_strided(
                        array,
                        n,
                        opt(&start, nulls.null(0)),
                        opt(&count, nulls.null(1)),
                        opt(&step, nulls.null(3)),
                        bs,
                        out,
                        len,
                    )
                };
                check(status, "strided");
                buf.check(status, "read_strided");
            }
            Op::Orthogonal {
                array,
                dims,
                lists,
                size,
                nulls,
                write,
            } => {
                let array = pick(&self.arrays, *array);
                let info = shape_of(array);
                let n = dims.ndim(info);
                let (start, count, step) = (dims.start(n), dims.count(n), dims.step(n));
                let index_lists: Vec<Vec<u64>> = (0..n)
                    .map(|d| {
                        lists
                            .get(d)
                            .map(|l| l.iter().take(32).map(|v| v.get()).collect())
                            .unwrap_or_default()
                    })
                    .collect();
                let selection: Vec<zarr_dim_selection> = (0..n)
                    .map(|d| {
                        let list = &index_lists[d];
                        if lists.get(d).is_some_and(|l| !l.is_empty()) {
                            zarr_dim_selection {
                                indices: list.as_ptr(),
                                count: list.len() as u64,
                                start: 0,
                                step: 0,
                                flags: null(),
                            }
                        } else {
                            zarr_dim_selection {
                                indices: null(),
                                count: count[d],
                                start: start[d],
                                step: step[d],
                                flags: null(),
                            }
                        }
                    })
                    .collect();
                let counts: Vec<u64> = selection.iter().map(|s| s.count).collect();
                let len = size.apply(needed(&counts, info.map_or(1, |i| i.1)));
                let mut buf = Guarded::new(len);
                let status = if *write {
                    let data = vec![3u8; len];
                    zarr_array_write_orthogonal(
                        array,
                        n,
                        opt(&selection, nulls.null(0)),
                        null(),
                        opt(&data, nulls.null(2)).cast(),
                        len,
                    )
                } else {
                    let out = if nulls.null(2) { null_mut() } else { buf.ptr() };
                    zarr_array_read_orthogonal(
                        array,
                        n,
                        opt(&selection, nulls.null(0)),
                        null(),
                        out,
                        len,
                    )
                };
                check(status, "orthogonal");
                buf.check(status, "read_orthogonal");
            }
            Op::Points {
                array,
                dims,
                npoints,
                size,
                nulls,
                write,
            } => {
                let array = pick(&self.arrays, *array);
                let info = shape_of(array);
                let n = dims.ndim(info);
                let npoints = usize::from(*npoints % 32);
                let coords: Vec<u64> = (0..n * npoints)
                    .map(|i| dims.start.get(i).map_or(0, |v| v.get()))
                    .collect();
                let item = info.map_or(1, |i| i.1);
                let len = size.apply(npoints.checked_mul(item));
                let mut buf = Guarded::new(len);
                let status = if *write {
                    let data = vec![1u8; len];
                    zarr_array_write_points(
                        array,
                        n,
                        npoints,
                        opt(&coords, nulls.null(0)),
                        opt(&data, nulls.null(2)).cast(),
                        len,
                    )
                } else {
                    let out = if nulls.null(2) { null_mut() } else { buf.ptr() };
                    zarr_array_read_points(array, n, npoints, opt(&coords, nulls.null(0)), out, len)
                };
                check(status, "points");
                buf.check(status, "read_points");
            }
            Op::Vlen {
                array,
                dims,
                noffsets,
                size,
                nulls,
                write,
                lengths,
            } => {
                let array = pick(&self.arrays, *array);
                let info = shape_of(array);
                let n = dims.ndim(info);
                let (start, count) = (dims.start(n), dims.count(n));
                let items = needed(&count, 1);
                let mut bytes = 0usize;
                let status = zarr_array_vlen_size(
                    array,
                    n,
                    opt(&start, nulls.null(0)),
                    opt(&count, nulls.null(1)),
                    if nulls.null(3) {
                        null_mut()
                    } else {
                        &mut bytes
                    },
                );
                check(status, "vlen_size");
                let noff = noffsets.apply(items.map(|i| i + 1)).min(4096);
                let len = size.apply(Some(if status == ZARR_OK { bytes } else { 16 }));
                if *write {
                    let mut offsets = vec![0i64; noff];
                    let mut at = 0i64;
                    for (i, o) in offsets.iter_mut().enumerate() {
                        *o = at;
                        at += i64::from(lengths.get(i).copied().unwrap_or(1) % 5);
                    }
                    let data = vec![b'x'; len];
                    let status = zarr_array_write_vlen(
                        array,
                        n,
                        opt(&start, nulls.null(0)),
                        opt(&count, nulls.null(1)),
                        opt(&offsets, nulls.null(2)),
                        noff,
                        opt(&data, nulls.null(4)).cast(),
                        len,
                    );
                    check(status, "write_vlen");
                } else {
                    let mut offsets = Guarded::new(noff * 8);
                    let mut data = Guarded::new(len);
                    let status = zarr_array_read_vlen(
                        array,
                        n,
                        opt(&start, nulls.null(0)),
                        opt(&count, nulls.null(1)),
                        if nulls.null(2) {
                            null_mut()
                        } else {
                            offsets.ptr()
                        },
                        noff,
                        if nulls.null(4) {
                            null_mut()
                        } else {
                            data.ptr()
                        },
                        len,
                    );
                    check(status, "read_vlen");
                    offsets.check(status, "read_vlen offsets");
                    data.check(status, "read_vlen data");
                }
            }
            Op::Fields {
                array,
                dims,
                names,
                size,
                nulls,
                write,
            } => {
                let array = pick(&self.arrays, *array);
                let info = shape_of(array);
                let n = dims.ndim(info);
                let (start, count) = (dims.start(n), dims.count(n));
                let names: Vec<Option<CString>> = names
                    .iter()
                    .take(4)
                    .map(|t| match t {
                        Text::Path(i) => {
                            Some(CString::new(["a", "b", "c", "d"][usize::from(*i) % 4]).unwrap())
                        }
                        other => other.c_string(),
                    })
                    .collect();
                let pointers: Vec<*const c_char> = names.iter().map(ptr).collect();
                let len = size.apply(needed(&count, 11));
                let mut buf = Guarded::new(len);
                let status = if *write {
                    let data = vec![2u8; len];
                    zarr_array_write_fields(
                        array,
                        n,
                        opt(&start, nulls.null(0)),
                        opt(&count, nulls.null(1)),
                        opt(&pointers, nulls.null(3)),
                        pointers.len(),
                        opt(&data, nulls.null(2)).cast(),
                        len,
                    )
                } else {
                    let out = if nulls.null(2) { null_mut() } else { buf.ptr() };
                    zarr_array_read_fields(
                        array,
                        n,
                        opt(&start, nulls.null(0)),
                        opt(&count, nulls.null(1)),
                        opt(&pointers, nulls.null(3)),
                        pointers.len(),
                        out,
                        len,
                    )
                };
                check(status, "fields");
                buf.check(status, "read_fields");
            }
            Op::Resize { array, dims, nulls } => {
                let array = pick(&self.arrays, *array);
                let n = dims.ndim(shape_of(array));
                let shape = dims.count(n);
                check(
                    zarr_array_resize(array, n, opt(&shape, nulls.null(0))),
                    "resize",
                );
            }
            Op::Append {
                array,
                axis,
                count,
                size,
                nulls,
            } => {
                let array = pick(&self.arrays, *array);
                let item = shape_of(array).map_or(1, |i| i.1);
                let len = size.apply(Some(item * 8));
                let data = vec![4u8; len];
                check(
                    zarr_array_append(
                        array,
                        usize::from(*axis % 5),
                        count.get(),
                        opt(&data, nulls.null(0)).cast(),
                        len,
                    ),
                    "append",
                );
            }
            Op::AttrsSet { array, json } => {
                let json = json.c_string();
                check(
                    zarr_array_attrs_set(pick(&self.arrays, *array), ptr(&json)),
                    "attrs_set",
                );
            }
            Op::Cache {
                array,
                bytes,
                empty,
            } => {
                let array = pick(&self.arrays, *array);
                check(
                    zarr_array_set_chunk_cache(array, bytes.get().min(1 << 20)),
                    "cache",
                );
                check(zarr_array_set_write_empty_chunks(array, *empty), "empty");
                let (mut h, mut m, mut b) = (0, 0, 0);
                check(
                    zarr_array_chunk_cache_stats(array, &mut h, &mut m, &mut b),
                    "cache stats",
                );
            }
            Op::Store {
                store,
                which,
                a,
                b,
                nulls,
            } => {
                let store = pick(&self.stores, *store);
                let (a, b) = (a.c_string(), b.c_string());
                let status = match which % 6 {
                    0 => {
                        let mut kind = 0;
                        let out = if nulls.null(0) { null_mut() } else { &mut kind };
                        zarr_store_node_kind(store, ptr(&a), out)
                    }
                    1 => zarr_store_delete(store, ptr(&a)),
                    2 => zarr_store_move(store, ptr(&a), ptr(&b)),
                    3 => zarr_consolidate_metadata(store),
                    4 => {
                        let mut in_use = false;
                        let out = if nulls.null(0) {
                            null_mut()
                        } else {
                            &mut in_use
                        };
                        zarr_store_refresh_consolidated(store, out)
                    }
                    _ => {
                        let mut in_use = false;
                        check(zarr_store_uses_consolidated(store, &mut in_use), "uses");
                        let mut stats =
                            std::mem::MaybeUninit::<zarr::store::RequestStats>::uninit();
                        zarr_store_request_stats(store, stats.as_mut_ptr())
                    }
                };
                check(status, "store op");
            }
            Op::CopyStore {
                from,
                to,
                a,
                b,
                cancel_after,
            } => {
                let (a, b) = (a.c_string(), b.c_string());
                let mut left = *cancel_after;
                let status = zarr_store_copy(
                    pick(&self.stores, *from),
                    ptr(&a),
                    pick(&self.stores, *to),
                    ptr(&b),
                    if left == 255 { None } else { Some(progress) },
                    (&mut left as *mut u8).cast(),
                );
                check(status, "store_copy");
            }
            Op::CopyArray {
                array,
                store,
                path,
                overrides,
                cancel_after,
            } => {
                let (path, overrides) = (path.c_string(), overrides.c_string());
                let mut left = *cancel_after;
                let status = zarr_array_copy_to(
                    pick(&self.arrays, *array),
                    pick(&self.stores, *store),
                    ptr(&path),
                    ptr(&overrides),
                    if left == 255 { None } else { Some(progress) },
                    (&mut left as *mut u8).cast(),
                );
                check(status, "array_copy_to");
            }
            Op::Utf8 {
                text,
                nchars,
                nulls,
            } => {
                let n = nchars.apply(Some(text.len())).min(4096) / 4;
                let mut out = Guarded::new(n * 4);
                let input = text.clone();
                let status = zarr_utf8_to_utf32(
                    opt(&input, nulls.null(0)).cast(),
                    input.len(),
                    if nulls.null(1) { null_mut() } else { out.ptr() },
                    n,
                );
                check(status, "utf8_to_utf32");
                out.check(status, "utf8_to_utf32");
            }
            Op::Utf32 { chars, size, nulls } => {
                let input: Vec<u32> = chars.iter().take(256).copied().collect();
                let len = size.apply(Some(input.len() * 4 + 1));
                let mut out = Guarded::new(len);
                let mut written = 0usize;
                let status = zarr_utf32_to_utf8(
                    opt(&input, nulls.null(0)),
                    input.len(),
                    if nulls.null(1) { null_mut() } else { out.ptr() },
                    len,
                    if nulls.null(2) {
                        null_mut()
                    } else {
                        &mut written
                    },
                );
                check(status, "utf32_to_utf8");
                out.check(status, "utf32_to_utf8");
                if status == ZARR_OK {
                    assert!(written <= len, "utf32_to_utf8 says {written} > {len}");
                    let _ = out.inner();
                }
            }
            Op::StatusName(status) => {
                let _ = status_name(*status);
            }
        }
    }

    unsafe fn query(&mut self, array: *mut zarr_array, which: u8, ndim: u8, nulls: Nulls) {
        let n = usize::from(ndim % 6);
        let mut s: *mut c_char = null_mut();
        let s_out = if nulls.null(0) { null_mut() } else { &mut s };
        let what = format!("query {}", which % 22);
        let status = match which % 22 {
            0..=2 => {
                let mut buf = Guarded::new(n * 8);
                let out = if nulls.null(0) { null_mut() } else { buf.ptr() };
                let status = match which % 22 {
                    0 => zarr_array_shape(array, n, out),
                    1 => zarr_array_chunks(array, n, out),
                    _ => zarr_array_inner_chunks(array, n, out),
                };
                buf.check(status, &what);
                status
            }
            3 => {
                let mut f = 0;
                zarr_array_zarr_format(array, &mut f)
            }
            4 => zarr_array_dimension_names(array, s_out),
            5 => {
                let len = usize::from(ndim);
                let mut buf = Guarded::new(len);
                let mut set = false;
                let out = if nulls.null(1) { null_mut() } else { buf.ptr() };
                let status = zarr_array_fill_value(array, out, len, &mut set);
                buf.check(status, &what);
                status
            }
            6 => {
                let mut order = 0;
                zarr_array_order(array, &mut order)
            }
            7 => zarr_array_compressor_json(array, s_out),
            8 => zarr_array_filters_json(array, s_out),
            9 => zarr_array_metadata_json(array, s_out),
            10 => zarr_array_attrs_get(array, s_out),
            11 => zarr_array_dtype_string(array, s_out),
            12 => {
                let mut unit: *const c_char = null();
                let mut multiple = 0;
                let status = zarr_array_time_unit(array, &mut unit, &mut multiple);
                if status == ZARR_OK {
                    assert!(!unit.is_null());
                    let _ = CStr::from_ptr(unit);
                }
                status
            }
            13 => {
                let mut count = 0;
                zarr_array_field_count(array, &mut count)
            }
            14 => {
                let (mut name, mut typestr) = (null_mut(), null_mut());
                let (mut offset, mut size, mut fndim) = (0, 0, 0);
                let status = zarr_array_field(
                    array,
                    usize::from(ndim % 5),
                    &mut name,
                    &mut typestr,
                    &mut offset,
                    &mut size,
                    &mut fndim,
                );
                take_string(status, name, "field name");
                take_string(status, typestr, "field type");
                status
            }
            15 => zarr_array_fields_json(array, s_out),
            16 => zarr_array_info_json(array, s_out),
            17 => zarr_array_object_codec(array, s_out),
            18 => {
                let mut w = false;
                zarr_array_write_empty_chunks(array, &mut w)
            }
            19 => {
                let mut nd = 0;
                zarr_array_ndim(array, if nulls.null(0) { null_mut() } else { &mut nd })
            }
            20 => {
                let (mut kind, mut item) = (0, 0);
                zarr_array_dtype(array, &mut kind, &mut item)
            }
            _ => {
                let mut threads = 0;
                zarr_num_threads(&mut threads)
            }
        };
        check(status, &what);
        let gives_string = matches!(which % 22, 4 | 7..=11 | 15..=17);
        if gives_string && !s_out.is_null() {
            take_string(status, s, &what);
        }
    }

    unsafe fn close(&mut self) {
        for a in self.arrays.drain(..) {
            check(zarr_array_close(a), "array_close");
        }
        for g in self.groups.drain(..) {
            check(zarr_group_close(g), "group_close");
        }
        for s in self.stores.drain(..) {
            check(zarr_store_close(s), "store_close");
        }
    }
}

fuzz_target!(|ops: Vec<Op>| {
    if ops.len() > 48 {
        return;
    }
    let mut session = Session {
        stores: Vec::new(),
        arrays: Vec::new(),
        groups: Vec::new(),
    };
    // SAFETY: every pointer passed is NULL or valid for the size passed with it; handles are
    // live until closed, and closed once.
    unsafe {
        for op in &ops {
            session.run(op);
        }
        session.close();
    }
});
