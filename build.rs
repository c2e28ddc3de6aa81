//! Gives the shared library its SONAME on Linux: `libzarr.so.0.MINOR` while the version is
//! 0.x (every minor release may change the ABI), `libzarr.so.MAJOR` from 1.0, as cargo-c
//! names them. A program linked with `-lzarr` then needs a file of that name at run time:
//! this script puts the link `libzarr.so.0.MINOR -> libzarr.so` beside cargo's output
//! (`target/<profile>/`), and `cmake --install` installs `libzarr.so.MAJOR.MINOR.PATCH` with
//! both links.

use std::path::{Path, PathBuf};

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
    // OUT_DIR is target/<profile>/build/libzarr-<hash>/out: the library lands three levels up.
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("set by cargo"));
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
