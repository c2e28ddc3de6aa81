//! The settings of a store (`zarr_store_open_options`): a JSON object. For a remote store its
//! members override what the environment (and the AWS profile files) say; a directory store
//! reads the durability and process-locking settings. Unknown names are refused, and so are
//! names the location's back end does not read.

use crate::error::{Error, Result};
use crate::redact::Secret;
#[cfg(feature = "remote")]
use object_store::{ClientOptions, RetryConfig};
use serde_json::{Map, Value};
use std::time::Duration;

/// The back end a location names, for the options it reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// A directory on the local file system.
    Directory,
    /// A zip archive.
    Zip,
    /// `memory:`.
    Memory,
    /// `s3://`.
    S3,
    /// `az://`, `azure://`, `abfs[s]://`.
    Azure,
    /// `gs://`.
    Gcs,
    /// `http://`, `https://`.
    Http,
    /// An N5 container: a directory ending in `.n5`, or `n5://PATH`.
    N5,
    /// `dbm://`: a database of Python's `dbm` module (`dbm.dumb` or `dbm.gnu`).
    Dbm,
    /// `redis://`.
    Redis,
    /// `sqlite://`: an SQLite database file.
    Sqlite,
    /// `lmdb://`: an LMDB environment directory.
    Lmdb,
    /// `reference://`: Kerchunk references (read-only).
    Reference,
}

impl Backend {
    /// Every back end.
    pub const ALL: [Backend; 13] = [
        Backend::Directory,
        Backend::Zip,
        Backend::Memory,
        Backend::S3,
        Backend::Azure,
        Backend::Gcs,
        Backend::Http,
        Backend::N5,
        Backend::Dbm,
        Backend::Redis,
        Backend::Sqlite,
        Backend::Lmdb,
        Backend::Reference,
    ];

    /// Whether this build has the back end: directory and memory stores always, the others
    /// when their cargo feature (named as the back end) was on.
    pub fn built(self) -> bool {
        match self {
            Backend::Directory | Backend::Memory | Backend::Reference => true,
            Backend::Zip => cfg!(feature = "zip"),
            Backend::S3 => cfg!(feature = "s3"),
            Backend::Azure => cfg!(feature = "azure"),
            Backend::Gcs => cfg!(feature = "gcs"),
            Backend::Http => cfg!(feature = "http"),
            Backend::N5 => cfg!(feature = "n5"),
            Backend::Dbm => cfg!(feature = "dbm"),
            Backend::Redis => cfg!(feature = "redis"),
            Backend::Sqlite => cfg!(feature = "sqlite"),
            Backend::Lmdb => cfg!(feature = "lmdb"),
        }
    }

    /// The error for `location` (shown as given, its secrets hidden) when this build left the
    /// back end out: [`Error::Unsupported`] naming the feature and the CMake option to turn on.
    pub fn not_built(self, location: &str) -> Error {
        let name = self.name();
        Error::Unsupported(format!(
            "{location}: this libzarr was built without {name} stores (cargo feature \"{name}\", CMake option LIBZARR_{}=ON)",
            name.to_uppercase()
        ))
    }

    /// Its name: `"directory"`, `"zip"`, `"memory"`, `"s3"`, `"azure"`, `"gcs"`, `"http"`,
    /// `"n5"`, `"dbm"`, `"redis"`, `"sqlite"`, `"lmdb"` or `"reference"`.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Directory => "directory",
            Backend::Zip => "zip",
            Backend::Memory => "memory",
            Backend::S3 => "s3",
            Backend::Azure => "azure",
            Backend::Gcs => "gcs",
            Backend::Http => "http",
            Backend::N5 => "n5",
            Backend::Dbm => "dbm",
            Backend::Redis => "redis",
            Backend::Sqlite => "sqlite",
            Backend::Lmdb => "lmdb",
            Backend::Reference => "reference",
        }
    }

    /// How its locations look, for messages.
    pub fn schemes(self) -> &'static str {
        match self {
            Backend::Directory => "directory",
            Backend::Zip => "zip",
            Backend::Memory => "memory:",
            Backend::S3 => "s3://",
            Backend::Azure => "az://",
            Backend::Gcs => "gs://",
            Backend::Http => "http(s)://",
            Backend::N5 => "n5:// or .n5",
            Backend::Dbm => "dbm://",
            Backend::Redis => "redis://",
            Backend::Sqlite => "sqlite://",
            Backend::Lmdb => "lmdb://",
            Backend::Reference => "reference://",
        }
    }
}

