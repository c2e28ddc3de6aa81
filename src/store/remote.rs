//! Object storage and web servers as stores: `s3://bucket/prefix` (any S3-compatible server),
//! `az://container/prefix` (Azure Blob Storage), `gs://bucket/prefix` (Google Cloud Storage)
//! and `http://` / `https://` (read-only), through the `object_store` crate on a runtime the
//! library owns. The store calls stay synchronous: each blocks its caller on its requests.
//!
//! Each back end's configuration (the environment as its users' tools read it, overridden by
//! [`StoreOptions`]) is in a file of its own: `s3.rs`, `azure.rs`, `gcs.rs`.

use super::location::REMOTE_SCHEMES;
use super::options::{Backend, StoreOptions};
use super::request_counter::{CountingConnector, RequestCounters};
use super::RequestStats;
use super::{
    azure, gcs, s3, Capabilities, Consume, Lead, OpenMode, Parts, Produce, Store, ValueReader,
    Version,
};
use crate::error::{Error, Result};
use crate::redact::{redact, redact_url};
use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use object_store::client::{HttpError, HttpErrorKind};
use object_store::http::HttpBuilder;
use object_store::path::Path as ObjectPath;
use object_store::{
    GetOptions, GetRange, GetResult, ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload,
    UpdateVersion, WriteMultipart,
};
use std::sync::{Arc, Mutex, OnceLock};
use tokio::runtime::Runtime;
use tokio::sync::Semaphore;

/// Values from this size on are sent as multipart uploads.
const MULTIPART_BYTES: usize = 32 << 20;
/// The size of each part of a multipart upload (S3 wants at least 5 MiB).
const PART_BYTES: usize = 8 << 20;
/// Parts of one multipart upload in flight at once.
const PARTS_IN_FLIGHT: usize = 4;
/// Requests for the parts of one value in flight at once when many values are opened
/// together ([`Store::open_many`]).
const PARTS_PER_VALUE: usize = 4;

/// Parts of a value to prefetch at most this far apart are fetched in one request: a gap of a
/// page costs less than a request's own overhead, while gaps of 64 KiB (and a first request of
/// at least 64 KiB) fetched 8% more bytes than the remote benchmark's sharded boxes need...
const MERGE_GAP: u64 = 4 << 10;
/// ... unless that request would be longer than this.
const MERGED_MAX: u64 = 16 << 20;

/// How much of a value's end the first request of a partial read fetches: a shard's index
/// (at its end, as zarr-python writes it) and small values in one request.
const TAIL: u64 = 1 << 20;

/// The runtime every remote store's requests run on, started on first use (never in a library
/// constructor: its threads would not survive a `fork`).
fn runtime() -> Result<&'static Runtime> {
    static RUNTIME: OnceLock<std::result::Result<Runtime, String>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_name("libzarr-io")
                .enable_all()
                .build()
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| Error::Internal(format!("cannot start the I/O runtime: {e}")))
}

/// A bucket (or a prefix of one) on an S3-compatible server, or a directory of a web server.
pub struct RemoteStore {
    inner: Box<dyn ObjectStore>,
    /// The location as the caller gave it, its secrets hidden ([`redact_url`]), for messages.
    url: String,
    /// What every key is prefixed with inside the bucket (empty or ending in `/`).
    prefix: String,
    /// Web servers cannot be written to or listed.
    http: bool,
    /// Requests one call keeps in flight.
    requests_in_flight: usize,
    /// Every HTTP request the store's client sends is counted here.
    counters: Arc<RequestCounters>,
    /// Whether read-modify-write cycles write with `If-Match` / `If-None-Match`.
    conditional_writes: bool,
}

