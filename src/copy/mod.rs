//! Copies: a store's keys verbatim (a whole store or a subtree, between any stores), an
//! array re-encoded into a new chunk shape, codec or layout, in bounded memory, and a node (an
//! array or a group with everything below it) re-encoded array by array; with zarr-python 2's
//! options (`if_exists`, `dry_run`, key filters, `shallow`, `without_attrs`), its log lines and
//! its counts. All report their progress to the caller, who can cancel them.

mod array_copy;
mod blocks;
mod copy_log;
mod key_filter;
mod node_copy;
mod options;
mod progress;
mod store_copy;

pub use array_copy::copy_array;
pub(crate) use array_copy::DEFAULT_BLOCK_BYTES;
pub use blocks::BlockPlan;
pub use copy_log::{CopyCounts, LogFn};
pub use key_filter::KeyFilter;
pub use node_copy::copy_node;
pub use options::{IfExists, NodeCopyOptions, StoreCopyOptions};
pub use progress::{Progress, ProgressFn};
pub use store_copy::{copy_store, copy_store_with_options};
