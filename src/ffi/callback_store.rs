//! Stores of the caller's own: a C program's functions as a store's backend (zarr-python's
//! "any MutableMapping").

use super::boundary::{give_handle, out_arg, run, str_arg};
use super::caller::{CallerData, Functions};
use super::status::*;
use super::store::{access_mode, consolidated_use, zarr_open_mode, zarr_store};
use crate::error::{Error, Result};
use crate::open::open_backend;
use crate::store::batches::{self, Changes, Values};
use crate::store::{Capabilities, Consume, OpenMode, Produce, Store, ValueReader};
use std::ffi::{c_char, c_void, CStr, CString};
use std::sync::Mutex;

/// The version of `zarr_store_callbacks` this header describes: set its `version` to it.
/// Version 1 (without `read_many` and `write_many`, which version 2 added) is accepted too.
pub const ZARR_STORE_CALLBACKS_VERSION: u32 = 2;

/// The most keys one `read_many` or `write_many` call is given.
const BATCH: usize = 64;

/// Receives the keys a `list` callback finds: `sink` as given to `list`, `key` a
/// NUL-terminated UTF-8 key, read during the call only.
#[allow(non_camel_case_types)]
pub type zarr_key_sink_fn = Option<unsafe extern "C" fn(sink: *mut c_void, key: *const c_char)>;

/// Receives the values a `read_many` callback fetches: `sink` as given to `read_many`, `index`
/// the position of the value's key in its `keys`, `value` its `length` bytes (copied during
/// the call) or NULL for a key that holds none. May be called from any thread, at once from
/// several.
#[allow(non_camel_case_types)]
pub type zarr_value_sink_fn = Option<
    unsafe extern "C" fn(sink: *mut c_void, index: usize, value: *const c_void, length: usize),
>;