/// Without the client, whose configuration holds the credentials.
impl std::fmt::Debug for RemoteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteStore")
            .field("url", &self.url)
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl RemoteStore {
    /// Opens `url` (`s3://bucket[/prefix]`, `az://container[/prefix]`, `gs://bucket[/prefix]`,
    /// `http[s]://host[/path]`) with `options` over what the environment says. Web servers are
    /// read-only.
    pub fn open(url: &str, mode: OpenMode, options: &StoreOptions) -> Result<RemoteStore> {
        Self::open_named(url, mode, options).map_err(Error::redacted)
    }

    /// [`RemoteStore::open`], whose errors may still name secrets of `url`.
    fn open_named(url: &str, mode: OpenMode, options: &StoreOptions) -> Result<RemoteStore> {
        let invalid = |why: &str| Error::InvalidArgument(format!("store URL {url:?}: {why}"));
        let (scheme, backend) = REMOTE_SCHEMES
            .iter()
            .find(|(scheme, _)| url.starts_with(scheme))
            .ok_or_else(|| invalid("not an s3://, az://, gs://, http:// or https:// URL"))?;
        options.check_backend(*backend, url)?;
        let rest = &url[scheme.len()..];
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        match backend {
            Backend::Azure if bucket.is_empty() => return Err(invalid("no container name")),
            Backend::S3 | Backend::Gcs if bucket.is_empty() => {
                return Err(invalid("no bucket name"))
            }
            _ => {}
        }
        let counters = Arc::new(RequestCounters::default());
        let connector = || CountingConnector(counters.clone());
        let built = match backend {
            Backend::S3 => s3::builder(bucket, options)?
                .with_http_connector(connector())
                .build()
                .map(boxed),
            Backend::Azure => azure::builder(url, bucket, options)?
                .with_http_connector(connector())
                .build()
                .map(boxed),
            Backend::Gcs => gcs::builder(bucket, options)?
                .with_http_connector(connector())
                .build()
                .map(boxed),
            Backend::Directory
            | Backend::Zip
            | Backend::Memory
            | Backend::N5
            | Backend::Dbm
            | Backend::Redis
            | Backend::Sqlite
            | Backend::Lmdb
            | Backend::Reference => {
                unreachable!("REMOTE_SCHEMES names remote back ends only")
            }
            Backend::Http => {
                if mode != OpenMode::Read {
                    return Err(Error::Unsupported(format!(
                        "writing to {url}: web servers are read-only (open it with mode \"r\")"
                    )));
                }
                HttpBuilder::new()
                    .with_url(url.trim_end_matches('/'))
                    .with_client_options(options.client_options(url.starts_with("http://")))
                    .with_retry(options.retry_config())
                    .with_http_connector(connector())
                    .build()
                    .map(boxed)
            }
        };
        let inner = built.map_err(|e| Error::InvalidArgument(format!("store URL {url:?}: {e}")))?;
        let http = *backend == Backend::Http;
        let prefix = if http { "" } else { prefix.trim_matches('/') };
        Ok(RemoteStore {
            inner,
            url: redact_url(url).into_owned(),
            prefix: if prefix.is_empty() {
                String::new()
            } else {
                format!("{prefix}/")
            },
            http,
            requests_in_flight: options.requests_in_flight,
            counters,
            conditional_writes: options.conditional_writes && !http,
        })
    }

    fn path(&self, key: &str) -> ObjectPath {
        ObjectPath::from(format!("{}{key}", self.prefix))
    }

    /// Runs one request (or a few) to completion on the I/O runtime.
    fn block_on<T>(&self, work: impl std::future::Future<Output = T>) -> Result<T> {
        Ok(runtime()?.block_on(work))
    }

    /// The error for a failed request on `key` (`what` the request: "reading", ...): refused
    /// (401, 403), a missing bucket, unreachable, timed out, unsupported, or any other I/O
    /// failure.
    fn failed(&self, what: &str, key: &str, e: object_store::Error) -> Error {
        let message = redact(&format!("{what} {:?} in {}: {e}", key, self.url)).into_owned();
        match e {
            object_store::Error::NotFound { .. } if missing_bucket(&e) => Error::NotFound(message),
            object_store::Error::NotSupported { .. }
            | object_store::Error::NotImplemented { .. } => Error::Unsupported(message),
            object_store::Error::PermissionDenied { .. }
            | object_store::Error::Unauthenticated { .. } => Error::PermissionDenied(message),
            e => match http_error_kind(&e) {
                Some(HttpErrorKind::Connect) => Error::Unreachable(message),
                Some(HttpErrorKind::Timeout) => Error::Timeout(message),
                // object_store reports a refused listing as a generic error; its text
                // keeps the status.
                _ if [401, 403]
                    .iter()
                    .any(|s| message.contains(&format!("status code: {s} "))) =>
                {
                    Error::PermissionDenied(message)
                }
                _ => Error::Io(message),
            },
        }
    }

    /// Stores `value` under `key` with one PUT, or as a multipart upload from
    /// [`MULTIPART_BYTES`] on: either way readers see the old value or the whole new one.
    async fn send(&self, key: &str, value: Vec<u8>) -> Result<()> {
        let path = self.path(key);
        let sent = match value.len() < MULTIPART_BYTES {
            true => self
                .inner
                .put(&path, PutPayload::from(value))
                .await
                .map(drop),
            false => self.send_in_parts(&path, Bytes::from(value)).await,
        };
        sent.map_err(|e| self.failed("writing", key, e))
    }

    /// A multipart upload of `value` in parts of [`PART_BYTES`], a few at a time (each part
    /// is a request of its own, so a large value does not have to fit in one request's
    /// timeout); a failed upload is aborted.
    async fn send_in_parts(&self, path: &ObjectPath, value: Bytes) -> object_store::Result<()> {
        let upload = self.inner.put_multipart(path).await?;
        let mut writer = WriteMultipart::new_with_chunk_size(upload, PART_BYTES);
        let mut offset = 0;
        while offset < value.len() {
            writer.wait_for_capacity(PARTS_IN_FLIGHT).await?;
            let end = (offset + PART_BYTES).min(value.len());
            writer.put(value.slice(offset..end));
            offset = end;
        }
        writer.finish().await.map(drop)
    }

    /// Removes `key`; a missing key is not an error.
    async fn delete(&self, key: &str) -> Result<()> {
        match self.inner.delete(&self.path(key)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(self.failed("deleting", key, e)),
        }
    }

    /// The value under `key` (`None`: missing).
    async fn fetch(&self, key: &str) -> Result<Option<Bytes>> {
        let got = match self.inner.get(&self.path(key)).await {
            Ok(result) => result.bytes().await,
            Err(e) => Err(e),
        };
        match got {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) => self.missing(key, e),
        }
    }

    /// The `(offset, length)` parts of `key`: object_store merges nearby ones and sends the
    /// requests at once.
    async fn fetch_ranges(&self, key: &str, ranges: &[(u64, u64)]) -> Result<Option<Vec<Bytes>>> {
        let path = self.path(key);
        let asked: Vec<std::ops::Range<u64>> = ranges
            .iter()
            .filter(|&&(_, length)| length > 0)
            .map(|&(offset, length)| offset..offset.saturating_add(length))
            .collect();
        // Empty parts are not asked for; the value's length says whether it is there.
        let got = if asked.is_empty() {
            self.inner.head(&path).await.map(|_| Vec::new())
        } else {
            self.inner.get_ranges(&path, &asked).await
        };
        let mut got = match got {
            Ok(got) => got.into_iter(),
            Err(e) => return self.missing(key, e),
        };
        let mut parts = Vec::with_capacity(ranges.len());
        for &(offset, length) in ranges {
            let part = if length == 0 {
                Bytes::new()
            } else {
                got.next().unwrap_or_default()
            };
            if part.len() as u64 != length {
                let sent = format!("the server sent {} bytes of them", part.len());
                return Err(super::past_the_end(key, offset, length, &sent));
            }
            parts.push(part);
        }
        Ok(Some(parts))
    }

    /// Opens `key` for partial reads: one request fetches its [`Lead`] (a tail of 0 bytes:
    /// [`TAIL`]) and its length.
    async fn open_lead(&self, key: &str, lead: Lead) -> Result<Option<RemoteValue<'_>>> {
        let path = self.path(key);
        let range = match lead {
            Lead::Tail(0) => GetRange::Suffix(TAIL),
            Lead::Tail(tail) => GetRange::Suffix(tail),
            Lead::Head(head) => GetRange::Bounded(0..head.max(1)),
        };
        let options = GetOptions {
            range: Some(range.clone()),
            ..Default::default()
        };
        let got = async {
            let result = match (self.inner.get_opts(&path, options).await, range) {
                (Err(e @ object_store::Error::NotFound { .. }), _) => return Err(e),
                (Err(object_store::Error::NotSupported { .. }), GetRange::Suffix(tail)) => {
                    self.get_tail_after_head(&path, tail).await?
                }
                // An empty value has no range to ask for: fetch it whole.
                (Err(_), _) => self.inner.get(&path).await?,
                (Ok(result), _) => result,
            };
            let (len, start, e_tag) = (
                result.meta.size,
                result.range.start,
                result.meta.e_tag.clone(),
            );
            result.bytes().await.map(|tail| (len, start, e_tag, tail))
        };
        let (len, lead_start, e_tag, lead) = match got.await {
            Ok(got) => got,
            Err(e) => return self.missing(key, e),
        };
        Ok(Some(RemoteValue {
            store: self,
            key: key.to_string(),
            path,
            len,
            lead_start,
            lead,
            e_tag,
            fetched: Mutex::new(Vec::new()),
        }))
    }

    /// The last `tail` bytes of the value at `path` on a server that takes no suffix ranges
    /// (object_store asks Azure for none): its length from a HEAD, then that range of the same
    /// version; the whole value when it is no longer, or was replaced in between.
    async fn get_tail_after_head(
        &self,
        path: &ObjectPath,
        tail: u64,
    ) -> object_store::Result<GetResult> {
        let meta = self.inner.head(path).await?;
        if meta.size <= tail {
            return self.inner.get(path).await;
        }
        let options = GetOptions {
            range: Some(GetRange::Bounded(meta.size - tail..meta.size)),
            if_match: meta.e_tag,
            ..Default::default()
        };
        match self.inner.get_opts(path, options).await {
            Err(object_store::Error::Precondition { .. }) => self.inner.get(path).await,
            got => got,
        }
    }

    /// `Ok(None)` for a failed request that says the key is missing; an error when the bucket
    /// is (S3, GCS and Azure answer both with 404, telling them apart in the body) or for any
    /// other failure.
    fn missing<T>(&self, key: &str, e: object_store::Error) -> Result<Option<T>> {
        match e {
            object_store::Error::NotFound { .. } if missing_bucket(&e) => {
                Err(Error::NotFound(format!(
                    "the bucket (container) of {} does not exist (reading {key:?})",
                    self.url
                )))
            }
            object_store::Error::NotFound { .. } => Ok(None),
            e => Err(self.failed("reading", key, e)),
        }
    }

    /// The names below `prefix` (a store prefix), from a listing of the bucket.
    fn strip(&self, path: &ObjectPath, prefix: &str) -> Option<String> {
        path.as_ref()
            .strip_prefix(self.prefix.as_str())?
            .strip_prefix(prefix)
            .map(str::to_string)
    }

    fn refuse_listing(&self) -> Result<()> {
        if self.http {
            return Err(Error::Unsupported(format!(
                "listing {}: web servers cannot list their files (open the hierarchy through its consolidated metadata)",
                self.url
            )));
        }
        Ok(())
    }
}

