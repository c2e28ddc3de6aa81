//! The C entry points called as a C program calls them, through raw pointers, on a memory
//! store with uncompressed chunks: no C code runs, so Miri checks the pointer handling of the
//! boundary and the copy kernels under it (`scripts/sanitizers.sh miri`). Tests whose
//! selections run on the thread pool are named `on_the_pool_*` (Miri checks them under Tree
//! Borrows: see the script).

use super::boundary::{c_string, close_handle, run, slice_arg, slice_out};
use super::*;
use crate::error::Error;
use std::ffi::{c_void, CStr};
use std::ptr;

fn last_error() -> String {
    unsafe { CStr::from_ptr(zarr_last_error()) }
        .to_str()
        .unwrap()
        .to_string()
}

/// The header's version constants are the crate's version, and the one number is computed
/// from them (rustls-ffi's shipped a wrong one whose parts were right).
#[test]
fn versions_agree_and_the_check_serves_the_same_minor_version() {
    let parts: Vec<u32> = env!("CARGO_PKG_VERSION")
        .split('.')
        .map(|p| p.parse().unwrap())
        .collect();
    assert_eq!(
        parts,
        [ZARR_VERSION_MAJOR, ZARR_VERSION_MINOR, ZARR_VERSION_PATCH]
    );
    let computed = ZARR_VERSION_MAJOR * 10000 + ZARR_VERSION_MINOR * 100 + ZARR_VERSION_PATCH;
    assert_eq!(ZARR_VERSION_NUMBER, computed);
    assert_eq!(zarr_version_number(), computed);
    let version = unsafe { CStr::from_ptr(zarr_version()) }.to_str().unwrap();
    assert_eq!(version, env!("CARGO_PKG_VERSION"));

    assert_eq!(zarr_check_version(ZARR_VERSION_NUMBER), ZARR_OK);
    let same_minor_other_patch = ZARR_VERSION_NUMBER / 100 * 100 + 99;
    assert_eq!(zarr_check_version(same_minor_other_patch), ZARR_OK);
    let next_minor = ZARR_VERSION_NUMBER / 100 * 100 + 100;
    assert_eq!(zarr_check_version(next_minor), ZARR_ERR_UNSUPPORTED);
    let message = last_error();
    assert!(
        message.contains(&format!(
            "zarr.h {}.{}.0",
            ZARR_VERSION_MAJOR,
            ZARR_VERSION_MINOR + 1
        )) && message.contains(&format!("libzarr {version}")),
        "{message}"
    );
    assert_eq!(
        zarr_check_version(ZARR_VERSION_NUMBER + 10000),
        ZARR_ERR_UNSUPPORTED
    );
}

#[test]
fn the_boundary_checks_raw_arguments() {
    let values = [1u32, 2, 3];
    assert_eq!(slice_arg(values.as_ptr(), 3, "v").unwrap(), &values);
    assert!(slice_arg::<u32>(ptr::null(), 0, "v").is_err());
    // One byte past an aligned pointer is not aligned for a u32.
    let misaligned = unsafe { values.as_ptr().cast::<u8>().add(1) }.cast::<u32>();
    assert!(slice_arg(misaligned, 1, "v").is_err());
    assert!(slice_arg(values.as_ptr(), usize::MAX / 2, "v").is_err());
    let mut out = [0u64; 2];
    slice_out(out.as_mut_ptr(), 2, "out").unwrap()[1] = 9;
    assert_eq!(out, [0, 9]);

    assert!(c_string("a\0b".into()).is_err());
    assert_eq!(
        run(|| Err(Error::InvalidArgument("bad x".into()))),
        ZARR_ERR_INVALID_ARGUMENT
    );
    assert_eq!(last_error(), "invalid argument: bad x");
    assert_eq!(run(|| panic!("boom")), ZARR_ERR_INTERNAL);
    assert!(last_error().contains("boom"), "{}", last_error());
    assert_eq!(close_handle::<u64>(ptr::null_mut()), ZARR_OK);
    unsafe { zarr_string_free(ptr::null_mut()) };
}

