//! What a remote store's HTTP requests have been (counted by `request_counter.rs`), as the C
//! API hands them out.

/// What a remote store's HTTP requests have been since it was opened (all zero for a local
/// store).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RequestStats {
    /// HTTP requests sent, each retry counted again.
    pub requests: u64,
    /// Of those, GET requests (reads and listings).
    pub get: u64,
    /// Of those, HEAD requests.
    pub head: u64,
    /// Of those, PUT requests (writes).
    pub put: u64,
    /// Of those, DELETE requests.
    pub delete: u64,
    /// Of those, requests of any other method.
    pub other: u64,
    /// Attempts that failed in a way the client retries (429, 408, 5xx, connection errors,
    /// timeouts): each is followed by a retry unless the retries ran out.
    pub retryable_failures: u64,
    /// Answers with status 400 or above (the retryable ones included; a missing key's 404
    /// too).
    pub error_responses: u64,
    /// Conditional writes the server refused because another writer changed the value first
    /// (412, and 409 for concurrent ones): each makes the writer read the value again.
    pub conflicts: u64,
    /// Request body bytes sent.
    pub bytes_sent: u64,
    /// Response body bytes announced (`Content-Length`).
    pub bytes_received: u64,
}

impl std::ops::Add for RequestStats {
    type Output = RequestStats;

    /// The requests of two stores together (metadata and chunks in two, `chunk_store`).
    fn add(self, other: RequestStats) -> RequestStats {
        RequestStats {
            requests: self.requests + other.requests,
            get: self.get + other.get,
            head: self.head + other.head,
            put: self.put + other.put,
            delete: self.delete + other.delete,
            other: self.other + other.other,
            retryable_failures: self.retryable_failures + other.retryable_failures,
            error_responses: self.error_responses + other.error_responses,
            conflicts: self.conflicts + other.conflicts,
            bytes_sent: self.bytes_sent + other.bytes_sent,
            bytes_received: self.bytes_received + other.bytes_received,
        }
    }
}
