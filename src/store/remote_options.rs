//! The settings of a remote store (`zarr_store_open_options`): a JSON object whose members
//! override what the environment and the AWS profile files say. Unknown names are refused.

use crate::error::{Error, Result};
use serde_json::{Map, Value};
use std::time::Duration;

/// Settings of a remote store; every member is optional.
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteOptions {
    /// The S3 endpoint (`http://` allows plain HTTP); else `AWS_ENDPOINT_URL`.
    pub endpoint: Option<String>,
    /// The S3 region; else `AWS_REGION`, `AWS_DEFAULT_REGION`, the profile's, `us-east-1`.
    pub region: Option<String>,
    /// Static credentials; else the environment's, else the profile's.
    pub access_key_id: Option<String>,
    /// The secret of `access_key_id`.
    pub secret_access_key: Option<String>,
    /// A session token for temporary credentials.
    pub session_token: Option<String>,
    /// The AWS profile to read from the shared files; else `AWS_PROFILE`, else `default`.
    pub profile: Option<String>,
    /// Unsigned requests (public buckets); else `AWS_NO_SIGN_REQUEST`.
    pub anonymous: Option<bool>,
    /// Bucket in the host name rather than the path; path-style unless set.
    pub virtual_hosted_style: Option<bool>,
    /// Requests one call keeps in flight.
    pub requests_in_flight: usize,
    /// Whether a read-modify-write of a chunk or shard writes only if the value is still the
    /// one read (`If-Match`, `If-None-Match`), reading again otherwise; on by default.
    pub conditional_writes: bool,
    /// The longest one request may take.
    pub timeout: Duration,
    /// The longest connecting may take.
    pub connect_timeout: Duration,
    /// How many times a failed request is retried (5xx, 429, connection errors, timeouts).
    pub retries: usize,
    /// The longest a request may take with its retries.
    pub retry_time: Duration,
}

impl Default for RemoteOptions {
    fn default() -> Self {
        RemoteOptions {
            endpoint: None,
            region: None,
            access_key_id: None,
            secret_access_key: None,
            session_token: None,
            profile: None,
            anonymous: None,
            virtual_hosted_style: None,
            requests_in_flight: 32,
            conditional_writes: true,
            timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(5),
            retries: 4,
            retry_time: Duration::from_secs(30),
        }
    }
}

/// The names `from_json` takes.
const NAMES: [&str; 14] = [
    "endpoint",
    "region",
    "access_key_id",
    "secret_access_key",
    "session_token",
    "profile",
    "anonymous",
    "virtual_hosted_style",
    "requests_in_flight",
    "conditional_writes",
    "timeout_seconds",
    "connect_timeout_seconds",
    "retries",
    "retry_seconds",
];

impl RemoteOptions {
    /// Reads the settings from a JSON object (`{}` or empty text: the defaults).
    pub fn from_json(text: &str) -> Result<RemoteOptions> {
        let mut options = RemoteOptions::default();
        if text.trim().is_empty() {
            return Ok(options);
        }
        let value: Value = serde_json::from_str(text)
            .map_err(|e| Error::InvalidArgument(format!("store options are not JSON: {e}")))?;
        let Value::Object(map) = value else {
            return Err(Error::InvalidArgument(format!(
                "store options must be a JSON object, got {value}"
            )));
        };
        if let Some(unknown) = map.keys().find(|k| !NAMES.contains(&k.as_str())) {
            return Err(Error::InvalidArgument(format!(
                "unknown store option {unknown:?} (known: {})",
                NAMES.join(", ")
            )));
        }
        let get = Getter(&map);
        options.endpoint = get.text("endpoint")?;
        options.region = get.text("region")?;
        options.access_key_id = get.text("access_key_id")?;
        options.secret_access_key = get.text("secret_access_key")?;
        options.session_token = get.text("session_token")?;
        options.profile = get.text("profile")?;
        options.anonymous = get.flag("anonymous")?;
        options.virtual_hosted_style = get.flag("virtual_hosted_style")?;
        if let Some(n) = get.count("requests_in_flight", 1, 1024)? {
            options.requests_in_flight = n;
        }
        if let Some(on) = get.flag("conditional_writes")? {
            options.conditional_writes = on;
        }
        if let Some(n) = get.count("retries", 0, 100)? {
            options.retries = n;
        }
        if let Some(t) = get.seconds("timeout_seconds")? {
            options.timeout = t;
        }
        if let Some(t) = get.seconds("connect_timeout_seconds")? {
            options.connect_timeout = t;
        }
        if let Some(t) = get.seconds("retry_seconds")? {
            options.retry_time = t;
        }
        if options.access_key_id.is_some() != options.secret_access_key.is_some() {
            return Err(Error::InvalidArgument(
                "store options \"access_key_id\" and \"secret_access_key\" go together".into(),
            ));
        }
        Ok(options)
    }
}

