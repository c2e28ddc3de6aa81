//! Codecs of the caller's own: a C program's functions as a codec (the C side of numcodecs'
//! `register_codec`).

use super::boundary::{ref_arg, run, str_arg};
use super::caller::{CallerData, Functions};
use super::status::*;
use crate::codec::registered::{self, ExternalCodec, RegisteredKind};
use crate::error::{Error, Result};
use std::ffi::{c_char, c_void, CString};
use std::sync::Arc;

/// The version of `zarr_codec_callbacks` this header describes: set its `version` to it.
pub const ZARR_CODEC_CALLBACKS_VERSION: u32 = 1;

/// `zarr_codec_callbacks.kind`: a bytes→bytes codec (a v2 compressor, or a filter among the
/// others; a v3 bytes→bytes codec).
pub const ZARR_CODEC_BYTES: i32 = 0;
/// `zarr_codec_callbacks.kind`: a filter of the array's elements whose output has the size
/// of its input (a v2 filter; a v3 array→array codec).
pub const ZARR_CODEC_FILTER: i32 = 1;

/// Receives the bytes an `encode` callback makes: `sink` as given to `encode`; each call
/// appends `length` bytes at `data` (copied during the call).
#[allow(non_camel_case_types)]
pub type zarr_bytes_sink_fn =
    Option<unsafe extern "C" fn(sink: *mut c_void, data: *const c_void, length: usize)>;

/// A codec kept by the caller (`zarr_codec_register`). `encode` and `decode` return `ZARR_OK`
/// or a failing status after `zarr_store_callback_error` gave a message (as store callbacks
/// do); that status and message reach the libzarr call that needed the chunk, with the codec's
/// id. `config` is the codec's JSON configuration as the metadata has it (v2: the object with
/// its `"id"`; v3: the `"configuration"` object), valid during the call only.
#[repr(C)]
#[allow(non_camel_case_types)]
pub struct zarr_codec_callbacks {
    /// `ZARR_CODEC_CALLBACKS_VERSION`.
    pub version: u32,
    /// Nonzero when the functions may run on several threads at once; 0 makes libzarr call
    /// them one at a time.
    pub thread_safe: i32,
    /// `ZARR_CODEC_BYTES` or `ZARR_CODEC_FILTER`.
    pub kind: i32,
    /// The numcodecs id the codec has in a v2 `.zarray` (`"compressor": {"id": ...}`);
    /// copied.
    pub id: *const c_char,
    /// Its name in a v3 `zarr.json` (NULL: `"numcodecs.<id>"`, as zarr-python 3 names
    /// numcodecs' codecs); copied.
    pub v3_name: *const c_char,
    /// Passed to every function; must stay valid until `release` is called.
    pub user_data: *mut c_void,
    /// Required. Encodes the `length` bytes at `input`, handing the result to
    /// `put(sink, data, n)` (once, or in pieces that are appended) before returning.
    pub encode: Option<
        unsafe extern "C" fn(
            user_data: *mut c_void,
            config: *const c_char,
            input: *const c_void,
            length: usize,
            put: zarr_bytes_sink_fn,
            sink: *mut c_void,
        ) -> zarr_status,
    >,
    /// Required. Decodes the `length` bytes at `input` into `output`, which holds `capacity`
    /// bytes (a chunk's size, or the most a filter's input may take), and sets `*out_length`
    /// to the bytes written; data that would decode to more is `ZARR_ERR_CORRUPT_CHUNK`.
    pub decode: Option<
        unsafe extern "C" fn(
            user_data: *mut c_void,
            config: *const c_char,
            input: *const c_void,
            length: usize,
            output: *mut c_void,
            capacity: usize,
            out_length: *mut usize,
        ) -> zarr_status,
    >,
    /// Optional. Called once, when the codec is unregistered (or registered again) and no
    /// open array uses it any more; when `zarr_codec_register` fails, before it returns
    /// (unless `version` is wrong).
    pub release: Option<unsafe extern "C" fn(user_data: *mut c_void)>,
}