/// Whether a 404 says the bucket is missing: S3's and GCS's `NoSuchBucket`, Azure's
/// `ContainerNotFound`.
fn missing_bucket(e: &object_store::Error) -> bool {
    let text = e.to_string();
    text.contains("NoSuchBucket") || text.contains("ContainerNotFound")
}

/// A built client as the trait object the store keeps.
fn boxed(store: impl ObjectStore) -> Box<dyn ObjectStore> {
    Box::new(store)
}

/// What kind of transport failure `e` comes from, if any.
fn http_error_kind(e: &(dyn std::error::Error + 'static)) -> Option<HttpErrorKind> {
    let mut cause = Some(e);
    while let Some(err) = cause {
        if let Some(http) = err.downcast_ref::<HttpError>() {
            return Some(http.kind());
        }
        cause = err.source();
    }
    None
}

/// The first error of work running in parallel: later ones are dropped.
#[derive(Default)]
struct FirstError(Mutex<Option<Error>>);

impl FirstError {
    fn record(&self, e: Error) {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert(e);
    }

    fn is_set(&self) -> bool {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).is_some()
    }

    fn into_result(self) -> Result<()> {
        self.0
            .into_inner()
            .unwrap_or_else(|p| p.into_inner())
            .map_or(Ok(()), Err)
    }
}