/// How the members a store writes are compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ZipCompression {
    /// Stored as they are (`ZIP_STORED`, zarr-python's default).
    #[default]
    Stored,
    /// Deflated (`ZIP_DEFLATED`), at zlib's default level as Python's `zipfile`.
    Deflate,
}

impl ZipCompression {
    /// The compression the option `zip_compression` names: `"stored"` or `"deflate"`.
    pub fn from_name(name: &str) -> Option<ZipCompression> {
        match name {
            "stored" => Some(ZipCompression::Stored),
            "deflate" => Some(ZipCompression::Deflate),
            _ => None,
        }
    }
}

/// The two database formats of Python's `dbm` module that `dbm://` reads and writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DbmFormat {
    /// `dbm.dumb`: `PATH.dir` (the index) and `PATH.dat` (the values).
    Dumb,
    /// `dbm.gnu`: one GDBM file at `PATH`.
    Gnu,
}

impl DbmFormat {
    /// `"dumb"` or `"gnu"`, as the option `dbm_format` names them.
    pub fn name(self) -> &'static str {
        match self {
            DbmFormat::Dumb => "dumb",
            DbmFormat::Gnu => "gnu",
        }
    }

    /// The format `name` names (`"dumb"` or `"gnu"`).
    pub fn from_name(name: &str) -> Option<DbmFormat> {
        [DbmFormat::Dumb, DbmFormat::Gnu]
            .into_iter()
            .find(|f| f.name() == name)
    }
}

