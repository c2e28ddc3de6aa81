//! Copies: a store's keys verbatim (a whole store or a subtree, between any stores), and an
//! array re-encoded into a new chunk shape, codec or layout, in bounded memory. Both report
//! their progress to the caller, who can cancel them.

mod array_copy;
mod blocks;
mod progress;
mod store_copy;

pub use array_copy::copy_array;
pub(crate) use array_copy::DEFAULT_BLOCK_BYTES;
pub use blocks::BlockPlan;
pub use progress::{Progress, ProgressFn};
pub use store_copy::copy_store;