/// Registers a codec of the caller's own (see `zarr_codec_callbacks`; copied), usable from
/// then on under its v2 id and its v3 name by arrays created or opened, as numcodecs'
/// `register_codec` makes a codec usable by zarr-python. Registering an id again replaces the
/// codec (arrays already open keep the one they have). An id or name of a codec built into
/// libzarr, a wrong `version` or `kind`, or a missing function is `ZARR_ERR_INVALID_ARGUMENT`.
///
/// # Safety
/// `codec` must point to a filled `zarr_codec_callbacks` whose functions suit its `user_data`.
#[no_mangle]
pub unsafe extern "C" fn zarr_codec_register(codec: *const zarr_codec_callbacks) -> zarr_status {
    run(|| {
        let callbacks = ref_arg(codec, "codec")?;
        if callbacks.version != ZARR_CODEC_CALLBACKS_VERSION {
            return Err(Error::InvalidArgument(format!(
                "zarr_codec_callbacks version {} is not {ZARR_CODEC_CALLBACKS_VERSION}, the version this library knows",
                callbacks.version
            )));
        }
        // From here a failure releases `user_data`, as dropping the codec does.
        let mut codec = CallbackCodec {
            functions: Functions(zarr_codec_callbacks {
                id: std::ptr::null(),
                v3_name: std::ptr::null(),
                user_data: std::ptr::null_mut(),
                ..*callbacks
            }),
            caller: CallerData::new(
                callbacks.user_data,
                callbacks.release,
                callbacks.thread_safe,
            ),
            id: String::new(),
        };
        let id = str_arg(callbacks.id, "codec->id")?.to_string();
        codec.id.clone_from(&id);
        let v3_name = match callbacks.v3_name.is_null() {
            true => None,
            false => Some(str_arg(callbacks.v3_name, "codec->v3_name")?.to_string()),
        };
        let kind = match callbacks.kind {
            ZARR_CODEC_BYTES => RegisteredKind::Bytes,
            ZARR_CODEC_FILTER => RegisteredKind::Filter,
            other => {
                return Err(Error::InvalidArgument(format!(
                    "codec {id:?}: kind {other} is neither ZARR_CODEC_BYTES nor ZARR_CODEC_FILTER"
                )))
            }
        };
        if callbacks.encode.is_none() || callbacks.decode.is_none() {
            return Err(Error::InvalidArgument(format!(
                "codec {id:?}: zarr_codec_callbacks needs encode and decode"
            )));
        }
        registered::register(&id, v3_name.as_deref(), kind, Arc::new(codec))
    })
}

/// Removes the codec registered under the v2 id `id`; arrays open with it keep it (its
/// `release` runs after the last closes). `ZARR_ERR_NOT_FOUND` if none is.
///
/// # Safety
/// `id` must be a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn zarr_codec_unregister(id: *const c_char) -> zarr_status {
    run(|| {
        let id = str_arg(id, "id")?;
        match registered::unregister(id) {
            true => Ok(()),
            false => Err(Error::NotFound(format!("no codec {id:?} is registered"))),
        }
    })
}

/// The caller's functions as a codec.
#[derive(Debug)]
struct CallbackCodec {
    functions: Functions<zarr_codec_callbacks>,
    caller: CallerData,
    id: String,
}

impl CallbackCodec {
    /// Runs `call` (doing `what`) with the configuration as a C string, and turns a failing
    /// status into its error.
    fn call(
        &self,
        what: &str,
        config: &str,
        call: impl FnOnce(*const c_char) -> zarr_status,
    ) -> Result<()> {
        let config = CString::new(config).map_err(|_| {
            Error::InvalidMetadata(format!("codec {:?}: a NUL in its configuration", self.id))
        })?;
        let failed = || format!("{what} with codec {:?} failed", self.id);
        self.caller.call(failed, || call(config.as_ptr()))
    }
}

/// The `put` function handed to `encode`: appends to the `Vec<u8>` behind `sink`.
unsafe extern "C" fn append_bytes(sink: *mut c_void, data: *const c_void, length: usize) {
    if sink.is_null() || (data.is_null() && length > 0) {
        return;
    }
    // SAFETY: `sink` is the vector `encode` handed over, during its call; `data` holds
    // `length` bytes.
    let (out, bytes) = unsafe {
        (
            &mut *sink.cast::<Vec<u8>>(),
            std::slice::from_raw_parts(data.cast::<u8>(), length),
        )
    };
    out.extend_from_slice(bytes);
}

impl ExternalCodec for CallbackCodec {
    fn encode(&self, config: &str, input: &[u8]) -> Result<Vec<u8>> {
        let encode = self.functions.encode.expect("checked at registration");
        let mut out: Vec<u8> = Vec::new();
        self.call("encoding", config, |c| {
            // SAFETY: the caller's function with its `user_data`, the configuration and the
            // input valid during the call, and `append_bytes` with the vector it suits.
            unsafe {
                encode(
                    self.caller.user_data(),
                    c,
                    input.as_ptr().cast(),
                    input.len(),
                    Some(append_bytes),
                    std::ptr::from_mut(&mut out).cast(),
                )
            }
        })?;
        Ok(out)
    }

    fn decode(&self, config: &str, input: &[u8], out: &mut [u8]) -> Result<usize> {
        let decode = self.functions.decode.expect("checked at registration");
        let mut written = 0usize;
        self.call("decoding", config, |c| {
            // SAFETY: as in `encode`; `out` is writable for its length.
            unsafe {
                decode(
                    self.caller.user_data(),
                    c,
                    input.as_ptr().cast(),
                    input.len(),
                    out.as_mut_ptr().cast(),
                    out.len(),
                    &mut written,
                )
            }
        })?;
        if written > out.len() {
            return Err(Error::CorruptChunk(format!(
                "codec {:?} says it wrote {written} bytes into {}",
                self.id,
                out.len()
            )));
        }
        Ok(written)
    }
}