/// Settings of a store; every member is optional.
#[derive(Debug, Clone, PartialEq)]
pub struct StoreOptions {
    /// The names the JSON object gave, for refusing those the back end does not read.
    pub given: Vec<String>,
    /// Zip stores: a flush or close puts the archive on the disk before it returns (the
    /// working file before it is renamed over the archive, then its directory).
    /// Directory, N5 and dbm stores: every write is flushed to the disk before the call returns
    /// (a directory store's new file before it is renamed over the key, then its directory; a
    /// `dbm.dumb` database's data and index line; GDBM's sync mode), so that it survives a
    /// power loss or an operating-system crash; off by default. SQLite and LMDB stores: each
    /// commit is flushed (SQLite's `synchronous = FULL`; LMDB without `MDB_NOSYNC`).
    pub fsync: bool,
    /// Directory stores: keys are lower-cased before they become file names, as zarr-python
    /// 2's `DirectoryStore(normalize_keys=True)` stores them, so `Temp/.zarray` and
    /// `temp/.zarray` are one key; off by default (keys are case-sensitive).
    pub normalize_keys: bool,
    /// Every store: the key of the v2 consolidated metadata document, read on open and written
    /// by consolidating, as zarr-python 2's `metadata_key=` (`.zmetadata` when not given).
    pub metadata_key: Option<String>,
    /// Every store: the location of a second store that holds the chunks, as zarr-python 2's
    /// `chunk_store=`; node documents and consolidated metadata stay in the first
    /// (`crate::store::split`). Opened in the same mode, with `chunk_store_options`.
    pub chunk_store: Option<String>,
    /// The options of the `chunk_store` (given as a JSON object, as these; the defaults when
    /// not given).
    pub chunk_store_options: Option<Box<StoreOptions>>,
    /// Reference stores: the options of the stores of the files the references point into
    /// (given as a JSON object, as these; the defaults when not given).
    pub target_options: Option<Box<StoreOptions>>,
    /// Dbm stores: the format of a new database (an existing one keeps its own, which this
    /// must then name); GDBM when not given, as Python's `dbm.open` chooses where it has GDBM.
    pub dbm_format: Option<DbmFormat>,
    /// Zip stores: how the members written are compressed; stored (zarr-python's default)
    /// when not given.
    pub zip_compression: ZipCompression,
    /// Redis stores: what every key starts with, before a `:`; zarr-python 2's `RedisStore`
    /// default, `zarr`, when not given.
    pub prefix: Option<String>,
    /// A directory of lock files, one per chunk, shard or metadata key, locked around every
    /// write of that key, so that processes sharing it (and zarr-python 2 programs using a
    /// `ProcessSynchronizer` on it) do not lose each other's writes to a shared chunk.
    pub process_synchronizer: Option<String>,
    /// The service's URL (`http://` allows plain HTTP): S3's (else `AWS_ENDPOINT_URL`), Azure's
    /// blob endpoint (as a connection string's `BlobEndpoint`), GCS's base URL (else
    /// `STORAGE_EMULATOR_HOST`).
    pub endpoint: Option<String>,
    /// The S3 region; else `AWS_REGION`, `AWS_DEFAULT_REGION`, the profile's, `us-east-1`.
    pub region: Option<String>,
    /// Static credentials; else the environment's, else the profile's.
    pub access_key_id: Option<String>,
    /// The secret of `access_key_id`.
    pub secret_access_key: Option<Secret>,
    /// A session token for temporary credentials.
    pub session_token: Option<Secret>,
    /// The AWS profile to read from the shared files; else `AWS_PROFILE`, else `default`.
    pub profile: Option<String>,
    /// Unsigned requests (public buckets and containers); else `AWS_NO_SIGN_REQUEST` (S3), or
    /// `STORAGE_EMULATOR_HOST` being set (GCS).
    pub anonymous: Option<bool>,
    /// S3: bucket in the host name rather than the path; path-style unless set.
    pub virtual_hosted_style: Option<bool>,
    /// The Azure storage account; else `AZURE_STORAGE_ACCOUNT_NAME`, `AZURE_STORAGE_ACCOUNT`,
    /// the connection string's.
    pub account: Option<String>,
    /// The Azure account's shared key; else `AZURE_STORAGE_ACCOUNT_KEY`, `AZURE_STORAGE_KEY`,
    /// the connection string's.
    pub account_key: Option<Secret>,
    /// An Azure shared access signature (`sv=...&sig=...`); else `AZURE_STORAGE_SAS_TOKEN`.
    pub sas_token: Option<Secret>,
    /// Azure: talk to Azurite (account `devstoreaccount1` and its well-known key unless given,
    /// endpoint `http://127.0.0.1:10000/devstoreaccount1`); else `AZURE_STORAGE_USE_EMULATOR`.
    pub use_emulator: Option<bool>,
    /// GCS: a service account's JSON key file; else `GOOGLE_SERVICE_ACCOUNT`,
    /// `GOOGLE_APPLICATION_CREDENTIALS`.
    pub service_account_path: Option<String>,
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

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            given: Vec::new(),
            fsync: false,
            normalize_keys: false,
            metadata_key: None,
            chunk_store: None,
            chunk_store_options: None,
            target_options: None,
            dbm_format: None,
            zip_compression: ZipCompression::Stored,
            prefix: None,
            process_synchronizer: None,
            endpoint: None,
            region: None,
            access_key_id: None,
            secret_access_key: None,
            session_token: None,
            profile: None,
            anonymous: None,
            virtual_hosted_style: None,
            account: None,
            account_key: None,
            sas_token: None,
            use_emulator: None,
            service_account_path: None,
            requests_in_flight: 32,
            conditional_writes: true,
            timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(5),
            retries: 4,
            retry_time: Duration::from_secs(30),
        }
    }
}

