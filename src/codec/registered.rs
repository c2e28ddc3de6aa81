//! Codecs of the program's own (`zarr_codec_register`, numcodecs' `register_codec`): a
//! bytes→bytes codec (a v2 compressor, or a filter among the others; a v3 bytes→bytes codec)
//! or a filter that keeps a chunk's size (a v2 filter; a v3 array→array codec), found by its
//! v2 id and its v3 name. Arrays opened while a codec is registered keep it.

use super::filter::Filter;
use super::Codec;
use crate::error::{Error, Result};
use serde_json::Value;
use std::sync::{Arc, RwLock};

/// What a registered codec does to bytes; its `config` is the codec's JSON configuration (the
/// v2 object with its `id`, or the v3 `configuration`) as text.
pub trait ExternalCodec: Send + Sync + std::fmt::Debug {
    /// The encoded form of `input`.
    fn encode(&self, config: &str, input: &[u8]) -> Result<Vec<u8>>;
    /// Decodes `input` into the start of `out` (its length the most it may take), returning
    /// how many bytes it wrote.
    fn decode(&self, config: &str, input: &[u8], out: &mut [u8]) -> Result<usize>;
}

/// Where a registered codec sits in a chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegisteredKind {
    /// Bytes to bytes: a compressor.
    Bytes,
    /// A filter of the array's elements that keeps their size (v3: array→array).
    Filter,
}

/// One registration.
#[derive(Debug, Clone)]
struct Registration {
    id: &'static str,
    v3_name: String,
    kind: RegisteredKind,
    codec: Arc<dyn ExternalCodec>,
}

/// The codecs registered now.
static REGISTRY: RwLock<Vec<Registration>> = RwLock::new(Vec::new());

fn registry() -> std::sync::RwLockReadGuard<'static, Vec<Registration>> {
    REGISTRY.read().unwrap_or_else(|p| p.into_inner())
}

/// The ids ever registered, kept for the life of the process as built-in ids are (codecs name
/// themselves with a `&'static str`); each distinct id is kept once.
static IDS: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());

/// `id` as a string that lives as long as the process.
fn intern(id: &str) -> &'static str {
    let mut ids = IDS.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(&kept) = ids.iter().find(|&&kept| kept == id) {
        return kept;
    }
    let kept: &'static str = Box::leak(id.to_string().into_boxed_str());
    ids.push(kept);
    kept
}

/// Registers `codec` under the v2 id `id` and the v3 name `v3_name` (`None`:
/// `numcodecs.<id>`, as zarr-python 3 names numcodecs' codecs), replacing an earlier
/// registration of that id. The ids and names of built-in codecs are refused.
pub fn register(
    id: &str,
    v3_name: Option<&str>,
    kind: RegisteredKind,
    codec: Arc<dyn ExternalCodec>,
) -> Result<()> {
    let v3_name = v3_name.map_or_else(|| format!("numcodecs.{id}"), str::to_string);
    if id.is_empty() || v3_name.is_empty() {
        return Err(Error::InvalidArgument("a codec id or name is empty".into()));
    }
    let built_in = super::COMPRESSOR_IDS.contains(&id)
        || super::FILTER_IDS.contains(&id)
        || super::v3_codec_names().iter().any(|n| n == &v3_name)
        || crate::dtype::OBJECT_CODEC_IDS.contains(&id)
        || matches!(id, "n5_wrapper");
    if built_in {
        return Err(Error::InvalidArgument(format!(
            "codec {id:?} ({v3_name:?}) is built into libzarr: register another id"
        )));
    }
    let mut all = REGISTRY.write().unwrap_or_else(|p| p.into_inner());
    all.retain(|r| r.id != id && r.v3_name != v3_name);
    all.push(Registration {
        id: intern(id),
        v3_name,
        kind,
        codec,
    });
    Ok(())
}

/// Removes the registration of `id`; whether there was one.
pub fn unregister(id: &str) -> bool {
    let mut all = REGISTRY.write().unwrap_or_else(|p| p.into_inner());
    let before = all.len();
    all.retain(|r| r.id != id);
    all.len() != before
}

/// The kind of the codec registered under the v2 id `id`, if any.
pub(crate) fn kind_of_id(id: &str) -> Option<RegisteredKind> {
    registry().iter().find(|r| r.id == id).map(|r| r.kind)
}

