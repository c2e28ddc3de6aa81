//! `redis://HOST:PORT/DB` stores: the keys of a Redis database, as zarr-python 2's
//! `RedisStore` keeps them: the value of store key `k` is the Redis string `PREFIX:k` (prefix
//! `zarr` unless the option `prefix` says otherwise). Through the `redis` crate's synchronous
//! client, with a connection per thread at work (kept for the next call); listings use SCAN,
//! never KEYS, so a large database is not blocked. Batches of values go in one round trip
//! each (MGET, pipelined SET and DEL), a few batches at once on the thread pool.

use super::batches::{self, Changes, Values};
use super::{
    sorted_keys, Capabilities, Consume, Lead, Parts, Produce, Store, StoreOptions, ValueReader,
};
use crate::error::{Error, Result};
use crate::path::{validate_key, validate_prefix};
use crate::redact::redact_url;
use redis::{Client, Connection, ConnectionLike, RedisError};
use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

/// zarr-python 2's default key prefix.
pub const DEFAULT_PREFIX: &str = "zarr";

/// Keys SCAN is asked for per call.
const SCAN_COUNT: usize = 1000;

/// Values fetched or stored per round trip by the batched calls: enough that the round trips
/// of a large read cost little beside the transfer, few enough that the values of the
/// batches in flight (one per pool thread) stay a small part of memory.
const BATCH: usize = 16;

/// A Redis database as a store; see the module documentation.
pub struct RedisStore {
    client: Client,
    /// The URL as messages show it (a password hidden).
    url: String,
    prefix: String,
    /// Connections not in use.
    idle: Mutex<Vec<Connection>>,
    timeout: Duration,
    connect_timeout: Duration,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("url", &self.url)
            .field("prefix", &self.prefix)
            .finish()
    }
}

impl RedisStore {
    /// Connects to the database `url` (`redis://[USER[:PASSWORD]@]HOST[:PORT][/DB]`), with the
    /// options' `prefix`, `timeout_seconds` and `connect_timeout_seconds`; the server must
    /// answer a PING. `rediss://` (TLS) is not built in.
    pub fn open(url: &str, options: &StoreOptions) -> Result<RedisStore> {
        let shown = redact_url(url).into_owned();
        if url.starts_with("rediss://") {
            return Err(Error::Unsupported(format!(
                "{shown}: Redis over TLS (rediss://) is not built in; use redis://"
            )));
        }
        let client = Client::open(url).map_err(|e| {
            Error::InvalidArgument(format!(
                "{shown} is not a Redis URL (redis://HOST:PORT/DB): {e}"
            ))
        })?;
        let store = RedisStore {
            client,
            url: shown,
            prefix: options
                .prefix
                .clone()
                .unwrap_or_else(|| DEFAULT_PREFIX.to_string()),
            idle: Mutex::new(Vec::new()),
            timeout: options.timeout,
            connect_timeout: options.connect_timeout,
        };
        store.run("connecting", |c| redis::cmd("PING").query::<String>(c))?;
        Ok(store)
    }

    /// What every key of the store starts with, before a `:`.
    pub fn key_prefix(&self) -> &str {
        &self.prefix
    }

    /// The Redis key of store key `key`.
    fn redis_key(&self, key: &str) -> String {
        format!("{}:{key}", self.prefix)
    }

    fn idle(&self) -> MutexGuard<'_, Vec<Connection>> {
        self.idle.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A new connection with the store's timeouts.
    fn connect(&self) -> std::result::Result<Connection, RedisError> {
        let connection = self
            .client
            .get_connection_with_timeout(self.connect_timeout)?;
        connection.set_read_timeout(Some(self.timeout))?;
        connection.set_write_timeout(Some(self.timeout))?;
        Ok(connection)
    }

    /// Runs `command` on an idle connection (or a new one), then keeps the connection for the
    /// next call. A kept connection the server closed meanwhile is replaced once. Failures
    /// name `what` and the URL.
    fn run<T>(
        &self,
        what: &str,
        mut command: impl FnMut(&mut Connection) -> std::result::Result<T, RedisError>,
    ) -> Result<T> {
        let kept = self.idle().pop();
        let fresh = kept.is_none();
        let mut connection = match kept {
            Some(c) => c,
            None => self.connect().map_err(|e| self.error(what, e, true))?,
        };
        let mut result = command(&mut connection);
        if !fresh && result.as_ref().is_err_and(is_stale) {
            connection = self.connect().map_err(|e| self.error(what, e, true))?;
            result = command(&mut connection);
        }
        match result {
            Ok(value) => {
                self.idle().push(connection);
                Ok(value)
            }
            Err(e) => {
                if !e.is_unrecoverable_error() && connection.is_open() {
                    self.idle().push(connection);
                }
                Err(self.error(what, e, false))
            }
        }
    }

