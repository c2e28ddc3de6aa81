//! Gives the shared library its SONAME on Linux: `libzarr.so.0.MINOR` while the version is
//! 0.x (every minor release may change the ABI), `libzarr.so.MAJOR` from 1.0, as cargo-c
//! names them. A program linked with `-lzarr` then needs a file of that name at run time:
//! this script puts the link `libzarr.so.0.MINOR -> libzarr.so` beside cargo's output
//! (`target/<profile>/`), and `cmake --install` installs `libzarr.so.MAJOR.MINOR.PATCH` with
//! both links. A version script keeps the dependencies' own C entry points unexported, so
//! the library exports the `zarr_*` functions alone.

use std::path::{Path, PathBuf};

/// What dependencies export besides the C API: rustc exports every `#[no_mangle]` function
/// of every crate in a cdylib, and a version script's wildcard cannot hide what rustc's own
/// lists by name, so these are listed by name. `scripts/consumer-test.sh` fails when the
/// library exports anything but `zarr_*`, e.g. after a dependency adds a function.
const DEPENDENCY_EXPORTS: [&str; 27] = [
    // bzip2-sys: its error callback for libbz2.
    "bz_internal_error",
    // crc-fast (object_store's CRC, default features): its C API.
    "crc_fast_checksum",
    "crc_fast_checksum_combine",
    "crc_fast_checksum_combine_with_params",
    "crc_fast_checksum_file",
    "crc_fast_checksum_file_with_params",
    "crc_fast_checksum_with_params",
    "crc_fast_clear_error",
    "crc_fast_crc32_iscsi",
    "crc_fast_crc32_iso_hdlc",
    "crc_fast_crc64_nvme",
    "crc_fast_digest_combine",
    "crc_fast_digest_finalize",
    "crc_fast_digest_finalize_reset",
    "crc_fast_digest_free",
    "crc_fast_digest_get_amount",
    "crc_fast_digest_get_state",
    "crc_fast_digest_new",
    "crc_fast_digest_new_with_init_state",
    "crc_fast_digest_new_with_params",
    "crc_fast_digest_reset",
    "crc_fast_digest_update",
    "crc_fast_error_message",
    "crc_fast_get_calculator_target",
    "crc_fast_get_custom_params",
    "crc_fast_get_last_error",
    "crc_fast_get_version",
];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let major = std::env::var("CARGO_PKG_VERSION_MAJOR").expect("set by cargo");
    let minor = std::env::var("CARGO_PKG_VERSION_MINOR").expect("set by cargo");
    let soversion = match major.as_str() {
        "0" => format!("0.{minor}"),
        _ => major,
    };
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        return;
    }
    let soname = format!("libzarr.so.{soversion}");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,{soname}");
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("set by cargo"));
    let hidden = out_dir.join("hidden-exports.map");
    // crc-fast comes with object_store's S3 client alone; a version script may not name a
    // symbol the library lacks (lld refuses it).
    let s3 = std::env::var_os("CARGO_FEATURE_S3").is_some();
    let exports: Vec<&str> = DEPENDENCY_EXPORTS
        .into_iter()
        .filter(|name| s3 || !name.starts_with("crc_fast_"))
        .collect();
    let script = format!("{{\n  local:\n    {};\n}};\n", exports.join(";\n    "));
    std::fs::write(&hidden, script).expect("OUT_DIR is writable");
    println!(
        "cargo:rustc-cdylib-link-arg=-Wl,--version-script={}",
        hidden.display()
    );
    // OUT_DIR is target/<profile>/build/libzarr-<hash>/out: the library lands three levels up.
    if let Some(profile_dir) = out_dir.ancestors().nth(3) {
        link_beside(profile_dir, &soname);
    }
}

/// Makes `dir/soname` a symbolic link to `libzarr.so` (it dangles until cargo links it).
#[cfg(unix)]
fn link_beside(dir: &Path, soname: &str) {
    let link = dir.join(soname);
    if std::fs::read_link(&link).is_ok_and(|to| to == Path::new("libzarr.so")) {
        return;
    }
    let _ = std::fs::remove_file(&link);
    if let Err(e) = std::os::unix::fs::symlink("libzarr.so", &link) {
        println!("cargo:warning=cannot link {}: {e}", link.display());
    }
}

#[cfg(not(unix))]
fn link_beside(_dir: &Path, _soname: &str) {}