/// The names `from_json` takes, with the back ends that read each.
const NAMES: [(&str, &[Backend]); 29] = {
    use Backend::*;
    const ALL: &[Backend] = &[S3, Azure, Gcs, Http];
    const SERVERS: &[Backend] = &[S3, Azure, Gcs, Http, Redis];
    [
        ("fsync", &[Directory, Zip, N5, Dbm, Sqlite, Lmdb]),
        ("normalize_keys", &[Directory]),
        ("metadata_key", &Backend::ALL),
        ("chunk_store", &Backend::ALL),
        ("chunk_store_options", &Backend::ALL),
        ("target_options", &[Reference]),
        ("dbm_format", &[Dbm]),
        ("zip_compression", &[Zip]),
        ("prefix", &[Redis]),
        (
            "process_synchronizer",
            &[Directory, N5, S3, Azure, Gcs, Sqlite, Lmdb],
        ),
        ("endpoint", &[S3, Azure, Gcs]),
        ("region", &[S3]),
        ("access_key_id", &[S3]),
        ("secret_access_key", &[S3]),
        ("session_token", &[S3]),
        ("profile", &[S3]),
        ("anonymous", &[S3, Azure, Gcs]),
        ("conditional_writes", &[S3, Azure, Gcs]),
        ("virtual_hosted_style", &[S3]),
        ("account", &[Azure]),
        ("account_key", &[Azure]),
        ("sas_token", &[Azure]),
        ("use_emulator", &[Azure]),
        ("service_account_path", &[Gcs]),
        ("requests_in_flight", ALL),
        ("timeout_seconds", SERVERS),
        ("connect_timeout_seconds", SERVERS),
        ("retries", ALL),
        ("retry_seconds", ALL),
    ]
};