/// The functions of a store kept by the caller (`zarr_store_open_callbacks`). Each returns
/// `ZARR_OK`, or a status saying what failed (`ZARR_ERR_NOT_FOUND`, `ZARR_ERR_IO`,
/// `ZARR_ERR_PERMISSION_DENIED`, `ZARR_ERR_TIMEOUT`, ...; other values are `ZARR_ERR_IO`),
/// after calling `zarr_store_callback_error` with a message for it where it has one. That
/// status and message become the status and `zarr_last_error` text of the libzarr call that
/// needed the value, with the key and the store's name. Keys are NUL-terminated UTF-8
/// strings of `/`-separated segments (`"a/b/.zarray"`, `"a/b/0.0"`), valid during the call
/// only; `user_data` is passed to every function.
#[repr(C)]
#[allow(non_camel_case_types)]
pub struct zarr_store_callbacks {
    /// `ZARR_STORE_CALLBACKS_VERSION`.
    pub version: u32,
    /// Nonzero when the functions may run on several threads at once (libzarr's thread pool
    /// reads and writes chunks in parallel); 0 makes libzarr call them one at a time.
    pub thread_safe: i32,
    /// What the store is called in messages (NULL: `"callbacks"`); copied.
    pub name: *const c_char,
    /// Passed to every function; must stay valid until `release` is called.
    pub user_data: *mut c_void,
    /// Required. Whether `key` holds a value (`*out_exists`, a `bool`) and its length in
    /// bytes (`*out_size`). A missing key is `ZARR_OK` with `*out_exists = false`, never an
    /// error.
    pub size: Option<
        unsafe extern "C" fn(
            user_data: *mut c_void,
            key: *const c_char,
            out_exists: *mut bool,
            out_size: *mut u64,
        ) -> zarr_status,
    >,
    /// Required. Fills `buffer` with exactly `length` bytes of the value under `key`,
    /// starting at byte `offset`; libzarr asks only for bytes inside the length `size` gave,
    /// so a shorter value (it changed meanwhile) is an error to report.
    pub read: Option<
        unsafe extern "C" fn(
            user_data: *mut c_void,
            key: *const c_char,
            offset: u64,
            buffer: *mut c_void,
            length: usize,
        ) -> zarr_status,
    >,
    /// Required in every mode but `ZARR_MODE_READ`. Stores the `length` bytes at `value` under `key`,
    /// replacing any value it had.
    pub write: Option<
        unsafe extern "C" fn(
            user_data: *mut c_void,
            key: *const c_char,
            value: *const c_void,
            length: usize,
        ) -> zarr_status,
    >,
    /// Required in every mode but `ZARR_MODE_READ`. Removes `key`; a missing key is `ZARR_OK`.
    pub erase:
        Option<unsafe extern "C" fn(user_data: *mut c_void, key: *const c_char) -> zarr_status>,
    /// Optional. Calls `add(sink, key)` for every key that starts with `prefix` (empty, or
    /// ending in `/`), in any order; other keys it passes are ignored. Without it, listing
    /// members, deleting, moving, copying and consolidating are `ZARR_ERR_UNSUPPORTED`;
    /// opening and reading by path work.
    pub list: Option<
        unsafe extern "C" fn(
            user_data: *mut c_void,
            prefix: *const c_char,
            add: zarr_key_sink_fn,
            sink: *mut c_void,
        ) -> zarr_status,
    >,
    /// Optional. Called once, when the store handle and every array and group opened from it
    /// are closed; when `zarr_store_open_callbacks` fails, before it returns (unless
    /// `version` is wrong: then nothing of the structure is used).
    pub release: Option<unsafe extern "C" fn(user_data: *mut c_void)>,
    /// Optional (version 2). Fetches the values under `keys[0]`, ..., `keys[count - 1]`
    /// together, as a store on a network does with many requests in flight, calling
    /// `put(sink, i, value, length)` for each before returning (value NULL: `keys[i]` holds
    /// none). With it, reads hand the store whole batches (every chunk a read needs and
    /// every shard it needs whole, `count` at most 64 per call, a call per libzarr thread at
    /// once) instead of a `size` and a `read` per value (parts of shards are still read with
    /// `read`); writes then go through `write_many`, which the store needs too in every mode
    /// but `ZARR_MODE_READ`.
    pub read_many: Option<
        unsafe extern "C" fn(
            user_data: *mut c_void,
            count: usize,
            keys: *const *const c_char,
            put: zarr_value_sink_fn,
            sink: *mut c_void,
        ) -> zarr_status,
    >,
    /// Optional (version 2; required with `read_many` in every mode but `ZARR_MODE_READ`).
    /// Stores the `lengths[i]` bytes at `values[i]` under `keys[i]` for each `i` below
    /// `count`, or erases `keys[i]` where `values[i]` is NULL (a missing key is no error), each
    /// key replaced at once for other readers.
    pub write_many: Option<
        unsafe extern "C" fn(
            user_data: *mut c_void,
            count: usize,
            keys: *const *const c_char,
            values: *const *const c_void,
            lengths: *const usize,
        ) -> zarr_status,
    >,
}

/// Opens a store whose keys and values the caller keeps, through the functions in
/// `*callbacks` (copied; see `zarr_store_callbacks`): a database, a cache, a service of the
/// program's own, or a Python `dict` through ctypes. `mode` is that of `zarr_store_open`
/// (`ZARR_MODE_OVERWRITE` erases every key the `list` function gives; `ZARR_MODE_CREATE`
/// refuses a store where it gives any). Everything else works on it as on a directory store, including consolidated metadata (read here unless `mode` includes
/// `ZARR_OPEN_IGNORE_CONSOLIDATED`). Partial-chunk writes of handles opened over the same
/// `user_data` exclude each other; the functions themselves must make each `write` replace
/// its value at once for other readers. A `version` other than
/// `ZARR_STORE_CALLBACKS_VERSION` or 1, or a function the mode needs missing, is
/// `ZARR_ERR_INVALID_ARGUMENT`.
///
/// # Safety
/// `callbacks` must point to a filled `zarr_store_callbacks` whose functions suit its
/// `user_data`; `out_store` must point to writable memory.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_open_callbacks(
    callbacks: *const zarr_store_callbacks,
    mode: zarr_open_mode,
    out_store: *mut *mut zarr_store,
) -> zarr_status {
    run(|| {
        // SAFETY: a non-NULL `callbacks` points to a structure of the version it states.
        let callbacks = unsafe { callbacks_arg(callbacks)? };
        let out = out_arg(out_store, "out_store")?;
        let mode_asked = access_mode(mode)?;
        let open = mode_asked.open_mode();
        let backend = CallbackStore::new(&callbacks, open)?;
        let (name, scope) = (backend.name.clone(), format!("{:p}", callbacks.user_data));
        let inner = open_backend(
            Box::new(backend),
            &name,
            &scope,
            mode_asked,
            consolidated_use(mode),
        )?;
        give_handle(out, zarr_store { inner });
        Ok(())
    })
}