#[test]
fn on_the_pool_a_memory_store_round_trips_through_the_c_api() {
    unsafe {
        let mut store = ptr::null_mut();
        assert_eq!(
            zarr_store_open(c"memory:".as_ptr(), ZARR_MODE_WRITE, &mut store),
            ZARR_OK
        );
        // Big-endian elements in F order: reads and writes swap and reorder in the one copy.
        let document = cr#"{"zarr_format": 2, "shape": [5, 6], "chunks": [2, 4],
            "dtype": ">u2", "compressor": null, "fill_value": 7, "filters": null,
            "order": "F"}"#;
        let mut array = ptr::null_mut();
        assert_eq!(
            zarr_array_create(store, c"a".as_ptr(), document.as_ptr(), &mut array),
            ZARR_OK,
            "{}",
            last_error()
        );
        let mut all = [0u16; 30];
        let (zero, whole) = ([0u64, 0], [5u64, 6]);
        let read_all = |all: &mut [u16; 30]| {
            let status = zarr_array_read(
                array,
                2,
                zero.as_ptr(),
                whole.as_ptr(),
                all.as_mut_ptr().cast::<c_void>(),
                60,
            );
            assert_eq!(status, ZARR_OK, "{}", last_error());
        };
        read_all(&mut all);
        assert!(all.iter().all(|&v| v == 7));

        // A partial write: two chunks patched, the rest keeps the fill value.
        let data: Vec<u16> = (100..106).collect();
        let (start, count) = ([1u64, 2], [2u64, 3]);
        let status = zarr_array_write(
            array,
            2,
            start.as_ptr(),
            count.as_ptr(),
            data.as_ptr().cast::<c_void>(),
            12,
        );
        assert_eq!(status, ZARR_OK, "{}", last_error());
        read_all(&mut all);
        assert_eq!(&all[8..11], &[100, 101, 102]);
        assert_eq!(&all[14..17], &[103, 104, 105]);
        assert_eq!(all.iter().filter(|&&v| v == 7).count(), 24);

        // Every element, then a strided read into a Fortran-order buffer.
        let data: Vec<u16> = (0..30).collect();
        let status = zarr_array_write(
            array,
            2,
            zero.as_ptr(),
            whole.as_ptr(),
            data.as_ptr().cast::<c_void>(),
            60,
        );
        assert_eq!(status, ZARR_OK, "{}", last_error());
        read_all(&mut all);
        assert_eq!(all.to_vec(), data);
        let (start, count, step, strides) = ([1u64, 1], [2u64, 2], [2u64, 3], [1u64, 2]);
        let mut out = [0u16; 4];
        let status = zarr_array_read_strided(
            array,
            2,
            start.as_ptr(),
            count.as_ptr(),
            step.as_ptr(),
            strides.as_ptr(),
            out.as_mut_ptr().cast::<c_void>(),
            8,
        );
        assert_eq!(status, ZARR_OK, "{}", last_error());
        assert_eq!(out, [7, 19, 10, 22]);

        // An orthogonal selection: an index list (repeats allowed) by a range.
        let rows = [4u64, 0, 4];
        let selection = [
            zarr_dim_selection {
                indices: rows.as_ptr(),
                count: 3,
                start: 0,
                step: 1,
                flags: ptr::null(),
            },
            zarr_dim_selection {
                indices: ptr::null(),
                count: 2,
                start: 1,
                step: 4,
                flags: ptr::null(),
            },
        ];
        let mut out = [0u16; 6];
        let status = zarr_array_read_orthogonal(
            array,
            2,
            selection.as_ptr(),
            ptr::null(),
            out.as_mut_ptr().cast::<c_void>(),
            12,
        );
        assert_eq!(status, ZARR_OK, "{}", last_error());
        assert_eq!(out, [25, 29, 1, 5, 25, 29]);

        // Points, written then read back.
        let coords = [0u64, 5, 4, 0, 2, 3];
        let values = [900u16, 901, 902];
        let status =
            zarr_array_write_points(array, 2, 3, coords.as_ptr(), values.as_ptr().cast(), 6);
        assert_eq!(status, ZARR_OK, "{}", last_error());
        let mut out = [0u16; 3];
        let status =
            zarr_array_read_points(array, 2, 3, coords.as_ptr(), out.as_mut_ptr().cast(), 6);
        assert_eq!(status, ZARR_OK, "{}", last_error());
        assert_eq!(out, values);

        // Strings handed out and freed; refusals leave outputs alone and say why.
        let mut json = ptr::null_mut();
        assert_eq!(zarr_array_metadata_json(array, &mut json), ZARR_OK);
        assert!(CStr::from_ptr(json).to_str().unwrap().contains("\">u2\""));
        zarr_string_free(json);
        assert_eq!(
            zarr_array_metadata_json(array, ptr::null_mut()),
            ZARR_ERR_NULL_POINTER
        );
        assert!(last_error().contains("NULL"), "{}", last_error());
        let status = zarr_array_read(
            array,
            2,
            zero.as_ptr(),
            whole.as_ptr(),
            all.as_mut_ptr().cast::<c_void>(),
            59,
        );
        assert_eq!(status, ZARR_ERR_BUFFER_SIZE);

        assert_eq!(zarr_array_close(array), ZARR_OK);
        assert_eq!(zarr_store_close(store), ZARR_OK);
    }
}