impl StoreOptions {
    /// Reads the settings from a JSON object (`{}` or empty text: the defaults).
    pub fn from_json(text: &str) -> Result<StoreOptions> {
        let mut options = StoreOptions::default();
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
        if let Some(unknown) = map.keys().find(|k| !NAMES.iter().any(|(n, _)| n == k)) {
            let known: Vec<&str> = NAMES.iter().map(|(n, _)| *n).collect();
            return Err(Error::InvalidArgument(format!(
                "unknown store option {unknown:?} (known: {})",
                known.join(", ")
            )));
        }
        options.given = map.keys().cloned().collect();
        let get = Getter(&map);
        options.fsync = get.flag("fsync")?.unwrap_or(false);
        options.normalize_keys = get.flag("normalize_keys")?.unwrap_or(false);
        options.chunk_store = get.text("chunk_store")?;
        options.chunk_store_options = match map.get("chunk_store_options") {
            None => None,
            Some(Value::Object(nested)) if options.chunk_store.is_some() => {
                if nested.contains_key("chunk_store") || nested.contains_key("metadata_key") {
                    return Err(get.invalid(
                        "chunk_store_options",
                        "the chunk store's own options (without chunk_store or metadata_key)",
                    ));
                }
                let nested = Value::Object(nested.clone()).to_string();
                Some(Box::new(StoreOptions::from_json(&nested)?))
            }
            Some(Value::Object(_)) => {
                return Err(Error::InvalidArgument(
                    "store option \"chunk_store_options\" needs \"chunk_store\"".into(),
                ))
            }
            Some(_) => return Err(get.invalid("chunk_store_options", "a JSON object")),
        };
        options.target_options = match map.get("target_options") {
            None => None,
            Some(Value::Object(nested)) => Some(Box::new(StoreOptions::from_json(
                &Value::Object(nested.clone()).to_string(),
            )?)),
            Some(_) => return Err(get.invalid("target_options", "a JSON object")),
        };
        options.metadata_key = match get.text("metadata_key")? {
            Some(key)
                if crate::path::validate_key(&key).is_ok()
                    && !crate::path::is_metadata_key(&key) =>
            {
                Some(key)
            }
            Some(_) => {
                return Err(get.invalid(
                    "metadata_key",
                    "a store key (such as \".zmetadata\") that is not a node's own document",
                ))
            }
            None => None,
        };
        options.dbm_format = match get.text("dbm_format")? {
            None => None,
            Some(name) => Some(
                DbmFormat::from_name(&name)
                    .ok_or_else(|| get.invalid("dbm_format", "\"dumb\" or \"gnu\""))?,
            ),
        };
        if let Some(name) = get.text("zip_compression")? {
            options.zip_compression = ZipCompression::from_name(&name)
                .ok_or_else(|| get.invalid("zip_compression", "\"stored\" or \"deflate\""))?;
        }
        options.prefix = get.text("prefix")?;
        options.process_synchronizer = get.text("process_synchronizer")?;
        options.endpoint = get.text("endpoint")?;
        options.region = get.text("region")?;
        options.access_key_id = get.text("access_key_id")?;
        options.secret_access_key = get.text("secret_access_key")?.map(Secret::from);
        options.session_token = get.text("session_token")?.map(Secret::from);
        options.profile = get.text("profile")?;
        options.anonymous = get.flag("anonymous")?;
        options.virtual_hosted_style = get.flag("virtual_hosted_style")?;
        options.account = get.text("account")?;
        options.account_key = get.text("account_key")?.map(Secret::from);
        options.sas_token = get.text("sas_token")?.map(Secret::from);
        options.use_emulator = get.flag("use_emulator")?;
        options.service_account_path = get.text("service_account_path")?;
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

    /// Refuses the options `backend` does not read, naming the first and `url`.
    pub fn check_backend(&self, backend: Backend, url: &str) -> Result<()> {
        let foreign = NAMES.iter().find(|(name, readers)| {
            self.given.iter().any(|g| g == name) && !readers.contains(&backend)
        });
        match foreign {
            Some((name, readers)) => {
                let schemes: Vec<&str> = readers.iter().map(|b| b.schemes()).collect();
                Err(Error::InvalidArgument(format!(
                    "store option {name:?} does not apply to {url} (only to {} stores)",
                    schemes.join(", ")
                )))
            }
            None => Ok(()),
        }
    }

    /// The HTTP client settings: the timeouts, plain HTTP allowed when asked.
    #[cfg(feature = "remote")]
    pub fn client_options(&self, allow_http: bool) -> ClientOptions {
        ClientOptions::new()
            .with_allow_http(allow_http)
            .with_timeout(self.timeout)
            .with_connect_timeout(self.connect_timeout)
    }

    /// How a failed request is retried (5xx, 429, connection errors and timeouts, with
    /// exponential backoff from 100 ms): a few times within a bounded time, so that an
    /// unreachable server is an error within seconds rather than object_store's three minutes.
    #[cfg(feature = "remote")]
    pub fn retry_config(&self) -> RetryConfig {
        RetryConfig {
            max_retries: self.retries,
            retry_timeout: self.retry_time,
            ..Default::default()
        }
    }
}

/// The environment variable `name`, unless unset or empty.
#[cfg(feature = "remote")]
pub fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// Whether an environment variable's value means yes (`yes`, `true`, `1`, any case).
#[cfg(feature = "remote")]
pub fn is_yes(value: &str) -> bool {
    matches!(value.to_ascii_lowercase().as_str(), "yes" | "true" | "1")
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
        let o = StoreOptions::from_json(
            r#"{"endpoint": "http://127.0.0.1:9000", "region": "eu-west-1", "anonymous": true,
                "requests_in_flight": 8, "timeout_seconds": 2.5, "retries": 0, "profile": "work"}"#,
        )
        .unwrap();
        assert_eq!(o.endpoint.as_deref(), Some("http://127.0.0.1:9000"));
        assert_eq!((o.requests_in_flight, o.retries), (8, 0));
        assert_eq!(o.timeout, Duration::from_millis(2500));
        assert_eq!(o.anonymous, Some(true));
        let azure = StoreOptions::from_json(
            r#"{"account": "acct", "account_key": "a2V5", "use_emulator": false,
                "endpoint": "http://127.0.0.1:10000/acct", "service_account_path": "/k.json"}"#,
        )
        .unwrap();
        assert_eq!(azure.account.as_deref(), Some("acct"));
        assert_eq!(azure.use_emulator, Some(false));
        match azure.check_backend(Backend::Azure, "az://c") {
            Err(Error::InvalidArgument(m)) => {
                assert!(
                    m.contains("service_account_path") && m.contains("gs://"),
                    "{m}"
                )
            }
            other => panic!("{other:?}"),
        }
        assert!(o.check_backend(Backend::S3, "s3://b").is_ok());
        assert!(o.check_backend(Backend::Gcs, "gs://b").is_err());
        assert_eq!(
            StoreOptions::from_json("").unwrap(),
            StoreOptions::default()
        );
        for (text, needle) in [
            (r#"{"endpoints": "x"}"#, "endpoints"),
            (r#"{"retries": -1}"#, "retries"),
            (r#"{"timeout_seconds": 0}"#, "timeout_seconds"),
            (r#"{"anonymous": "yes"}"#, "anonymous"),
            (r#"{"sas_token": 1}"#, "sas_token"),
            (r#"{"use_emulator": 1}"#, "use_emulator"),
            (r#"{"access_key_id": "AK"}"#, "secret_access_key"),
            (r#"["endpoint"]"#, "object"),
            ("{", "JSON"),
            (r#"{"metadata_key": "a/.zarray"}"#, "metadata_key"),
            (r#"{"metadata_key": "../up"}"#, "metadata_key"),
            (r#"{"metadata_key": ""}"#, "metadata_key"),
            (r#"{"normalize_keys": "yes"}"#, "normalize_keys"),
            (r#"{"chunk_store_options": {}}"#, "needs \"chunk_store\""),
            (
                r#"{"chunk_store": "c", "chunk_store_options": {"chunk_store": "d"}}"#,
                "chunk_store_options",
            ),
            (
                r#"{"chunk_store": "c", "chunk_store_options": 1}"#,
                "a JSON object",
            ),
        ] {
            match StoreOptions::from_json(text) {
                Err(Error::InvalidArgument(m)) => assert!(m.contains(needle), "{text}: {m}"),
                other => panic!("{text}: {other:?}"),
            }
        }
    }

    #[test]
    fn local_stores_take_only_their_own_options() {
        let local =
            StoreOptions::from_json(r#"{"fsync": true, "process_synchronizer": "/tmp/locks"}"#)
                .unwrap();
        assert!(local.fsync);
        assert_eq!(local.process_synchronizer.as_deref(), Some("/tmp/locks"));
        assert!(local.check_backend(Backend::Directory, "d").is_ok());
        for (backend, location, refused) in [
            (Backend::Memory, "memory:", "fsync"),
            (Backend::Zip, "a.zip", "process_synchronizer"),
            (Backend::S3, "s3://b", "fsync"),
        ] {
            match local.check_backend(backend, location) {
                Err(Error::InvalidArgument(m)) => {
                    assert!(m.contains(refused) && m.contains(location), "{m}")
                }
                other => panic!("{location}: {other:?}"),
            }
        }
        let remote = StoreOptions::from_json(r#"{"retries": 1}"#).unwrap();
        assert!(remote.check_backend(Backend::Directory, "d").is_err());
        assert!(StoreOptions::from_json(r#"{"fsync": 1}"#).is_err());
        assert!(StoreOptions::from_json(r#"{"process_synchronizer": ""}"#).is_err());
    }

    #[test]
    fn zip_compression_is_stored_or_deflate_for_zip_stores_only() {
        let deflate = StoreOptions::from_json(r#"{"zip_compression": "deflate"}"#).unwrap();
        assert_eq!(deflate.zip_compression, ZipCompression::Deflate);
        assert!(deflate.check_backend(Backend::Zip, "a.zip").is_ok());
        assert!(deflate.check_backend(Backend::Directory, "d").is_err());
        assert_eq!(
            StoreOptions::default().zip_compression,
            ZipCompression::Stored
        );
        for bad in [
            r#"{"zip_compression": "lzma"}"#,
            r#"{"zip_compression": 8}"#,
        ] {
            match StoreOptions::from_json(bad) {
                Err(Error::InvalidArgument(m)) => assert!(m.contains("zip_compression"), "{m}"),
                other => panic!("{bad}: {other:?}"),
            }
        }
    }
}