/// The kind of the codec registered under the v3 name `name`, if any.
pub(crate) fn kind_of_name(name: &str) -> Option<RegisteredKind> {
    registry()
        .iter()
        .find(|r| r.v3_name == name)
        .map(|r| r.kind)
}

/// The codec registered under the v2 id `config` names, with its kind and that v2
/// configuration.
pub(crate) fn by_id(config: &Value) -> Option<(RegisteredKind, Registered)> {
    let id = config.get("id")?.as_str()?;
    let r = registry().iter().find(|r| r.id == id).cloned()?;
    Some((r.kind, Registered::new(r, config.clone(), None)))
}

/// The codec registered under the v3 name `name`, with its v3 `configuration`.
pub(crate) fn by_name(name: &str, configuration: &Value) -> Option<Registered> {
    let r = registry().iter().find(|r| r.v3_name == name).cloned()?;
    let v3 = Some(r.v3_name.clone());
    Some(Registered::new(r, configuration.clone(), v3))
}

/// A registered codec with its configuration: a [`Codec`] and a [`Filter`].
#[derive(Debug)]
pub struct Registered {
    id: &'static str,
    codec: Arc<dyn ExternalCodec>,
    config: Value,
    text: String,
    /// The v3 name, when it was built from a v3 chain.
    v3_name: Option<String>,
}

impl Registered {
    fn new(r: Registration, config: Value, v3_name: Option<String>) -> Registered {
        Registered {
            id: r.id,
            codec: r.codec,
            text: config.to_string(),
            config,
            v3_name,
        }
    }

    /// The canonical v3 form: `{"name", "configuration"}` as given.
    pub(crate) fn v3_json(&self) -> Value {
        serde_json::json!({
            "name": self.v3_name.as_deref().unwrap_or(self.id),
            "configuration": self.config,
        })
    }

    /// Decodes into a buffer of at most `max_len` bytes.
    fn decode_bounded(&self, input: &[u8], max_len: usize) -> Result<Vec<u8>> {
        let mut out = vec![0u8; max_len];
        let n = self.codec.decode(&self.text, input, &mut out)?;
        if n > max_len {
            return Err(Error::CorruptChunk(format!(
                "codec {:?} says it decoded {n} bytes into {max_len}",
                self.id
            )));
        }
        out.truncate(n);
        Ok(out)
    }
}

impl Codec for Registered {
    fn id(&self) -> &'static str {
        self.id
    }

    fn config(&self) -> Value {
        self.config.clone()
    }

    fn encode(&self, input: &[u8]) -> Result<Vec<u8>> {
        self.codec.encode(&self.text, input)
    }

    fn decode_into(&self, input: &[u8], out: &mut [u8]) -> Result<()> {
        let n = self.codec.decode(&self.text, input, out)?;
        if n != out.len() {
            return Err(Error::CorruptChunk(format!(
                "codec {:?} decoded {n} bytes, not the {} of a chunk",
                self.id,
                out.len()
            )));
        }
        Ok(())
    }

    fn decode_to_vec(&self, input: &[u8], max_len: usize) -> Result<Vec<u8>> {
        self.decode_bounded(input, max_len)
    }
}

impl Filter for Registered {
    fn id(&self) -> &'static str {
        self.id
    }

    fn config(&self) -> Value {
        self.config.clone()
    }

    fn encode(&self, input: &[u8]) -> Result<Vec<u8>> {
        let out = self.codec.encode(&self.text, input)?;
        if out.len() != input.len() {
            return Err(Error::InvalidArgument(format!(
                "filter {:?} encoded {} bytes into {}: a registered filter keeps the size",
                self.id,
                input.len(),
                out.len()
            )));
        }
        Ok(out)
    }

    fn decode(&self, input: &[u8], max_len: usize) -> Result<Vec<u8>> {
        let out = self.decode_bounded(input, max_len.min(input.len()))?;
        if out.len() != input.len() {
            return Err(Error::CorruptChunk(format!(
                "filter {:?} decoded {} bytes into {}: a registered filter keeps the size",
                self.id,
                input.len(),
                out.len()
            )));
        }
        Ok(out)
    }

    fn encoded_len(&self, decoded_len: usize) -> Option<usize> {
        Some(decoded_len)
    }
}
