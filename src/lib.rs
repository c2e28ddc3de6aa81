//! libzarr: a Zarr v2 implementation in Rust with a C ABI (`include/zarr.h`).
//!
//! Layers, each knowing only those below it: [`ffi`] (the C ABI), [`group`]/[`hierarchy`]/[`consolidated`]
//! (nodes, paths, attributes, `.zmetadata`), [`array`] (selections to per-chunk work, run on the
//! [`parallel`] pool), [`selection`] and [`strided`] (index arithmetic and the one copy),
//! [`codec`], [`dtype`], [`metadata`], [`store`]. [`copy`] (stores, subtrees, re-encoded arrays)
//! is built on [`hierarchy`] and [`array`]. See `ARCHITECTURE.md`.

pub mod array;
pub mod codec;
pub mod consolidated;
pub mod copy;
pub mod dtype;
pub mod error;
pub mod ffi;
pub mod group;
pub mod hierarchy;
pub mod metadata;
pub mod parallel;
pub mod path;
pub mod selection;
pub mod store;
pub mod strided;

pub use array::Array;
pub use error::{Error, Result};
pub use group::Group;
pub use store::{OpenMode, StoreHandle};