/// The caller's structure, as long as its `version` says it is: a version 1 structure ends
/// before `read_many`, which then stays NULL, as does `write_many`.
///
/// # Safety
/// `callbacks` must be NULL or point to a structure of the version it states.
unsafe fn callbacks_arg(callbacks: *const zarr_store_callbacks) -> Result<zarr_store_callbacks> {
    if callbacks.is_null() {
        return Err(Error::NullPointer("argument callbacks is NULL".into()));
    }
    // SAFETY: every version begins with `version`.
    let version = unsafe { std::ptr::addr_of!((*callbacks).version).read_unaligned() };
    let length = match version {
        1 => std::mem::offset_of!(zarr_store_callbacks, read_many),
        ZARR_STORE_CALLBACKS_VERSION => std::mem::size_of::<zarr_store_callbacks>(),
        _ => {
            return Err(Error::InvalidArgument(format!(
                "zarr_store_callbacks version {version} is not {ZARR_STORE_CALLBACKS_VERSION} (or 1), the versions this library knows"
            )))
        }
    };
    // SAFETY: the structure's members are integers, pointers and optional functions, for all
    // of which zero bits are a valid value (0, NULL, none).
    let mut taken: zarr_store_callbacks = unsafe { std::mem::zeroed() };
    // SAFETY: the caller's structure holds `length` bytes, as its version says.
    unsafe {
        std::ptr::copy_nonoverlapping(
            callbacks.cast::<u8>(),
            std::ptr::from_mut(&mut taken).cast::<u8>(),
            length,
        )
    };
    Ok(taken)
}

/// The caller's functions as a [`Store`].
#[derive(Debug)]
struct CallbackStore {
    functions: Functions<zarr_store_callbacks>,
    caller: CallerData,
    name: String,
}

impl CallbackStore {
    /// Takes the functions of `callbacks` (of a version [`callbacks_arg`] checked), checking
    /// those `mode` needs. A failure releases `user_data` (as dropping does).
    fn new(callbacks: &zarr_store_callbacks, mode: OpenMode) -> Result<CallbackStore> {
        let name = match callbacks.name.is_null() {
            true => Ok("callbacks".to_string()),
            false => str_arg(callbacks.name, "callbacks->name").map(str::to_string),
        };
        let store = CallbackStore {
            functions: Functions(zarr_store_callbacks {
                name: std::ptr::null(),
                user_data: std::ptr::null_mut(),
                ..*callbacks
            }),
            caller: CallerData::new(
                callbacks.user_data,
                callbacks.release,
                callbacks.thread_safe,
            ),
            name: name.as_deref().unwrap_or("callbacks").to_string(),
        };
        name?;
        let f = &store.functions;
        let needed = [
            ("size", f.size.is_some()),
            ("read", f.read.is_some()),
            ("write", mode == OpenMode::Read || f.write.is_some()),
            ("erase", mode == OpenMode::Read || f.erase.is_some()),
            (
                "write_many (it has read_many)",
                mode == OpenMode::Read || f.read_many.is_none() || f.write_many.is_some(),
            ),
            (
                "read_many (it has write_many)",
                f.write_many.is_none() || f.read_many.is_some(),
            ),
        ];
        if let Some((what, _)) = needed.iter().find(|(_, there)| !there) {
            return Err(Error::InvalidArgument(format!(
                "store {:?}: zarr_store_callbacks has no {what} function",
                store.name
            )));
        }
        Ok(store)
    }

