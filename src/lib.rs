//! libzarr: a Zarr v2 implementation in Rust with a C ABI (`include/zarr.h`).
//!
//! Layers, each knowing only those below it: [`ffi`] (the C ABI), [`copy`] (stores, subtrees,
//! re-encoded arrays), [`group`]/[`hierarchy`]/[`tree`]/[`consolidated`]
//! (nodes, paths, attributes, listings, `.zmetadata`), [`array`] (selections to per-chunk work,
//! run on the [`parallel`] pool), [`selection`] and [`strided`] (index arithmetic and the one
//! copy), [`codec`], [`dtype`], [`metadata`], [`store`]. See `ARCHITECTURE.md`.

pub mod array;
pub mod codec;
pub mod consolidated;
pub mod copy;
pub mod dtype;
pub mod error;
pub mod features;
pub mod ffi;
pub mod group;
mod group_info;
pub mod hierarchy;
pub mod keys;
pub mod metadata;
pub mod open;
pub mod parallel;
pub mod path;
pub mod redact;
pub mod selection;
pub mod store;
pub mod strided;
pub mod tree;

pub use array::Array;
pub use error::{Error, Result};
pub use group::Group;
pub use open::{open_store, Consolidated};
pub use store::{OpenMode, StoreHandle};
