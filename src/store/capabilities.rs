//! What a store can do beyond the calls every store has. The engine plans with these and never
//! asks which kind of store it holds, so a new backend gets the fitting paths by saying what it
//! can do.

/// A store's capabilities ([`super::Store::capabilities`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capabilities {
    /// Batched calls ([`super::Store::get_many`], [`super::Store::set_many`],
    /// [`super::Store::open_many`]) keep many requests in flight, as a store on a network
    /// does: the engine hands it whole batches (every chunk of a read, the shards a write
    /// covers, metadata documents asked for together). Without, it reads and writes chunk by
    /// chunk on the thread pool, which is faster where a read costs no round trip.
    pub batched: bool,
    /// The store can list its keys (a web server cannot): what only a listing can tell (the
    /// members of a group without consolidated metadata, the chunks stored) is otherwise
    /// unknown.
    pub listing: bool,
    /// The store presents an N5 container as Zarr v2 keys: its chunks are N5 blocks, so it holds
    /// no Zarr v3 array and takes no chunk copied verbatim from a Zarr store.
    pub n5: bool,
}

impl Capabilities {
    /// A store on a local disk or in memory: no batches, listing, Zarr keys.
    pub(crate) const LOCAL: Capabilities = Capabilities {
        batched: false,
        listing: true,
        n5: false,
    };
}
