//! The committed `include/zarr.h` must equal a fresh cbindgen generation.
//! Regenerate with `scripts/generate-header.sh` (or `ZARR_UPDATE_HEADER=1 cargo test --test header`).

use std::path::PathBuf;

#[test]
fn committed_header_is_up_to_date() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml");
    let mut fresh = Vec::new();
    cbindgen::Builder::new()
        .with_crate(&root)
        .with_config(config)
        .generate()
        .expect("cbindgen generation")
        .write(&mut fresh);
    let header = root.join("include/zarr.h");
    if std::env::var_os("ZARR_UPDATE_HEADER").is_some() {
        std::fs::write(&header, &fresh).expect("writing include/zarr.h");
    }
    let committed = std::fs::read(&header).unwrap_or_default();
    assert!(
        committed == fresh,
        "include/zarr.h is stale: run scripts/generate-header.sh and commit the result"
    );
}
