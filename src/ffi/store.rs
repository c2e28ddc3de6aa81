//! `zarr_store`: an open key/value store.

use super::boundary::{give_handle, give_string, out_arg, ref_arg, run, str_arg};
use super::status::zarr_status;
use crate::consolidated;
use crate::error::{Error, Result};
use crate::open::{open_store, Consolidated};
use crate::store::{AccessMode, RequestStats, StoreHandle};
use std::ffi::c_char;
use std::sync::Arc;

/// An open store (a directory, an N5 container, a zip archive, a database, memory or a remote store). Safe to use from several threads at once. Arrays
/// and groups opened from it keep it alive, so it may be closed before them.
#[allow(non_camel_case_types)]
pub struct zarr_store {
    pub(crate) inner: Arc<StoreHandle>,
}

/// How `zarr_store_open` opens a store, as zarr-python's `mode` argument: `ZARR_MODE_READ`
/// (`"r"`), `ZARR_MODE_UPDATE` (`"r+"`), `ZARR_MODE_WRITE` (`"a"`), `ZARR_MODE_OVERWRITE`
/// (`"w"`) or `ZARR_MODE_CREATE` (`"w-"`), optionally combined (`|`) with
/// `ZARR_OPEN_IGNORE_CONSOLIDATED`.
#[allow(non_camel_case_types)]
pub type zarr_open_mode = i32;
/// `"r"`: read-only (every mutating call returns `ZARR_ERR_READ_ONLY`); the store must exist.
pub const ZARR_MODE_READ: zarr_open_mode = 0;
/// `"a"`: read-write; a directory store is created (with its parents) if missing.
pub const ZARR_MODE_WRITE: zarr_open_mode = 1;
/// `"r+"`: read-write; the store must exist (a missing directory or zip file is
/// `ZARR_ERR_NOT_FOUND`, not created).
pub const ZARR_MODE_UPDATE: zarr_open_mode = 2;
/// `"w"`: read-write; everything the store holds is removed when it is opened (a directory
/// is created if missing; an existing zip file is replaced by a new, empty one).
pub const ZARR_MODE_OVERWRITE: zarr_open_mode = 3;
/// `"w-"`: read-write; a store that already holds any key is `ZARR_ERR_ALREADY_EXISTS` (a
/// directory is created if missing; an existing empty one is used).
pub const ZARR_MODE_CREATE: zarr_open_mode = 4;
/// Flag: do not use the store's consolidated metadata (`.zmetadata`, or a v3 root
/// `zarr.json`'s `consolidated_metadata`); read every node's own documents instead.
pub const ZARR_OPEN_IGNORE_CONSOLIDATED: zarr_open_mode = 0x10;