impl Store for RemoteStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        // `Vec::from` takes the buffer over without copying when nothing else shares it.
        Ok(self.block_on(self.fetch(key))??.map(Vec::from))
    }

    fn get_many(
        &self,
        count: usize,
        key: &(dyn Fn(usize) -> String + Sync),
        f: &Consume,
    ) -> Result<()> {
        let failure = FirstError::default();
        let (fail, failed) = (|e| failure.record(e), || failure.is_set());
        // Values fetched but not yet handed over count against this budget too.
        let budget = Arc::new(Semaphore::new(2 * self.requests_in_flight));
        crate::parallel::in_place_scope(|scope| {
            self.block_on(async {
                let mut arrivals = futures::stream::iter(0..count)
                    .map(|i| {
                        let budget = budget.clone();
                        async move {
                            let permit = budget.acquire_owned().await;
                            (i, self.fetch(&key(i)).await, permit)
                        }
                    })
                    .buffer_unordered(self.requests_in_flight);
                while let Some((i, fetched, permit)) = arrivals.next().await {
                    match fetched {
                        Ok(value) if !failed() => scope.spawn(move |_| {
                            if let Err(e) = f(i, value.as_deref()) {
                                fail(e);
                            }
                            drop(permit);
                        }),
                        Ok(_) => break,
                        Err(e) => {
                            fail(e);
                            break;
                        }
                    }
                }
            })
        })??;
        failure.into_result()
    }

    fn set_many(&self, count: usize, produce: &Produce) -> Result<()> {
        let failure = FirstError::default();
        let (fail, failed) = (|e| failure.record(e), || failure.is_set());
        // Values produced but not yet sent count against this budget.
        let budget = Arc::new(Semaphore::new(2 * self.requests_in_flight));
        crate::parallel::in_place_scope(|scope| {
            self.block_on(async {
                let (sender, produced) = futures::channel::mpsc::unbounded();
                let producing = async {
                    for i in 0..count {
                        let permit = budget.clone().acquire_owned().await;
                        if failed() {
                            break;
                        }
                        let sender = sender.clone();
                        scope.spawn(move |_| {
                            let _ = sender.unbounded_send((produce(i), permit));
                        });
                    }
                    drop(sender);
                };
                let sending = produced
                    .map(|(made, permit)| async move {
                        let sent = match made? {
                            Some((key, Some(value))) => self.send(&key, value).await,
                            Some((key, None)) => self.delete(&key).await,
                            None => Ok(()),
                        };
                        drop(permit);
                        sent
                    })
                    .buffer_unordered(self.requests_in_flight)
                    .for_each(|sent| {
                        if let Err(e) = sent {
                            fail(e);
                        }
                        async {}
                    });
                futures::join!(producing, sending);
            })
        })??;
        failure.into_result()
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        self.block_on(self.send(key, value.to_vec()))?
    }

    fn erase(&self, key: &str) -> Result<()> {
        self.block_on(self.delete(key))?
    }

    fn open_value(&self, key: &str) -> Result<Option<Box<dyn ValueReader + '_>>> {
        self.open_value_tail(key, TAIL)
    }

    fn get_ranges(&self, key: &str, ranges: &[(u64, u64)]) -> Result<Option<Vec<Vec<u8>>>> {
        let parts = self.block_on(self.fetch_ranges(key, ranges))??;
        Ok(parts.map(|parts| parts.into_iter().map(Vec::from).collect()))
    }

    fn open_value_tail(&self, key: &str, tail: u64) -> Result<Option<Box<dyn ValueReader + '_>>> {
        let opened = self.block_on(self.open_lead(key, Lead::Tail(tail)))??;
        Ok(opened.map(|value| Box::new(value) as Box<dyn ValueReader>))
    }

    fn open_many(
        &self,
        count: usize,
        key: &(dyn Fn(usize) -> String + Sync),
        lead: Lead,
        parts: &Parts,
    ) -> Result<Vec<Option<Box<dyn ValueReader + '_>>>> {
        let opened = self.block_on(
            futures::stream::iter(0..count)
                .map(|i| async move {
                    let Some(value) = self.open_lead(&key(i), lead).await? else {
                        return Ok(None);
                    };
                    let wanted = parts(i, &value.lead, value.len);
                    match value.fetch_parts(&wanted, PARTS_PER_VALUE).await {
                        // The reader finds the change too, and reads the value again.
                        Ok(()) | Err(Error::Changed(_)) => {}
                        Err(e) => return Err(e),
                    }
                    Ok(Some(Box::new(value) as Box<dyn ValueReader>))
                })
                .buffered(self.requests_in_flight)
                .try_collect::<Vec<_>>(),
        )?;
        opened
    }

    fn value_len(&self, key: &str) -> Result<Option<u64>> {
        let path = self.path(key);
        match self.block_on(self.inner.head(&path))? {
            Ok(meta) => Ok(Some(meta.size)),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.failed("reading", key, e)),
        }
    }

    fn request_stats(&self) -> Option<RequestStats> {
        Some(self.counters.snapshot())
    }

    fn get_versioned(&self, key: &str, buf: &mut Vec<u8>) -> Result<(bool, Version)> {
        if !self.conditional_writes {
            return Ok((self.get_into(key, buf)?, Version::Unchecked));
        }
        let got = self.block_on(async {
            let result = self.inner.get(&self.path(key)).await?;
            let version = match result.meta.e_tag.clone() {
                Some(e_tag) => Version::Tag {
                    e_tag,
                    version: result.meta.version.clone(),
                },
                None => Version::Unchecked,
            };
            Ok((result.bytes().await?, version))
        })?;
        buf.clear();
        match got {
            Ok((bytes, version)) => {
                buf.extend_from_slice(&bytes);
                Ok((true, version))
            }
            Err(e) => self
                .missing(key, e)
                .map(|_: Option<()>| (false, Version::Absent)),
        }
    }

    fn set_if(&self, key: &str, value: Option<&[u8]>, version: &Version) -> Result<bool> {
        let mode = match version {
            Version::Unchecked => PutMode::Overwrite,
            Version::Absent => PutMode::Create,
            Version::Tag { e_tag, version } => PutMode::Update(UpdateVersion {
                e_tag: Some(e_tag.clone()),
                version: version.clone(),
            }),
        };
        let Some(value) = value else {
            // object_store has no conditional delete; a value that was not there needs none.
            return match version {
                Version::Absent => Ok(true),
                _ => self.erase(key).map(|()| true),
            };
        };
        let options = PutOptions {
            mode,
            ..Default::default()
        };
        let payload = PutPayload::from(value.to_vec());
        match self.block_on(self.inner.put_opts(&self.path(key), payload, options))? {
            Ok(_) => Ok(true),
            Err(object_store::Error::Precondition { .. })
            | Err(object_store::Error::AlreadyExists { .. }) => Ok(false),
            Err(e @ object_store::Error::NotImplemented { .. }) => Err(Error::Unsupported(format!(
                "writing {key:?} in {} conditionally (If-Match): {e}; open the store with the option \"conditional_writes\": false to write without",
                self.url
            ))),
            Err(e) => Err(self.failed("writing", key, e)),
        }
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            batched: true,
            listing: !self.http,
            n5: false,
        }
    }

    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        let sized = self.list_prefix_sized(prefix)?;
        Ok(sized.into_iter().map(|(key, _)| key).collect())
    }

    fn list_prefix_sized(&self, prefix: &str) -> Result<Vec<(String, u64)>> {
        self.refuse_listing()?;
        let base = self.path(prefix.trim_end_matches('/'));
        let listed = self.block_on(async {
            let start = (!base.as_ref().is_empty()).then_some(&base);
            self.inner.list(start).try_collect::<Vec<_>>().await
        })?;
        let mut keys: Vec<(String, u64)> = listed
            .map_err(|e| self.failed("listing", prefix, e))?
            .iter()
            .filter_map(|meta| {
                let rest = self.strip(&meta.location, prefix)?;
                Some((format!("{prefix}{rest}"), meta.size))
            })
            .collect();
        keys.sort();
        Ok(keys)
    }

    fn list_dir(&self, prefix: &str) -> Result<Vec<String>> {
        self.refuse_listing()?;
        let base = self.path(prefix.trim_end_matches('/'));
        let listed = self.block_on(async {
            let start = (!base.as_ref().is_empty()).then_some(&base);
            self.inner.list_with_delimiter(start).await
        })?;
        let listed = listed.map_err(|e| self.failed("listing", prefix, e))?;
        let mut names: Vec<String> = listed
            .objects
            .iter()
            .map(|meta| &meta.location)
            .chain(&listed.common_prefixes)
            .filter_map(|path| self.strip(path, prefix))
            .filter(|name| !name.is_empty())
            .collect();
        names.sort();
        names.dedup();
        Ok(names)
    }
}