    /// A Redis failure as the library's error: a timeout is [`Error::Timeout`], no connection
    /// [`Error::Unreachable`], refused credentials [`Error::PermissionDenied`].
    fn error(&self, what: &str, e: RedisError, connecting: bool) -> Error {
        let message = format!("{what} (Redis {}): {e}", self.url);
        if e.is_timeout() {
            return Error::Timeout(message);
        }
        if matches!(e.code(), Some("NOAUTH" | "WRONGPASS" | "NOPERM"))
            || e.kind() == redis::ErrorKind::AuthenticationFailed
        {
            return Error::PermissionDenied(message);
        }
        if e.is_connection_refusal() || e.is_connection_dropped() || (connecting && e.is_io_error())
        {
            return Error::Unreachable(message);
        }
        Error::Io(message)
    }

    /// The values under `keys`, in one round trip (MGET).
    fn get_batch(&self, keys: &[String]) -> Result<Values> {
        let names = keys
            .iter()
            .map(|key| validate_key(key).map(|()| self.redis_key(key)))
            .collect::<Result<Vec<_>>>()?;
        self.run(&batches::describe("reading", keys), |c| {
            redis::cmd("MGET").arg(&names).query(c)
        })
    }

    /// Stores `changes` (`None`: erase the key) in one round trip (a pipeline).
    fn set_batch(&self, changes: Changes) -> Result<()> {
        let mut pipe = redis::pipe();
        let mut keys = Vec::with_capacity(changes.len());
        for (key, value) in changes {
            validate_key(&key)?;
            let name = self.redis_key(&key);
            match value {
                Some(value) => pipe.cmd("SET").arg(name).arg(value).ignore(),
                None => pipe.cmd("DEL").arg(name).ignore(),
            };
            keys.push(key);
        }
        self.run(&batches::describe("writing", &keys), |c| {
            pipe.query::<()>(c)
        })
    }

    /// The store keys below `prefix`, sorted, from SCAN over `PREFIX:prefix*` (SCAN may
    /// give a key twice; keys that are not UTF-8 or not valid keys are left out).
    fn scan(&self, prefix: &str) -> Result<BTreeMap<String, ()>> {
        let pattern = format!("{}*", glob_escape(&self.redis_key(prefix)));
        let strip = self.prefix.len() + 1;
        let mut keys = BTreeMap::new();
        let mut cursor: u64 = 0;
        loop {
            let (next, batch): (u64, Vec<Vec<u8>>) =
                self.run(&format!("listing {prefix:?}"), |c| {
                    redis::cmd("SCAN")
                        .arg(cursor)
                        .arg("MATCH")
                        .arg(&pattern)
                        .arg("COUNT")
                        .arg(SCAN_COUNT)
                        .query(c)
                })?;
            for key in batch {
                let key = match String::from_utf8(key) {
                    Ok(k) if k.len() > strip => k[strip..].to_string(),
                    _ => continue,
                };
                if validate_key(&key).is_ok() {
                    keys.insert(key, ());
                }
            }
            if next == 0 {
                return Ok(keys);
            }
            cursor = next;
        }
    }
}

/// Whether a command failed because a kept connection is no longer usable (the server
/// closed it), so that a new one may succeed.
fn is_stale(e: &RedisError) -> bool {
    e.is_connection_dropped() || (e.is_io_error() && !e.is_timeout())
}

/// `text` with Redis's glob characters escaped, to match itself in a SCAN pattern.
fn glob_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