/// Opens the store at `location`: a directory path (`file://` may precede it), a directory
/// path ending in `.n5` (as zarr-python 2's `zarr.open` chooses its `N5Store`), or any
/// directory as `n5://PATH`, for an N5 container, a path ending
/// in `.zip` (unless it is an existing directory) for a zip archive, `sqlite://PATH` for an
/// SQLite database file and `lmdb://PATH` for an LMDB environment directory (a relative PATH
/// follows `//` directly, an absolute one makes three slashes: `sqlite:///data/x.db`),
/// `"memory:"` for a new, empty in-memory store, `s3://bucket/prefix` for a bucket of an S3-compatible server,
/// `az://container/prefix` (or `azure://container/prefix`,
/// `abfs[s]://container@account.dfs.core.windows.net/prefix`) for Azure Blob Storage,
/// `gs://bucket/prefix` for Google Cloud Storage, `http://` / `https://` for a web server
/// (read-only; listing needs consolidated metadata), `dbm://PATH` for a database of Python's
/// `dbm` module as zarr-python 2's `DBMStore` writes it (`dbm:///abs/path`, `dbm://rel/path`),
/// `redis://HOST:PORT/DB` for a Redis database as zarr-python 2's `RedisStore` keeps it
/// (`redis://USER:PASSWORD@HOST:PORT/DB` with a password; messages hide it), or
/// `reference://X` for the Kerchunk references X, a JSON file or a Parquet directory (a path
/// or any URL above; read-only;
/// the option `target_options` gives the settings of the files it refers to). Settings come
/// from the environment as each service's tools read it, and `zarr_store_open_options`
/// overrides them:
/// - S3: `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_REGION`,
///   `AWS_ENDPOINT_URL` (an `http://` endpoint allows plain HTTP and means path-style
///   requests), `AWS_NO_SIGN_REQUEST=YES` for anonymous reads, and `AWS_PROFILE` with
///   `~/.aws/credentials` and `~/.aws/config`;
/// - Azure: `AZURE_STORAGE_ACCOUNT_NAME` (or `AZURE_STORAGE_ACCOUNT`),
///   `AZURE_STORAGE_ACCOUNT_KEY` (or `AZURE_STORAGE_KEY`), `AZURE_STORAGE_SAS_TOKEN`,
///   `AZURE_STORAGE_CONNECTION_STRING` (`AccountName`, `AccountKey`, `SharedAccessSignature`,
///   `BlobEndpoint`, `DefaultEndpointsProtocol`, `EndpointSuffix`, `UseDevelopmentStorage`),
///   `AZURE_STORAGE_ENDPOINT`, `AZURE_STORAGE_USE_EMULATOR` (Azurite), and the service
///   principal and managed identity variables (`AZURE_CLIENT_ID`, ...);
/// - GCS: `GOOGLE_APPLICATION_CREDENTIALS`, `GOOGLE_SERVICE_ACCOUNT` (a key file), gcloud's
///   application default credentials, the metadata server, and `STORAGE_EMULATOR_HOST` (an
///   emulator's host and port: plain HTTP, no credentials).
///
/// Remote failures are `ZARR_ERR_PERMISSION_DENIED` (a wrong key), `ZARR_ERR_UNREACHABLE`,
/// `ZARR_ERR_TIMEOUT` or `ZARR_ERR_IO`, naming the URL and the key; a missing bucket or
/// container is `ZARR_ERR_NOT_FOUND`; a missing key reads as the fill value.
/// A dbm database is GDBM's file `PATH` (Python's `dbm.gnu`) or `dbm.dumb`'s `PATH.dir` and
/// `PATH.dat`, told apart as Python's `dbm.whichdb` does; a new one is GDBM, as Python's
/// `dbm.open` creates it where Python has GDBM (option `dbm_format` for `dbm.dumb`). A GDBM
/// database opened for writing is locked against every other opener until
/// `zarr_store_close`, which writes it out; one opened for reading against writers.
/// `dbm.dumb` writes append values and index lines (a killed writer leaves every key with
/// its old or new value) and never reclaim space; there is no locking between processes, as
/// in Python. A damaged database is `ZARR_ERR_CORRUPT_CHUNK` naming the file.
/// Redis keys are `PREFIX:KEY` (prefix `zarr`, zarr-python's default, unless the option
/// `prefix` says otherwise); listings use `SCAN`. A server that cannot be reached is
/// `ZARR_ERR_UNREACHABLE` when the store is opened or later, a slow one `ZARR_ERR_TIMEOUT`.
/// Database files are those zarr-python 2's `SQLiteStore` and `LMDBStore` write, in the same
/// layout, so each side opens the other's: SQLite's table `zarr(k TEXT PRIMARY KEY, v BLOB)`
/// (created in a new or empty file opened for writing; the file's directory must exist), and an
/// LMDB directory of `data.mdb` and `lock.mdb` (created if missing when opened for writing)
/// whose main database maps each key's UTF-8 bytes to the raw value, with zarr-python's 1 TiB
/// map size. Both lock as their libraries do, so other processes may read and write the same
/// file at once: an SQLite write waits up to 30 s for another writer's lock (zarr-python's
/// included); LMDB runs one writer at a time beside any number of readers, among processes
/// using libzarr's LMDB. py-lmdb's LMDB 0.9 (zarr-python's) reads and writes the same data
/// file but keeps its lock file in another format, so it and libzarr cannot have an
/// environment open at the same time: whichever opens second fails, libzarr with
/// `ZARR_ERR_UNSUPPORTED` saying so, and nothing is damaged. Each write is one
/// transaction, so a killed writer leaves every key old or new; as for directories, commits
/// reach the disk only with the store option `fsync`. An LMDB environment is opened once per
/// process: opening it for writing while a read-only handle has it open in the same process is
/// `ZARR_ERR_INVALID_ARGUMENT`; LMDB keys are at most 511 bytes (a longer one holds no value,
/// and writing it is `ZARR_ERR_INVALID_PATH`). A file that is not a database of its kind, or is
/// damaged, is `ZARR_ERR_CORRUPT_CHUNK` naming it (an SQLite file without the table `zarr`
/// opened for reading: `ZARR_ERR_INVALID_ARGUMENT`); a value that is not bytes (an SQLite NULL
/// or number) is `ZARR_ERR_CORRUPT_CHUNK` naming its key, never a missing value.
/// Reading a directory, zip or database that does not exist is `ZARR_ERR_NOT_FOUND`.
/// A zip (a path ending in `.zip` that is not a directory) reads stored or deflated members.
/// Opened for writing, it is written as zarr-python's `ZipStore` writes it: a missing archive
/// is created (with its parent directories) and an existing one appended to (`ZARR_MODE_WRITE`
/// and `ZARR_MODE_UPDATE`, zarr-python's `mode='a'`; `ZARR_MODE_OVERWRITE` removes the old
/// archive when the store is opened, `ZARR_MODE_CREATE` refuses one that holds any key). Each
/// value is written to disk as a member as soon as it is set, stored uncompressed as
/// zarr-python's default (option `zip_compression`: `"deflate"` for deflated members), and only
/// the directory stays in memory; values written earlier read back through the same handle. A
/// key written again gets a second member of the same name, as Python's `zipfile` writes it,
/// and the new central directory lists only the newest member of each name, so every reader
/// sees the last value (zarr-python, which lists both and reads the last, too). Erasing a key
/// (as writing an all-fill-value chunk does) leaves its member out of the central directory;
/// zarr-python cannot erase from a zip at all. The space of replaced and erased members is
/// not reclaimed (copy the store into a new zip to compact it). The central directory is
/// written by `zarr_store_flush` and `zarr_store_close`. The archive at the path is never
/// written in place: the first change after opening (or after a flush) copies it to a working
/// file beside it (`.NAME.zip.libzarr-partial-PID-N`), members go there, and a flush writes the
/// central directory and renames it over the archive. So a process killed before the close
/// leaves the archive exactly as it was opened or last flushed (and possibly a stray working
/// file), other programs reading it meanwhile see a complete archive, and appending to a large
/// archive costs one copy of it per flush followed by more writes (instant on file systems that
/// share copied blocks, such as Btrfs and XFS). One writer at a time: two stores writing one
/// archive at once keep only the members of the later flush. An archive with bytes before its
/// first member (a self-extracting stub) is `ZARR_ERR_UNSUPPORTED` for writing; a file that is not
/// a zip, or a damaged one, is `ZARR_ERR_CORRUPT_CHUNK` naming it (an empty file is a new
/// archive).
///
/// An N5 container reads and writes as zarr-python 2's `N5Store` and z5 do: each node's
/// `attributes.json` stands for its `.zarray`, `.zgroup` and `.zattrs` (the N5 version in every
/// group's, dimensions in reversed order, the other members its attributes; a directory without
/// one is a group), chunk `i.j.k` is the block file `k/j/i`, blocks carry N5's big-endian header
/// and data, edge blocks are written at their actual size, and N5's `raw`, `gzip`, `bzip2`,
/// `xz`, `blosc`, `zstd` and (numcodecs-framed) `lz4` compressions map to the numcodecs
/// compressors inside the `n5_wrapper` compressor the array metadata shows. Arrays created
/// there must have fill value 0, order C, no filters and an integer or float type
/// (`ZARR_ERR_UNSUPPORTED` otherwise); an attribute named as an N5 member (`dimensions`,
/// ...) is `ZARR_ERR_INVALID_ARGUMENT`. A damaged block header (wrong number of dimensions, a
/// block larger than the chunks) is `ZARR_ERR_CORRUPT_CHUNK` naming the chunk, a damaged
/// `attributes.json` `ZARR_ERR_INVALID_METADATA`, an unknown compression
/// `ZARR_ERR_UNSUPPORTED`, each naming the key.
///
/// When the store has consolidated metadata (as written by `zarr_consolidate_metadata` or
/// zarr-python's `consolidate_metadata`: for a v3 root group the `consolidated_metadata` of its
/// `zarr.json`, else a `.zmetadata` at the root), it is read once here and every array and
/// group metadata and attributes lookup is answered from it, unless `mode` includes
/// `ZARR_OPEN_IGNORE_CONSOLIDATED`. Consolidated metadata that cannot be parsed is
/// `ZARR_ERR_INVALID_METADATA` (a kind other than `"inline"`: `ZARR_ERR_UNSUPPORTED`). Changes made through this handle keep what it uses current;
/// changes made by others show after `zarr_store_refresh_consolidated`.
///
/// On success `*out_store` receives a handle to release with `zarr_store_close`.
///
/// # Safety
/// `location` must be a NUL-terminated string; `out_store` must point to writable memory.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_open(
    location: *const c_char,
    mode: zarr_open_mode,
    out_store: *mut *mut zarr_store,
) -> zarr_status {
    run(|| open(location, mode, None, out_store))
}

