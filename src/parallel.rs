//! The thread pool that chunk work runs on. Its size is the caller's choice
//! ([`set_num_threads`]), else the `ZARR_NUM_THREADS` environment variable, else the number of
//! cores.

use crate::error::{Error, Result};
use rayon::{ThreadPool, ThreadPoolBuilder};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
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

/// Calls whose chunk work is running now, from all threads ([`run_call`]).
static CALLS_RUNNING: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// The threads the chunk work running on this thread may use for itself
    /// ([`spare_threads`]).
    static SPARE_THREADS: Cell<usize> = const { Cell::new(1) };
}

/// Counts a call as running while it lives.
struct RunningCall;

impl RunningCall {
    /// Counts this call; returns it with the number of calls running, itself included.
    fn start() -> (RunningCall, usize) {
        (
            RunningCall,
            CALLS_RUNNING.fetch_add(1, Ordering::Relaxed) + 1,
        )
    }
}

impl Drop for RunningCall {
    fn drop(&mut self) {
        CALLS_RUNNING.fetch_sub(1, Ordering::Relaxed);
    }
}

/// This thread's [`spare_threads`] while it lives; the earlier value comes back when it is
/// dropped, also when the task panics.
struct SpareThreads(usize);

impl SpareThreads {
    fn set(share: usize) -> SpareThreads {
        SpareThreads(SPARE_THREADS.replace(share))
    }
}

impl Drop for SpareThreads {
    fn drop(&mut self) {
        SPARE_THREADS.set(self.0);
    }
}

/// Runs the chunk work of one call: `tasks` tasks, `task(i)` for each. Several run on the
/// pool in parallel; a single task runs on the calling thread (handing it to a worker costs
/// more than a small task takes) and may itself use the pool's share of this call, which
/// [`spare_threads`] tells it: the pool's threads divided among the calls running at the
/// moment (a lone read of one uncompressed or blosc chunk splits its work across them).
pub fn run_call(tasks: u64, task: impl Fn(u64) -> Result<()> + Sync) -> Result<()> {
    use rayon::prelude::*;
    let (_running, calls) = RunningCall::start();
    match tasks {
        0 => Ok(()),
        1 => {
            let _share = SpareThreads::set((num_threads()? / calls).max(1));
            task(0)
        }
        n => run(|| (0..n).into_par_iter().try_for_each(&task)),
    }
}

/// How many threads the chunk work running on this thread may use for itself (1: only this
/// one), as [`run_call`] set it.
pub fn spare_threads() -> usize {
    SPARE_THREADS.get()
}

/// Held by the unit tests that resize the pool or depend on its size, so that they do not
/// run into each other.
#[cfg(test)]
pub(crate) static POOL_SIZE_TESTS: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_count_can_be_set_and_restored() {
        let _pool = POOL_SIZE_TESTS.lock().unwrap_or_else(|p| p.into_inner());
        set_num_threads(3).unwrap();
        assert_eq!(num_threads().unwrap(), 3);
        assert_eq!(run(|| Ok(rayon::current_num_threads())).unwrap(), 3);
        assert!(set_num_threads(1_000_000).is_err());
        set_num_threads(0).unwrap();
        assert_eq!(num_threads().unwrap(), default_threads().unwrap());
    }

    #[test]
    fn a_lone_task_gets_the_share_of_the_pool_its_call_has() {
        let _pool = POOL_SIZE_TESTS.lock().unwrap_or_else(|p| p.into_inner());
        let threads = num_threads().unwrap();
        let seen = std::sync::Mutex::new(Vec::new());
        run_call(1, |_| {
            seen.lock().unwrap().push(spare_threads());
            Ok(())
        })
        .unwrap();
        run_call(3, |_| {
            seen.lock().unwrap().push(spare_threads());
            Ok(())
        })
        .unwrap();
        let seen = seen.into_inner().unwrap();
        // Other tests may run calls at the same time, so the lone task's share is at most
        // the pool; tasks of a call with several get no share of their own.
        assert!((1..=threads).contains(&seen[0]), "{seen:?}");
        assert_eq!(&seen[1..], [1, 1, 1]);
        assert_eq!(spare_threads(), 1);
    }
}