impl Store for RedisStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        validate_key(key)?;
        let name = self.redis_key(key);
        self.run(&format!("reading {key:?}"), |c| {
            redis::cmd("GET").arg(&name).query(c)
        })
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        validate_key(key)?;
        let name = self.redis_key(key);
        self.run(&format!("writing {key:?}"), |c| {
            redis::cmd("SET").arg(&name).arg(value).query(c)
        })
    }

    fn erase(&self, key: &str) -> Result<()> {
        validate_key(key)?;
        let name = self.redis_key(key);
        self.run(&format!("erasing {key:?}"), |c| {
            redis::cmd("DEL").arg(&name).query::<i64>(c)
        })
        .map(drop)
    }

    fn value_len(&self, key: &str) -> Result<Option<u64>> {
        validate_key(key)?;
        let name = self.redis_key(key);
        // STRLEN says 0 for a missing key too: EXISTS tells them apart, in one transaction.
        let (exists, len): (bool, u64) = self.run(&format!("reading {key:?}"), |c| {
            redis::pipe()
                .atomic()
                .cmd("EXISTS")
                .arg(&name)
                .cmd("STRLEN")
                .arg(&name)
                .query(c)
        })?;
        Ok(exists.then_some(len))
    }

    fn contains(&self, key: &str) -> Result<bool> {
        validate_key(key)?;
        let name = self.redis_key(key);
        self.run(&format!("reading {key:?}"), |c| {
            redis::cmd("EXISTS").arg(&name).query(c)
        })
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            batched: true,
            ..Capabilities::LOCAL
        }
    }

    fn get_many(
        &self,
        count: usize,
        key: &(dyn Fn(usize) -> String + Sync),
        f: &Consume,
    ) -> Result<()> {
        batches::get_many(count, key, f, BATCH, |keys| self.get_batch(keys))
    }

    fn set_many(&self, count: usize, produce: &Produce) -> Result<()> {
        batches::set_many(count, produce, BATCH, |changes| self.set_batch(changes))
    }

    fn open_many(
        &self,
        count: usize,
        key: &(dyn Fn(usize) -> String + Sync),
        _lead: Lead,
        _parts: &Parts,
    ) -> Result<Vec<Option<Box<dyn ValueReader + '_>>>> {
        use rayon::prelude::*;
        // Values come whole, as `open_value` gives them: a batch per round trip.
        let fetched: Vec<Values> = crate::parallel::run(|| {
            batches::ranges(count, BATCH)
                .map(|range| self.get_batch(&range.map(key).collect::<Vec<_>>()))
                .collect()
        })?;
        Ok(fetched
            .into_iter()
            .flatten()
            .map(|value| value.map(|v| Box::new(v) as Box<dyn ValueReader>))
            .collect())
    }

    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        validate_prefix(prefix)?;
        Ok(sorted_keys::list_prefix(&self.scan(prefix)?, prefix))
    }

    fn list_dir(&self, prefix: &str) -> Result<Vec<String>> {
        validate_prefix(prefix)?;
        Ok(sorted_keys::list_dir(&self.scan(prefix)?, prefix))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_are_escaped() {
        assert_eq!(glob_escape("a*b?[c]\\"), "a\\*b\\?\\[c\\]\\\\");
    }

    /// The server `scripts/servers.sh` starts (`LIBZARR_TEST_REDIS_URL`); skipped without it
    /// unless `LIBZARR_REMOTE_TESTS` is `required`.
    fn server() -> Option<String> {
        match std::env::var("LIBZARR_TEST_REDIS_URL") {
            Ok(url) => Some(url),
            Err(_) if std::env::var("LIBZARR_REMOTE_TESTS").as_deref() == Ok("required") => {
                panic!("LIBZARR_TEST_REDIS_URL is not set: start the servers (scripts/servers.sh)")
            }
            Err(_) => None,
        }
    }

    #[test]
    fn behaves_like_a_store_under_its_prefix() {
        let Some(url) = server() else { return };
        let prefix = format!("unit*{}", std::process::id());
        let options = StoreOptions::from_json(&format!(r#"{{"prefix": {prefix:?}}}"#)).unwrap();
        let store = RedisStore::open(&url, &options).unwrap();
        super::super::tests::exercise_store(&store);
        // A key of a prefix the glob would match, were it not escaped, stays out of listings.
        let other = format!(r#"{{"prefix": "unitX{}"}}"#, std::process::id());
        let neighbour = RedisStore::open(&url, &StoreOptions::from_json(&other).unwrap()).unwrap();
        neighbour.set("zz", b"!").unwrap();
        assert!(!store.list_dir("").unwrap().contains(&"zz".to_string()));
        neighbour.erase("zz").unwrap();
        for key in store.list_prefix("").unwrap() {
            store.erase(&key).unwrap();
        }
        assert!(store.list_prefix("").unwrap().is_empty());
    }
}
