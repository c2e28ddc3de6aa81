//! A whole store packed into one input (members separated by `***NEWFILE***:KEY\n`, as GDAL's
//! `zarr_fuzzer` packs one), opened and read through the public API: consolidated metadata,
//! the tree, and a bounded part of every array.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    libzarr_fuzz::explore(&libzarr_fuzz::unpack(input));
});