/// Opens the store at `location` as `zarr_store_open` does, with settings in `options_json`
/// (NULL or `"{}"`: none), a JSON object; for a remote store its members override the
/// environment (and the AWS profile files):
/// - every store: `metadata_key`, the key of the v2 consolidated metadata document (default
///   `.zmetadata`, as zarr-python 2's `metadata_key=`); `chunk_store`, the location of a
///   second store for the chunks, opened in the same mode with the options in
///   `chunk_store_options` (as zarr-python 2's `chunk_store=`: node documents and consolidated
///   metadata stay in this store, every other key goes there);
/// - directory stores: `normalize_keys` (default false): with true, keys are lower-cased
///   before they name files, as zarr-python 2's `DirectoryStore(normalize_keys=True)`;
/// - zip stores: `zip_compression`, `"stored"` (the default, as zarr-python's) or `"deflate"`
///   (zarr-python's `compression=zipfile.ZIP_DEFLATED`, at zlib's default level), for the
///   members written; and `fsync` (default false): with true, a flush or close puts the archive
///   on the disk (the working file before it is renamed over the archive, then its directory);
/// - directory, N5, SQLite, LMDB and dbm stores: `fsync` (default false). Every write replaces its key
///   at once (a new file renamed over it, or one database transaction), so a process killed
///   at any moment leaves each key with its old or its new value; but the system may keep
///   recent writes in memory for a while, and a power loss or a system crash can then lose
///   them or leave an empty file under a key (read as an error, never as the fill value; a
///   database may be left damaged). With true, every write is on the disk when its call
///   returns: the new file is flushed before the rename and its directory after, as
///   tensorstore does, at the cost of two flushes per chunk, shard or document written (a
///   database flushes each commit: SQLite's `synchronous = FULL` instead of `OFF`, LMDB
///   without `MDB_NOSYNC`);
/// - directory, N5, SQLite, LMDB, S3, Azure and GCS stores: `process_synchronizer`, a lock
///   directory on a file system every writer sees (created if missing when the store is opened for writing; a
///   read-only store takes no locks). Every write of a chunk, shard or metadata
///   document then holds the lock of the file named by its key in that directory, the lock
///   zarr-python 2's `ProcessSynchronizer` takes on the same file, so processes (C or Python)
///   writing regions that share chunks lose none of each other's values. Lock files stay.
/// - every remote store: `requests_in_flight` (per call, default 32), `timeout_seconds` (per
///   request, default 30), `connect_timeout_seconds` (default 5), `retries` (default 4) and
///   `retry_seconds` (the most a request may take with its retries, default 30);
/// - S3, Azure and GCS: `endpoint` (an `http://` one allows plain HTTP; for Azure the blob
///   endpoint, as a connection string's `BlobEndpoint`; for GCS the base URL), `anonymous`
///   (unsigned requests, for public buckets and containers) and `conditional_writes`
///   (default true: a write that changes part of a chunk or shard reads it and writes it
///   back only if it is still what was read, with `If-Match` or `If-None-Match`, reading
///   again when another writer got there first; so writers on different machines that share
///   a chunk lose nothing, on servers that honour those headers, as AWS S3, MinIO,
///   Cloudflare R2, SeaweedFS, Azure and GCS do. With false, or on servers that ignore them,
///   the last of two such writers wins whole chunks. Erasing a chunk that a write left
///   holding only the fill value is never conditional);
/// - S3: `region`, `access_key_id` with `secret_access_key` (and `session_token`), `profile`
///   (from `~/.aws/credentials` and `~/.aws/config`), `virtual_hosted_style` (bucket in the
///   host name; path-style by default);
/// - Azure: `account`, `account_key`, `sas_token` (`sv=...&sig=...`) and `use_emulator`
///   (Azurite: account `devstoreaccount1` with its well-known key and endpoint
///   `http://127.0.0.1:10000/devstoreaccount1`, each unless given);
/// - GCS: `service_account_path` (a service account's JSON key file).
///
/// An unknown member, one of the wrong type, or one the URL's service does not read is
/// `ZARR_ERR_INVALID_ARGUMENT` naming it (so are options for `memory:` stores).
///
/// # Safety
/// `location` must be a NUL-terminated string, `options_json` NULL or one; `out_store` must
/// point to writable memory.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_open_options(
    location: *const c_char,
    mode: zarr_open_mode,
    options_json: *const c_char,
    out_store: *mut *mut zarr_store,
) -> zarr_status {
    run(|| {
        let options = match options_json.is_null() {
            true => None,
            false => Some(str_arg(options_json, "options_json")?),
        };
        open(location, mode, options, out_store)
    })
}