/// An open remote value: its length, the lead (head or tail) the first request fetched, and
/// the parts prefetched since; other parts are fetched with a ranged request each, from the
/// version the first request read ([`Error::Changed`] when the value was replaced since).
struct RemoteValue<'a> {
    store: &'a RemoteStore,
    key: String,
    path: ObjectPath,
    len: u64,
    /// Where the bytes the first request fetched start in the value.
    lead_start: u64,
    lead: Bytes,
    /// The `ETag` of the version the first request read, where the server sent one.
    e_tag: Option<String>,
    /// Prefetched parts: `(offset, bytes)`.
    fetched: Mutex<Vec<(u64, Bytes)>>,
}

impl RemoteValue<'_> {
    /// Fetches the `(offset, length)` parts not in the lead nor fetched yet: parts less than
    /// [`MERGE_GAP`] apart in one request (up to [`MERGED_MAX`]), `requests` at once.
    async fn fetch_parts(&self, parts: &[(u64, u64)], requests: usize) -> Result<()> {
        let mut wanted: Vec<(u64, u64)> = parts
            .iter()
            .map(|&(offset, n)| (offset, offset.saturating_add(n).min(self.len)))
            .map(|(start, end)| self.outside_lead(start, end))
            .filter(|&(start, end)| start < end && !self.is_prefetched(start, end))
            .collect();
        wanted.sort_unstable();
        let mut ranges: Vec<std::ops::Range<u64>> = Vec::new();
        for (start, end) in wanted {
            match ranges.last_mut() {
                Some(last) if start <= last.end + MERGE_GAP && end - last.start <= MERGED_MAX => {
                    last.end = last.end.max(end)
                }
                _ => ranges.push(start..end),
            }
        }
        let got = futures::stream::iter(ranges)
            .map(|r| async move { Ok::<_, Error>((r.start, self.get_part(r).await?)) })
            .buffer_unordered(requests)
            .try_collect::<Vec<_>>()
            .await?;
        let mut fetched = self.fetched.lock().unwrap_or_else(|p| p.into_inner());
        fetched.extend(got);
        Ok(())
    }

    /// The bytes of `range`, from the version the first request read: the request carries
    /// its `ETag` (`If-Match`), and an answer from another version, or none because the value
    /// was replaced or erased since, is [`Error::Changed`].
    async fn get_part(&self, range: std::ops::Range<u64>) -> Result<Bytes> {
        let options = GetOptions {
            range: Some(GetRange::Bounded(range)),
            if_match: self.e_tag.clone(),
            ..Default::default()
        };
        let changed = || {
            Error::Changed(format!(
                "{:?} in {} was replaced after its first part was read",
                self.key, self.store.url
            ))
        };
        let got = match self.store.inner.get_opts(&self.path, options).await {
            Ok(got) => got,
            Err(
                object_store::Error::Precondition { .. } | object_store::Error::NotFound { .. },
            ) => return Err(changed()),
            Err(e) => return Err(self.store.failed("reading", &self.key, e)),
        };
        // A server that ignores If-Match still names the version it sent.
        if got.meta.e_tag.is_some() && got.meta.e_tag != self.e_tag {
            return Err(changed());
        }
        got.bytes()
            .await
            .map_err(|e| self.store.failed("reading", &self.key, e))
    }

    /// What of `[start, end)` lies outside the lead, where the lead holds its start or its
    /// end (else all of it).
    fn outside_lead(&self, start: u64, end: u64) -> (u64, u64) {
        let (lead_start, lead_end) = (self.lead_start, self.lead_end());
        if start >= lead_start && start < lead_end {
            (lead_end.min(end), end)
        } else if end > lead_start && end <= lead_end {
            (start, lead_start.max(start))
        } else {
            (start, end)
        }
    }

    /// Where the lead ends in the value.
    fn lead_end(&self) -> u64 {
        self.lead_start + self.lead.len() as u64
    }

    /// Whether a prefetched part holds `[start, end)` whole.
    fn is_prefetched(&self, start: u64, end: u64) -> bool {
        let fetched = self.fetched.lock().unwrap_or_else(|p| p.into_inner());
        fetched
            .iter()
            .any(|(at, bytes)| *at <= start && end <= at + bytes.len() as u64)
    }

    /// Copies `[offset, offset + buf.len())` from a prefetched part holding it whole.
    fn copy_prefetched(&self, offset: u64, buf: &mut [u8]) -> bool {
        let fetched = self.fetched.lock().unwrap_or_else(|p| p.into_inner());
        let end = offset + buf.len() as u64;
        let Some((start, bytes)) = fetched
            .iter()
            .find(|(start, bytes)| *start <= offset && end <= start + bytes.len() as u64)
        else {
            return false;
        };
        let from = (offset - start) as usize;
        buf.copy_from_slice(&bytes[from..from + buf.len()]);
        true
    }
}

