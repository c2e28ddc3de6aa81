//! Opening a store: the one path every front end takes (the C API, the `zarr` tool, the Rust
//! API and through them the bindings), so the same location behaves the same and costs the
//! same requests everywhere.

use crate::consolidated;
use crate::error::Result;
use crate::store::{AccessMode, Store, StoreHandle};
use std::sync::Arc;

/// Whether node lookups answer from the store's consolidated metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Consolidated {
    /// Read it when the store has some (`.zmetadata`, or a v3 root's `consolidated_metadata`)
    /// and answer node lookups from it, as zarr-python's `open_consolidated` does: one read
    /// opens the whole hierarchy.
    Use,
    /// Read every node's own documents (`ZARR_OPEN_IGNORE_CONSOLIDATED`).
    Ignore,
}

/// Opens the store at `location` ([`StoreHandle::open_with_options`] tells which backend) in
/// zarr-python's access `mode`, with its options as JSON (`None`: the defaults), then reads its
/// consolidated metadata as `consolidated` says. Never lists the store, except to empty it
/// (mode `w`) or to see that it is empty (mode `w-`).
pub fn open_store(
    location: &str,
    mode: AccessMode,
    options: Option<&str>,
    consolidated: Consolidated,
) -> Result<Arc<StoreHandle>> {
    let store = StoreHandle::open_in_mode(location, mode, options)?;
    finish(store, consolidated)
}

/// Opens a store over a backend of the caller's own (see [`StoreHandle::over_backend`]) as
/// [`open_store`] opens a location.
pub fn open_backend(
    backend: Box<dyn Store>,
    name: &str,
    scope: &str,
    mode: AccessMode,
    consolidated: Consolidated,
) -> Result<Arc<StoreHandle>> {
    let store = StoreHandle::over_backend(backend, name, scope, mode.open_mode());
    store.prepare_for(mode)?;
    finish(store, consolidated)
}

/// Reads the consolidated metadata of a store just opened, unless told not to.
fn finish(store: Arc<StoreHandle>, consolidated: Consolidated) -> Result<Arc<StoreHandle>> {
    if consolidated == Consolidated::Use {
        consolidated::load(&store)?;
    }
    Ok(store)
}