/// The body of the store opening calls.
fn open(
    location: *const c_char,
    mode: zarr_open_mode,
    options: Option<&str>,
    out_store: *mut *mut zarr_store,
) -> Result<()> {
    let location = str_arg(location, "location")?;
    let out = out_arg(out_store, "out_store")?;
    let inner = open_store(
        location,
        access_mode(mode)?,
        options,
        consolidated_use(mode),
    )?;
    give_handle(out, zarr_store { inner });
    Ok(())
}

/// Whether a `zarr_open_mode` reads consolidated metadata.
pub(super) fn consolidated_use(mode: zarr_open_mode) -> Consolidated {
    match mode & ZARR_OPEN_IGNORE_CONSOLIDATED {
        0 => Consolidated::Use,
        _ => Consolidated::Ignore,
    }
}

/// The access mode of a `zarr_open_mode` (its flags are read by [`consolidated_use`]).
pub(super) fn access_mode(mode: zarr_open_mode) -> Result<AccessMode> {
    match mode & !ZARR_OPEN_IGNORE_CONSOLIDATED {
        ZARR_MODE_READ => Ok(AccessMode::Read),
        ZARR_MODE_WRITE => Ok(AccessMode::Append),
        ZARR_MODE_UPDATE => Ok(AccessMode::Update),
        ZARR_MODE_OVERWRITE => Ok(AccessMode::Overwrite),
        ZARR_MODE_CREATE => Ok(AccessMode::CreateNew),
        _ => Err(Error::InvalidArgument(format!("unknown open mode {mode}"))),
    }
}