    /// Runs `call` (one of the caller's functions; `what` says which, on which key) and turns
    /// a failing status into the error it names, with the callback's message.
    fn call(
        &self,
        what: &str,
        key: &str,
        call: impl FnOnce(*const c_char) -> zarr_status,
    ) -> Result<()> {
        let key_c = c_key(key)?;
        self.call_on(&format!("{what} of key {key:?}"), || call(key_c.as_ptr()))
    }

    /// Runs `call` (one of the caller's functions, doing `what`) and turns a failing status
    /// into the error it names, with the callback's message.
    fn call_on(&self, what: &str, call: impl FnOnce() -> zarr_status) -> Result<()> {
        let failed = || format!("{what} in store {:?} failed", self.name);
        self.caller.call(failed, call)
    }

    /// The length of the value under `key`, if any.
    fn size(&self, key: &str) -> Result<Option<u64>> {
        let (mut exists, mut size) = (false, 0u64);
        let size_fn = self.required(self.functions.size, "size")?;
        self.call("size", key, |k| {
            // SAFETY: the caller's function with its `user_data`, a key valid during the
            // call, and two writable outputs.
            unsafe { size_fn(self.caller.user_data(), k, &mut exists, &mut size) }
        })?;
        Ok(exists.then_some(size))
    }

    /// Reads `buf.len()` bytes of `key`'s value from `offset`.
    fn read(&self, key: &str, offset: u64, buf: &mut [u8]) -> Result<()> {
        if buf.is_empty() {
            return Ok(());
        }
        let read = self.required(self.functions.read, "read")?;
        self.call("read", key, |k| {
            // SAFETY: as in `size`; `buf` is writable for its length.
            unsafe {
                read(
                    self.caller.user_data(),
                    k,
                    offset,
                    buf.as_mut_ptr().cast(),
                    buf.len(),
                )
            }
        })
    }

    /// The values under `keys`, from one call of `read_many`.
    fn get_batch(&self, keys: &[String]) -> Result<Values> {
        let read_many = self.required(self.functions.read_many, "read_many")?;
        let keys_c = keys.iter().map(|k| c_key(k)).collect::<Result<Vec<_>>>()?;
        let pointers: Vec<*const c_char> = keys_c.iter().map(|k| k.as_ptr()).collect();
        let found = ValuesFound {
            values: Mutex::new(vec![None; keys.len()]),
            wrong_index: Mutex::new(None),
        };
        let what = batches::describe("read_many of", keys);
        self.call_on(&what, || {
            // SAFETY: the caller's function with its `user_data`, `count` keys valid during the
            // call, and `put_value` with the `ValuesFound` it suits, which outlives the call.
            unsafe {
                read_many(
                    self.caller.user_data(),
                    keys.len(),
                    pointers.as_ptr(),
                    Some(put_value),
                    std::ptr::from_ref(&found).cast_mut().cast(),
                )
            }
        })?;
        let failed =
            |problem: String| Error::Io(format!("{what} in store {:?}: {problem}", self.name));
        if let Some(index) = *found.wrong_index.lock().unwrap_or_else(|p| p.into_inner()) {
            return Err(failed(format!(
                "it gave a value for index {index}, beyond the {} keys asked for",
                keys.len()
            )));
        }
        let values = found.values.into_inner().unwrap_or_else(|p| p.into_inner());
        values
            .into_iter()
            .zip(keys)
            .map(|(value, key)| {
                value.ok_or_else(|| {
                    failed(format!("it returned ZARR_OK without giving key {key:?}"))
                })
            })
            .collect()
    }