/// Writes `values` over the whole array and reads them back, whole and as a strided box.
unsafe fn write_then_read(array: *mut zarr_array, shape: [u64; 2], values: &[u32]) {
    let zero = [0u64, 0];
    let bytes = std::mem::size_of_val(values);
    let status = zarr_array_write(
        array,
        2,
        zero.as_ptr(),
        shape.as_ptr(),
        values.as_ptr().cast(),
        bytes,
    );
    assert_eq!(status, ZARR_OK, "{}", last_error());
    let mut all = vec![0u32; values.len()];
    let status = zarr_array_read(
        array,
        2,
        zero.as_ptr(),
        shape.as_ptr(),
        all.as_mut_ptr().cast(),
        bytes,
    );
    assert_eq!(status, ZARR_OK, "{}", last_error());
    assert_eq!(all, values);
    // Every other row and column, into a buffer with a spare column.
    let (count, step, strides) = (
        [shape[0] / 2, shape[1] / 2],
        [2u64, 2],
        [shape[1] / 2 + 1, 1],
    );
    let mut out = vec![0u32; (count[0] * strides[0]) as usize];
    let status = zarr_array_read_strided(
        array,
        2,
        zero.as_ptr(),
        count.as_ptr(),
        step.as_ptr(),
        strides.as_ptr(),
        out.as_mut_ptr().cast(),
        out.len() * 4,
    );
    assert_eq!(status, ZARR_OK, "{}", last_error());
    for r in 0..count[0] {
        for c in 0..count[1] {
            let got = out[(r * strides[0] + c) as usize];
            assert_eq!(got, values[(2 * r * shape[1] + 2 * c) as usize]);
        }
    }
}

#[test]
fn on_the_pool_native_and_sharded_chunks_go_straight_to_and_from_the_callers_buffer() {
    unsafe {
        let mut store = ptr::null_mut();
        assert_eq!(
            zarr_store_open(c"memory:".as_ptr(), ZARR_MODE_WRITE, &mut store),
            ZARR_OK
        );
        // Native order, C order, uncompressed, whole rows: chunks are read straight into the
        // caller's buffer and written straight from it.
        let plain = cr#"{"zarr_format": 2, "shape": [4, 6], "chunks": [1, 6],
            "dtype": "<u4", "compressor": null, "fill_value": 0, "filters": null,
            "order": "C"}"#;
        // Two shards of 2x2 inner chunks, an index without a checksum (no C code).
        let sharded = cr#"{"zarr_format": 3, "node_type": "array", "shape": [4, 8],
            "data_type": "uint32", "fill_value": 0,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4, 4]}},
            "chunk_key_encoding": {"name": "default"},
            "codecs": [{"name": "sharding_indexed", "configuration": {"chunk_shape": [2, 2],
                "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
                "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}}]}"#;
        for (path, document, shape) in [(c"plain", plain, [4u64, 6]), (c"sharded", sharded, [4, 8])]
        {
            let mut array = ptr::null_mut();
            let status = zarr_array_create(store, path.as_ptr(), document.as_ptr(), &mut array);
            assert_eq!(status, ZARR_OK, "{}", last_error());
            let values: Vec<u32> = (1..=(shape[0] * shape[1]) as u32).collect();
            write_then_read(array, shape, &values);
            assert_eq!(zarr_array_close(array), ZARR_OK);
        }
        assert_eq!(zarr_store_close(store), ZARR_OK);
    }
}