/// Writes out what the store defers, without closing it: for a zip store opened for writing,
/// the central directory, so that the archive at its path is complete and readable by other
/// programs at this point (as zarr-python's `ZipStore.flush`); the store stays writable, and
/// later writes are in the archive after the next flush or `zarr_store_close`. The archive is
/// replaced at once (a working file renamed over it), so other readers see it before or after
/// the flush, never in between. A `dbm.gnu` database is synced to its file and a `dbm.dumb`
/// one has its index rewritten without the lines later writes superseded (as Python's
/// `dbm` `sync`); other stores write as they go, so there is nothing to do. A failure (e.g. a full disk) is
/// `ZARR_ERR_IO` naming the archive, which then stays as the last successful flush left it.
///
/// # Safety
/// `store` must be a live handle.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_flush(store: *mut zarr_store) -> zarr_status {
    run(|| ref_arg(store, "store")?.inner.flush())
}

/// Releases a store handle. NULL is a harmless no-op. Closing a zip store opened for writing
/// writes what changed since the last flush, as `zarr_store_flush`, and a failure there is this call's status (the handle is released
/// either way). Arrays and groups still open from the store can keep writing: their changes
/// are written when the last of them closes, where a failure cannot be reported.
///
/// # Safety
/// `store` must be NULL or a handle from `zarr_store_open` that was not closed yet.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_close(store: *mut zarr_store) -> zarr_status {
    run(|| {
        if store.is_null() {
            return Ok(());
        }
        // SAFETY: the pointer came from `give_handle` and is closed once, as documented.
        let store = unsafe { Box::from_raw(store) };
        store.inner.close()
    })
}

/// Writes into `*out_stats` what the HTTP requests of a remote store have been since it was
/// opened: every request sent (each retry counted again) by method, the failed attempts the
/// client retries (429, 408, 5xx, connection errors and timeouts: each is retried until the
/// `retries` or `retry_seconds` of `zarr_store_open_options` run out), the error answers, and
/// the bytes sent and received. For a local store everything is zero. Two calls around an
/// operation give what it cost, e.g. the requests of opening a hierarchy or reading a box.
///
/// # Safety
/// `store` must be a live handle; `out_stats` must point to writable memory.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_request_stats(
    store: *const zarr_store,
    out_stats: *mut RequestStats,
) -> zarr_status {
    run(|| {
        let store = ref_arg(store, "store")?;
        let out = out_arg(out_stats, "out_stats")?;
        *out = store.inner.request_stats().unwrap_or_default();
        Ok(())
    })
}

