//! The thread pool that chunk work runs on. Its size is the caller's choice
//! ([`set_num_threads`]), else the `ZARR_NUM_THREADS` environment variable, else the number of
//! cores.

use crate::error::{Error, Result};
use rayon::{ThreadPool, ThreadPoolBuilder};
use std::sync::{Arc, RwLock};

/// The environment variable that sets the default number of worker threads.
pub const NUM_THREADS_ENV: &str = "ZARR_NUM_THREADS";

static POOL: RwLock<Option<Arc<ThreadPool>>> = RwLock::new(None);

fn build(threads: usize) -> Result<Arc<ThreadPool>> {
    ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("libzarr-{i}"))
        .build()
        .map(Arc::new)
        .map_err(|e| Error::Internal(format!("cannot start {threads} worker threads: {e}")))
}

/// The most worker threads the pool may have.
const MAX_THREADS: usize = 4096;

/// `ZARR_NUM_THREADS` when set (and not empty), else the number of cores; a value that is not
/// a number of threads is an error naming it, not a silent fallback.
fn default_threads() -> Result<usize> {
    let cores = || std::thread::available_parallelism().map_or(1, |n| n.get());
    let value = match std::env::var(NUM_THREADS_ENV) {
        Err(std::env::VarError::NotPresent) => return Ok(cores()),
        Ok(v) if v.trim().is_empty() => return Ok(cores()),
        Ok(v) => v,
        Err(std::env::VarError::NotUnicode(v)) => v.to_string_lossy().into_owned(),
    };
    match value.trim().parse::<usize>() {
        Ok(n) if (1..=MAX_THREADS).contains(&n) => Ok(n),
        _ => Err(Error::InvalidArgument(format!(
            "environment variable {NUM_THREADS_ENV}={value:?} is not a number of threads from 1 to {MAX_THREADS} (unset it for one thread per core)"
        ))),
    }
}

/// The pool, created with the default size on first use.
fn pool() -> Result<Arc<ThreadPool>> {
    if let Some(pool) = POOL.read().unwrap_or_else(|p| p.into_inner()).as_ref() {
        return Ok(pool.clone());
    }
    let mut slot = POOL.write().unwrap_or_else(|p| p.into_inner());
    if slot.is_none() {
        *slot = Some(build(default_threads()?)?);
    }
    Ok(slot.as_ref().expect("just set").clone())
}

/// Sets the number of worker threads for all later calls; 0 restores the default. Calls
/// already running finish on the old pool.
pub fn set_num_threads(threads: usize) -> Result<()> {
    let threads = if threads == 0 {
        default_threads()?
    } else {
        threads
    };
    if threads > MAX_THREADS {
        return Err(Error::InvalidArgument(format!(
            "{threads} threads is more than {MAX_THREADS}"
        )));
    }
    let new = build(threads)?;
    *POOL.write().unwrap_or_else(|p| p.into_inner()) = Some(new);
    Ok(())
}

/// The number of worker threads chunk work runs on.
pub fn num_threads() -> Result<usize> {
    Ok(pool()?.current_num_threads())
}

/// Runs `f` on the pool, so that rayon's parallel iterators inside it use the pool's threads.
pub fn run<T: Send>(f: impl FnOnce() -> Result<T> + Send) -> Result<T> {
    pool()?.install(f)
}

/// Runs `f` on the calling thread with a scope whose spawned work runs on the pool: the
/// caller can wait on something else (network requests) while the pool works.
pub fn in_place_scope<'scope, T>(f: impl FnOnce(&rayon::Scope<'scope>) -> T) -> Result<T> {
    Ok(pool()?.in_place_scope(f))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_count_can_be_set_and_restored() {
        set_num_threads(3).unwrap();
        assert_eq!(num_threads().unwrap(), 3);
        assert_eq!(run(|| Ok(rayon::current_num_threads())).unwrap(), 3);
        assert!(set_num_threads(1_000_000).is_err());
        set_num_threads(0).unwrap();
        assert_eq!(num_threads().unwrap(), default_threads().unwrap());
    }
}
