//! Counting a remote store's HTTP requests ([`RequestStats`]): every attempt the client sends,
//! retries included, through an `object_store` HTTP connector that wraps the default (reqwest)
//! one.

use super::RequestStats;
use async_trait::async_trait;
use lru::LruCache;
use object_store::client::{
    HttpClient, HttpConnector, HttpError, HttpRequest, HttpResponse, HttpService, ReqwestConnector,
};
use object_store::ClientOptions;
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

/// The live counters behind [`RequestStats`], shared by a store and its HTTP client.
#[derive(Debug, Default)]
pub struct RequestCounters {
    requests: AtomicU64,
    get: AtomicU64,
    head: AtomicU64,
    put: AtomicU64,
    delete: AtomicU64,
    other: AtomicU64,
    retryable_failures: AtomicU64,
    error_responses: AtomicU64,
    conflicts: AtomicU64,
    bytes_sent: AtomicU64,
    bytes_received: AtomicU64,
}

impl RequestCounters {
    /// The counts so far.
    pub fn snapshot(&self) -> RequestStats {
        RequestStats {
            requests: self.requests.load(Relaxed),
            get: self.get.load(Relaxed),
            head: self.head.load(Relaxed),
            put: self.put.load(Relaxed),
            delete: self.delete.load(Relaxed),
            other: self.other.load(Relaxed),
            retryable_failures: self.retryable_failures.load(Relaxed),
            error_responses: self.error_responses.load(Relaxed),
            conflicts: self.conflicts.load(Relaxed),
            bytes_sent: self.bytes_sent.load(Relaxed),
            bytes_received: self.bytes_received.load(Relaxed),
        }
    }

    fn count_request(&self, request: &HttpRequest) {
        self.requests.fetch_add(1, Relaxed);
        let method = match request.method().as_str() {
            "GET" => &self.get,
            "HEAD" => &self.head,
            "PUT" => &self.put,
            "DELETE" => &self.delete,
            _ => &self.other,
        };
        method.fetch_add(1, Relaxed);
        let sent = request.body().content_length() as u64;
        self.bytes_sent.fetch_add(sent, Relaxed);
    }

    fn count_answer(&self, answer: &Result<HttpResponse, HttpError>) {
        let Ok(response) = answer else {
            self.retryable_failures.fetch_add(1, Relaxed);
            return;
        };
        let status = response.status().as_u16();
        if status >= 400 {
            self.error_responses.fetch_add(1, Relaxed);
        }
        if status == 412 || status == 409 {
            self.conflicts.fetch_add(1, Relaxed);
        }
        if status >= 500 || status == 429 || status == 408 {
            self.retryable_failures.fetch_add(1, Relaxed);
        }
        let announced = response
            .headers()
            .get("content-length")
            .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
        self.bytes_received
            .fetch_add(announced.unwrap_or(0), Relaxed);
    }
}

/// The HTTP clients built so far, by their options as printed (every setting libzarr makes:
/// timeouts, plain HTTP), each with its pool of open connections, the least recently used
/// dropped first past [`KEPT_CLIENTS`] (stores using it keep it). Stores opened with the same
/// options share one, so that opening another store on a server reuses its connections, as
/// tensorstore's process-wide pool does; the connections belong to the one I/O runtime.
static CLIENTS: Mutex<Option<LruCache<String, HttpClient>>> = Mutex::new(None);

/// The most clients [`CLIENTS`] keeps.
const KEPT_CLIENTS: NonZeroUsize = NonZeroUsize::new(16).expect("not zero");

/// The shared default (reqwest) client for `options`.
fn shared_client(options: &ClientOptions) -> object_store::Result<HttpClient> {
    let key = format!("{options:?}");
    let mut clients = CLIENTS.lock().unwrap_or_else(|e| e.into_inner());
    let clients = clients.get_or_insert_with(|| LruCache::new(KEPT_CLIENTS));
    if let Some(client) = clients.get(&key) {
        return Ok(client.clone());
    }
    let client = ReqwestConnector::default().connect(options)?;
    clients.put(key, client.clone());
    Ok(client)
}

/// Gives a store the shared default HTTP client ([`shared_client`]) and counts what the store
/// sends through it.
#[derive(Debug)]
pub struct CountingConnector(pub Arc<RequestCounters>);

impl HttpConnector for CountingConnector {
    fn connect(&self, options: &ClientOptions) -> object_store::Result<HttpClient> {
        let inner = shared_client(options)?;
        Ok(HttpClient::new(CountingClient {
            inner,
            counters: self.0.clone(),
        }))
    }
}

#[derive(Debug)]
struct CountingClient {
    inner: HttpClient,
    counters: Arc<RequestCounters>,
}

#[async_trait]
impl HttpService for CountingClient {
    async fn call(&self, request: HttpRequest) -> Result<HttpResponse, HttpError> {
        self.counters.count_request(&request);
        let answer = self.inner.execute(request).await;
        self.counters.count_answer(&answer);
        answer
    }
}