impl ValueReader for RemoteValue<'_> {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let end = offset
            .checked_add(buf.len() as u64)
            .filter(|&end| end <= self.len)
            .ok_or_else(|| {
                Error::CorruptChunk(format!(
                    "{:?} in {} holds {} bytes, ends before byte {offset} + {}",
                    self.key,
                    self.store.url,
                    self.len,
                    buf.len()
                ))
            })?;
        if offset >= self.lead_start && end <= self.lead_end() {
            let from = (offset - self.lead_start) as usize;
            buf.copy_from_slice(&self.lead[from..from + buf.len()]);
            return Ok(());
        }
        if self.copy_prefetched(offset, buf) {
            return Ok(());
        }
        let bytes = self.store.block_on(self.get_part(offset..end))??;
        if bytes.len() != buf.len() {
            return Err(Error::Io(format!(
                "reading {:?} in {}: asked for {} bytes at {offset}, the server sent {}",
                self.key,
                self.store.url,
                buf.len(),
                bytes.len()
            )));
        }
        buf.copy_from_slice(&bytes);
        Ok(())
    }

    /// Fetches the parts not in the lead nor fetched yet (see [`RemoteValue::fetch_parts`]).
    fn prefetch(&self, parts: &[(u64, u64)]) -> Result<()> {
        let requests = self.store.requests_in_flight;
        self.store.block_on(self.fetch_parts(parts, requests))?
    }
}