    /// Stores `changes` with one call of `write_many`.
    fn set_batch(&self, changes: Changes) -> Result<()> {
        let write_many = self.required(self.functions.write_many, "write_many")?;
        let keys: Vec<String> = changes.iter().map(|(key, _)| key.clone()).collect();
        let keys_c = keys.iter().map(|k| c_key(k)).collect::<Result<Vec<_>>>()?;
        let pointers: Vec<*const c_char> = keys_c.iter().map(|k| k.as_ptr()).collect();
        let values: Vec<*const c_void> = changes
            .iter()
            .map(|(_, value)| {
                value
                    .as_ref()
                    .map_or(std::ptr::null(), |v| v.as_ptr().cast())
            })
            .collect();
        let lengths: Vec<usize> = changes
            .iter()
            .map(|(_, value)| value.as_ref().map_or(0, Vec::len))
            .collect();
        self.call_on(&batches::describe("write_many of", &keys), || {
            // SAFETY: the caller's function with its `user_data` and `count` keys, values
            // and lengths, all valid during the call.
            unsafe {
                write_many(
                    self.caller.user_data(),
                    keys.len(),
                    pointers.as_ptr(),
                    values.as_ptr(),
                    lengths.as_ptr(),
                )
            }
        })
    }

    /// The function `function`, or the error of a store opened without it.
    fn required<F>(&self, function: Option<F>, what: &str) -> Result<F> {
        function.ok_or_else(|| {
            Error::Unsupported(format!(
                "store {:?} was opened without a {what} function",
                self.name
            ))
        })
    }
}

impl Store for CallbackStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        let mut buf = Vec::new();
        Ok(self.get_into(key, &mut buf)?.then_some(buf))
    }

    fn get_into(&self, key: &str, buf: &mut Vec<u8>) -> Result<bool> {
        buf.clear();
        let Some(size) = self.size(key)? else {
            return Ok(false);
        };
        let too_large = || {
            Error::TooLarge(format!(
                "store {:?} says key {key:?} holds {size} bytes, more than this process can hold",
                self.name
            ))
        };
        let len = usize::try_from(size).map_err(|_| too_large())?;
        buf.try_reserve_exact(len).map_err(|_| too_large())?;
        buf.resize(len, 0);
        self.read(key, 0, buf)?;
        Ok(true)
    }

    fn open_value(&self, key: &str) -> Result<Option<Box<dyn ValueReader + '_>>> {
        Ok(self.size(key)?.map(|len| {
            Box::new(CallbackValue {
                store: self,
                key: key.to_string(),
                len,
            }) as Box<dyn ValueReader>
        }))
    }

    fn value_len(&self, key: &str) -> Result<Option<u64>> {
        self.size(key)
    }

    fn contains(&self, key: &str) -> Result<bool> {
        Ok(self.size(key)?.is_some())
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        let write = self.required(self.functions.write, "write")?;
        self.call("write", key, |k| {
            // SAFETY: as in `size`; `value` is readable for its length.
            unsafe {
                write(
                    self.caller.user_data(),
                    k,
                    value.as_ptr().cast(),
                    value.len(),
                )
            }
        })
    }

    fn erase(&self, key: &str) -> Result<()> {
        let erase = self.required(self.functions.erase, "erase")?;
        // SAFETY: as in `size`.
        self.call("erase", key, |k| unsafe {
            erase(self.caller.user_data(), k)
        })
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            listing: self.functions.list.is_some(),
            batched: self.functions.read_many.is_some(),
            ..Capabilities::LOCAL
        }
    }

    fn get_many(
        &self,
        count: usize,
        key: &(dyn Fn(usize) -> String + Sync),
        f: &Consume,
    ) -> Result<()> {
        match self.functions.read_many {
            Some(_) => batches::get_many(count, key, f, BATCH, |keys| self.get_batch(keys)),
            None => batches::get_each(self, count, key, f),
        }
    }

    fn set_many(&self, count: usize, produce: &Produce) -> Result<()> {
        match self.functions.write_many {
            Some(_) => batches::set_many(count, produce, BATCH, |c| self.set_batch(c)),
            None => batches::set_each(self, count, produce),
        }
    }

    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        let list = self.required(self.functions.list, "list")?;
        let mut found = KeysFound {
            prefix,
            keys: Vec::new(),
            not_utf8: false,
        };
        self.call("listing", prefix, |p| {
            // SAFETY: as in `size`; `add_key` suits `found`, which outlives the call.
            unsafe {
                list(
                    self.caller.user_data(),
                    p,
                    Some(add_key),
                    std::ptr::from_mut(&mut found).cast(),
                )
            }
        })?;
        if found.not_utf8 {
            return Err(Error::InvalidPath(format!(
                "store {:?} listed a key that is not UTF-8 below {prefix:?}",
                self.name
            )));
        }
        let mut keys = found.keys;
        keys.sort();
        keys.dedup();
        Ok(keys)
    }

    fn list_dir(&self, prefix: &str) -> Result<Vec<String>> {
        let mut names: Vec<String> = self
            .list_prefix(prefix)?
            .iter()
            .filter_map(|key| key[prefix.len()..].split('/').next())
            .map(str::to_string)
            .collect();
        names.dedup();
        Ok(names)
    }
}

