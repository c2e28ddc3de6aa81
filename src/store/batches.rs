//! Ways to carry out the calls for many keys ([`Store::get_many`], [`Store::set_many`],
//! [`Store::open_many`]): key by key (a store without batches), or, for a store whose
//! requests cost a round trip each but that takes many keys in one request (Redis's MGET and
//! pipelines, a caller's `read_many`), in batches of a fixed size, one request each, a batch
//! per pool thread at a time, each value handed over on the thread that fetched its batch.

use super::{Consume, Lead, Produce, Store, ValueReader};
use crate::error::Result;
use rayon::prelude::*;

/// Values fetched under the keys asked for, in their order (`None`: missing).
pub type Values = Vec<Option<Vec<u8>>>;

/// Keys and what to store under each (`None`: erase it), in the order produced.
pub type Changes = Vec<(String, Option<Vec<u8>>)>;

/// [`Store::get_many`] as a store without batches does it: each value read on the pool.
pub fn get_each<S: Store + ?Sized>(
    store: &S,
    count: usize,
    key: &(dyn Fn(usize) -> String + Sync),
    f: &Consume,
) -> Result<()> {
    crate::parallel::run(|| {
        (0..count)
            .into_par_iter()
            .try_for_each(|i| f(i, store.get(&key(i))?.as_deref()))
    })
}

/// [`Store::set_many`] as a store without batches does it: each value stored on the pool
/// thread that produced it.
pub fn set_each<S: Store + ?Sized>(store: &S, count: usize, produce: &Produce) -> Result<()> {
    crate::parallel::run(|| {
        (0..count)
            .into_par_iter()
            .try_for_each(|i| match produce(i)? {
                Some((key, Some(value))) => store.set(&key, &value),
                Some((key, None)) => store.erase(&key),
                None => Ok(()),
            })
    })
}

/// [`Store::open_many`] as a store without batches does it: each value opened in turn.
pub fn open_each<'a, S: Store + ?Sized>(
    store: &'a S,
    count: usize,
    key: &(dyn Fn(usize) -> String + Sync),
    lead: Lead,
) -> Result<Vec<Option<Box<dyn ValueReader + 'a>>>> {
    (0..count)
        .map(|i| match lead {
            Lead::Tail(tail) => store.open_value_tail(&key(i), tail),
            Lead::Head(_) => store.open_value(&key(i)),
        })
        .collect()
}

/// The index ranges of `count` items in batches of `size`.
pub fn ranges(
    count: usize,
    size: usize,
) -> impl IndexedParallelIterator<Item = std::ops::Range<usize>> {
    (0..count.div_ceil(size))
        .into_par_iter()
        .map(move |b| b * size..count.min((b + 1) * size))
}

/// [`Store::get_many`] through `get_batch`, which fetches the values of up to `size` keys in
/// one request.
pub fn get_many(
    count: usize,
    key: &(dyn Fn(usize) -> String + Sync),
    f: &Consume,
    size: usize,
    get_batch: impl Fn(&[String]) -> Result<Values> + Sync,
) -> Result<()> {
    crate::parallel::run(|| {
        ranges(count, size).try_for_each(|range| {
            let keys: Vec<String> = range.clone().map(key).collect();
            let values = get_batch(&keys)?;
            range
                .zip(values)
                .try_for_each(|(i, value)| f(i, value.as_deref()))
        })
    })
}

/// [`Store::set_many`] through `set_batch`, which stores up to `size` changes in one request.
pub fn set_many(
    count: usize,
    produce: &Produce,
    size: usize,
    set_batch: impl Fn(Changes) -> Result<()> + Sync,
) -> Result<()> {
    crate::parallel::run(|| {
        ranges(count, size).try_for_each(|range| {
            let changes: Changes = range
                .map(produce)
                .collect::<Result<Vec<_>>>()?
                .into_iter()
                .flatten()
                .collect();
            match changes.is_empty() {
                true => Ok(()),
                false => set_batch(changes),
            }
        })
    })
}

/// What a batch of `keys` does, for messages: `reading "a/0" and 15 more keys`.
pub fn describe(verb: &str, keys: &[String]) -> String {
    match keys {
        [] => format!("{verb} no keys"),
        [one] => format!("{verb} {one:?}"),
        [first, rest @ ..] => format!("{verb} {first:?} and {} more keys", rest.len()),
    }
}