/// Typed reads of the option members, each error naming the member.
struct Getter<'a>(&'a Map<String, Value>);

impl Getter<'_> {
    fn invalid(&self, name: &str, expected: &str) -> Error {
        Error::InvalidArgument(format!(
            "store option {name:?} must be {expected}, got {}",
            self.0[name]
        ))
    }

    fn text(&self, name: &str) -> Result<Option<String>> {
        match self.0.get(name) {
            None => Ok(None),
            Some(Value::String(s)) if !s.is_empty() => Ok(Some(s.clone())),
            Some(_) => Err(self.invalid(name, "a non-empty string")),
        }
    }

    fn flag(&self, name: &str) -> Result<Option<bool>> {
        match self.0.get(name) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(_) => Err(self.invalid(name, "true or false")),
        }
    }

    fn count(&self, name: &str, min: u64, max: u64) -> Result<Option<usize>> {
        match self.0.get(name) {
            None => Ok(None),
            Some(v) => v
                .as_u64()
                .filter(|n| (min..=max).contains(n))
                .map(|n| Some(n as usize))
                .ok_or_else(|| self.invalid(name, &format!("an integer from {min} to {max}"))),
        }
    }

    fn seconds(&self, name: &str) -> Result<Option<Duration>> {
        match self.0.get(name) {
            None => Ok(None),
            Some(v) => v
                .as_f64()
                .filter(|s| *s > 0.0 && *s <= 86400.0)
                .map(|s| Some(Duration::from_secs_f64(s)))
                .ok_or_else(|| self.invalid(name, "a number of seconds above 0, at most 86400")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_option_and_refuses_unknown_or_ill_typed_ones() {
        let o = RemoteOptions::from_json(
            r#"{"endpoint": "http://127.0.0.1:9000", "region": "eu-west-1", "anonymous": true,
                "requests_in_flight": 8, "timeout_seconds": 2.5, "retries": 0, "profile": "work"}"#,
        )
        .unwrap();
        assert_eq!(o.endpoint.as_deref(), Some("http://127.0.0.1:9000"));
        assert_eq!((o.requests_in_flight, o.retries), (8, 0));
        assert_eq!(o.timeout, Duration::from_millis(2500));
        assert_eq!(o.anonymous, Some(true));
        assert_eq!(
            RemoteOptions::from_json("").unwrap(),
            RemoteOptions::default()
        );
        for (text, needle) in [
            (r#"{"endpoints": "x"}"#, "endpoints"),
            (r#"{"retries": -1}"#, "retries"),
            (r#"{"timeout_seconds": 0}"#, "timeout_seconds"),
            (r#"{"anonymous": "yes"}"#, "anonymous"),
            (r#"{"access_key_id": "AK"}"#, "secret_access_key"),
            (r#"["endpoint"]"#, "object"),
            ("{", "JSON"),
        ] {
            match RemoteOptions::from_json(text) {
                Err(Error::InvalidArgument(m)) => assert!(m.contains(needle), "{text}: {m}"),
                other => panic!("{text}: {other:?}"),
            }
        }
    }
}