/// Writes consolidated metadata for the whole store, in zarr-python's format (which its
/// `open_consolidated` reads): for a v2 hierarchy a `.zmetadata` document at the root holding
/// every `.zarray`, `.zgroup` and `.zattrs`; for a v3 one (a root `zarr.json`) every node's
/// `zarr.json` by path in the root group's `"consolidated_metadata"` member (v3 has no
/// `.zmetadata`; a v3 root that is an array is `ZARR_ERR_INVALID_ARGUMENT`). The store uses it
/// from then on. Call it again after changing the hierarchy's metadata to bring it up to date.
/// A read-only store is `ZARR_ERR_READ_ONLY`; an unreadable metadata document is
/// `ZARR_ERR_INVALID_METADATA` naming its key. A failed call leaves the handle using what it
/// used before.
///
/// # Safety
/// `store` must be a live handle.
#[no_mangle]
pub unsafe extern "C" fn zarr_consolidate_metadata(store: *mut zarr_store) -> zarr_status {
    run(|| consolidated::consolidate(&ref_arg(store, "store")?.inner))
}

/// Reads the store's consolidated metadata again, for when others changed it since the store was
/// opened; without one, metadata is read from each node again. `*out_in_use` (may be NULL)
/// tells whether consolidated metadata is in use afterwards. A failed call (an unreachable
/// store, a damaged document) leaves the handle using what it used before.
///
/// # Safety
/// `store` must be a live handle; `out_in_use` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_refresh_consolidated(
    store: *mut zarr_store,
    out_in_use: *mut bool,
) -> zarr_status {
    run(|| {
        let found = consolidated::load(&ref_arg(store, "store")?.inner)?;
        if !out_in_use.is_null() {
            *out_arg(out_in_use, "out_in_use")? = found;
        }
        Ok(())
    })
}

/// The consolidated metadata the store answers metadata lookups from, as one JSON document in
/// `.zmetadata`'s format holding every document by key (`zarr.json` ones too), or NULL when it
/// uses none; free with `zarr_string_free`. Nothing is read: for handing to
/// `zarr_store_use_consolidated_json` in other processes, so that many open a hierarchy for
/// the requests of one (libzarr_mpi's `zarr_mpi_store_open` does).
///
/// # Safety
/// `store` must be a live handle and `out_json` writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_consolidated_json(
    store: *const zarr_store,
    out_json: *mut *mut c_char,
) -> zarr_status {
    run(|| {
        let store = ref_arg(store, "store")?;
        let out = out_arg(out_json, "out_json")?;
        *out = std::ptr::null_mut();
        match consolidated::in_use(&store.inner)? {
            Some(document) => give_string(
                out,
                String::from_utf8(document).map_err(|_| {
                    Error::InvalidMetadata("consolidated metadata is not UTF-8".into())
                })?,
            ),
            None => Ok(()),
        }
    })
}

/// Answers the store's metadata lookups from `json`, consolidated metadata as
/// `zarr_store_consolidated_json` gives it, from now on; NULL: from each node's own documents.
/// Nothing is read or written. A document that is not consolidated metadata is
/// `ZARR_ERR_INVALID_METADATA` (and the store keeps what it used).
///
/// # Safety
/// `store` must be a live handle; `json` NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_use_consolidated_json(
    store: *mut zarr_store,
    json: *const c_char,
) -> zarr_status {
    run(|| {
        let store = ref_arg(store, "store")?;
        let document = if json.is_null() {
            None
        } else {
            Some(str_arg(json, "json")?)
        };
        consolidated::adopt(&store.inner, document.map(str::as_bytes))
    })
}

/// Whether the store answers metadata lookups from consolidated metadata.
///
/// # Safety
/// `store` must be a live handle and `out_in_use` writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_uses_consolidated(
    store: *const zarr_store,
    out_in_use: *mut bool,
) -> zarr_status {
    run(|| {
        let store = ref_arg(store, "store")?;
        *out_arg(out_in_use, "out_in_use")? = store.inner.uses_consolidated();
        Ok(())
    })
}