/// What a `list` callback has passed to [`add_key`] so far.
struct KeysFound<'a> {
    prefix: &'a str,
    keys: Vec<String>,
    not_utf8: bool,
}

/// The `add` function handed to `list`: keeps the keys below the prefix.
unsafe extern "C" fn add_key(sink: *mut c_void, key: *const c_char) {
    if sink.is_null() || key.is_null() {
        return;
    }
    // SAFETY: `sink` is the `KeysFound` that `list_prefix` handed to `list`, and the caller's
    // function calls this during that call; `key` is NUL-terminated, as documented.
    let (found, key) = unsafe { (&mut *sink.cast::<KeysFound>(), CStr::from_ptr(key)) };
    match key.to_str() {
        Ok(key) if key.starts_with(found.prefix) && crate::path::validate_key(key).is_ok() => {
            found.keys.push(key.to_string())
        }
        Ok(_) => {}
        Err(_) => found.not_utf8 = true,
    }
}

/// What a `read_many` callback has passed to [`put_value`] so far.
struct ValuesFound {
    /// By index: `None` until given, then the value (`None`: the key holds none).
    values: Mutex<Vec<Option<Option<Vec<u8>>>>>,
    /// An index beyond the keys asked for, if the callback gave one.
    wrong_index: Mutex<Option<usize>>,
}

/// The `put` function handed to `read_many`: keeps a copy of value `index`.
unsafe extern "C" fn put_value(
    sink: *mut c_void,
    index: usize,
    value: *const c_void,
    length: usize,
) {
    if sink.is_null() {
        return;
    }
    // SAFETY: `sink` is the `ValuesFound` that `get_batch` handed to `read_many`, and the
    // caller's function calls this during that call; `value` is NULL or holds `length` bytes.
    let found = unsafe { &*sink.cast::<ValuesFound>() };
    let copy = (!value.is_null())
        .then(|| unsafe { std::slice::from_raw_parts(value.cast::<u8>(), length) }.to_vec());
    let mut values = found.values.lock().unwrap_or_else(|p| p.into_inner());
    match values.get_mut(index) {
        Some(slot) => *slot = Some(copy),
        None => *found.wrong_index.lock().unwrap_or_else(|p| p.into_inner()) = Some(index),
    }
}

/// `key` as the C string handed to the caller's functions.
fn c_key(key: &str) -> Result<CString> {
    CString::new(key).map_err(|_| Error::InvalidPath(format!("store key {key:?} holds a NUL")))
}

/// A value of a [`CallbackStore`], read in parts with its `read` function.
struct CallbackValue<'a> {
    store: &'a CallbackStore,
    key: String,
    len: u64,
}

impl ValueReader for CallbackValue<'_> {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        if offset
            .checked_add(buf.len() as u64)
            .is_none_or(|end| end > self.len)
        {
            return Err(Error::CorruptChunk(format!(
                "value of key {:?} in store {:?} holds {} bytes, which end before byte {offset} + {}",
                self.key,
                self.store.name,
                self.len,
                buf.len()
            )));
        }
        self.store.read(&self.key, offset, buf)
    }
}
