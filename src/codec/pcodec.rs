//! numcodecs `PCodec` (crate `pco`): numbers compressed as pco's standalone format, as the
//! `pcodec` Python package writes it. A v2 compressor (handed the elements the filters made,
//! as numcodecs hands them) and the v3 array→bytes codec `numcodecs.pcodec`, for 16-, 32- and
//! 64-bit integers and floats in the machine's byte order.

use super::config::Config;
use super::filters::numeric::{ElemType, Kind};
use super::Codec;
use crate::error::{Error, Result};
use pco::standalone::{simple_compress, simple_decompress_into};
use pco::{ChunkConfig, DeltaSpec, ModeSpec, PagingSpec};
use serde_json::{json, Map, Value};

/// The element types pco compresses, as numcodecs allows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Element {
    U16,
    U32,
    U64,
    I16,
    I32,
    I64,
    F16,
    F32,
    F64,
}

impl Element {
    /// The element `elem` names, if pco takes it (native byte order only: pco reads numbers).
    fn of(elem: &ElemType) -> Option<Element> {
        let ElemType::Num(t) = elem else { return None };
        if *t != t.to_native() && t.size > 1 {
            return None;
        }
        Some(match (t.kind, t.size) {
            (Kind::UInt, 2) => Element::U16,
            (Kind::UInt, 4) => Element::U32,
            (Kind::UInt, 8) => Element::U64,
            (Kind::Int, 2) => Element::I16,
            (Kind::Int, 4) => Element::I32,
            (Kind::Int, 8) => Element::I64,
            (Kind::Float, 2) => Element::F16,
            (Kind::Float, 4) => Element::F32,
            (Kind::Float, 8) => Element::F64,
            _ => return None,
        })
    }

    fn size(self) -> usize {
        match self {
            Element::U16 | Element::I16 | Element::F16 => 2,
            Element::U32 | Element::I32 | Element::F32 => 4,
            Element::U64 | Element::I64 | Element::F64 => 8,
        }
    }
}

/// Runs `$body` with `$t` the Rust type of `$element`.
macro_rules! with_type {
    ($element:expr, $t:ident => $body:expr) => {
        match $element {
            Element::U16 => {
                type $t = u16;
                $body
            }
            Element::U32 => {
                type $t = u32;
                $body
            }
            Element::U64 => {
                type $t = u64;
                $body
            }
            Element::I16 => {
                type $t = i16;
                $body
            }
            Element::I32 => {
                type $t = i32;
                $body
            }
            Element::I64 => {
                type $t = i64;
                $body
            }
            Element::F16 => {
                type $t = half::f16;
                $body
            }
            Element::F32 => {
                type $t = f32;
                $body
            }
            Element::F64 => {
                type $t = f64;
                $body
            }
        }
    };
}

/// The numcodecs `PCodec` codec: `{"id": "pcodec", "level": 8, "mode_spec": "auto",
/// "delta_spec": "auto", "paging_spec": "equal_pages_up_to", "delta_encoding_order": null,
/// "equal_pages_up_to": 262144}`.
#[derive(Debug, Clone)]
pub struct Pcodec {
    element: Element,
    level: i64,
    mode_spec: &'static str,
    delta_spec: &'static str,
    delta_encoding_order: Option<i64>,
    equal_pages_up_to: i64,
}

impl Pcodec {
    /// Reads the configuration for elements of type `elem` (what numcodecs hands the codec);
    /// other types are [`Error::Unsupported`] naming the type.
    pub fn from_config(obj: &Map<String, Value>, elem: Option<&ElemType>) -> Result<Self> {
        let cfg = Config::new(obj, "pcodec");
        let element = elem.and_then(Element::of).ok_or_else(|| {
            Error::Unsupported(format!(
                "pcodec compresses 16-, 32- and 64-bit integers and floats in the machine's byte order, not {}",
                elem.map_or("bytes".to_string(), ElemType::typestr)
            ))
        })?;
        let pick = |key: &str, default: &'static str, known: &[&'static str]| {
            let given = cfg.str(key, default)?;
            known
                .iter()
                .find(|&&k| k == given)
                .copied()
                .ok_or_else(|| cfg.invalid(key, format!("one of {known:?}")))
        };
        let mode_spec = pick("mode_spec", "auto", &["auto", "classic"])?;
        let delta_spec = pick(
            "delta_spec",
            "auto",
            &["auto", "none", "no_op", "try_consecutive", "try_lookback"],
        )?;
        let delta_encoding_order = match cfg.opt_value("delta_encoding_order") {
            None | Some(Value::Null) => None,
            Some(_) => cfg.opt_int("delta_encoding_order", 0..=7)?,
        };
        if delta_encoding_order.is_some() && !matches!(delta_spec, "auto" | "try_consecutive") {
            return Err(cfg.invalid(
                "delta_encoding_order",
                "null unless delta_spec is \"try_consecutive\" (or \"auto\")",
            ));
        }
        pick("paging_spec", "equal_pages_up_to", &["equal_pages_up_to"])?;
        Ok(Pcodec {
            element,
            level: cfg.int("level", 8, 0..=12)?,
            mode_spec,
            delta_spec,
            delta_encoding_order,
            equal_pages_up_to: cfg.int("equal_pages_up_to", 262_144, 1..=i64::from(u32::MAX))?,
        })
    }

    /// pco's settings, as numcodecs makes them from the configuration.
    fn chunk_config(&self) -> ChunkConfig {
        let order = self.delta_encoding_order.map(|o| o as usize);
        let delta_spec = match (self.delta_spec, order) {
            ("auto", Some(order)) | ("try_consecutive", Some(order)) => {
                DeltaSpec::TryConsecutive(order)
            }
            ("auto", None) => DeltaSpec::Auto,
            ("try_consecutive", None) => DeltaSpec::Auto,
            ("try_lookback", _) => DeltaSpec::TryLookback,
            _ => DeltaSpec::NoOp,
        };
        let mut config = ChunkConfig::default()
            .with_compression_level(self.level as usize)
            .with_delta_spec(delta_spec)
            .with_paging_spec(PagingSpec::EqualPagesUpTo(self.equal_pages_up_to as usize));
        config.mode_spec = match self.mode_spec {
            "classic" => ModeSpec::Classic,
            _ => ModeSpec::Auto,
        };
        config
    }

    /// Decodes up to `out.len()` bytes of numbers from `input` into `out` (a whole number of
    /// elements), saying how many numbers came and whether the stream ended there.
    fn decompress(&self, input: &[u8], out: &mut [u8]) -> Result<pco::Progress> {
        let size = self.element.size();
        with_type!(self.element, T => {
            let mut numbers = vec![<T as Default>::default(); out.len() / size];
            let progress = simple_decompress_into(input, &mut numbers)
                .map_err(|e| Error::CorruptChunk(format!("pcodec: {e}")))?;
            for (bytes, n) in out.chunks_exact_mut(size).zip(&numbers[..progress.n_processed]) {
                bytes.copy_from_slice(&n.to_ne_bytes());
            }
            Ok(progress)
        })
    }
}

impl Codec for Pcodec {
    fn id(&self) -> &'static str {
        "pcodec"
    }

    fn config(&self) -> Value {
        json!({
            "id": "pcodec",
            "level": self.level,
            "mode_spec": self.mode_spec,
            "delta_spec": self.delta_spec,
            "paging_spec": "equal_pages_up_to",
            "delta_encoding_order": self.delta_encoding_order,
            "equal_pages_up_to": self.equal_pages_up_to,
        })
    }

    fn encode(&self, input: &[u8]) -> Result<Vec<u8>> {
        let size = self.element.size();
        if !input.len().is_multiple_of(size) {
            return Err(Error::Internal(format!(
                "pcodec: {} bytes are not whole {size}-byte numbers",
                input.len()
            )));
        }
        let config = self.chunk_config();
        with_type!(self.element, T => {
            let numbers: Vec<T> = input
                .chunks_exact(size)
                .map(|b| T::from_ne_bytes(b.try_into().expect("one number")))
                .collect();
            simple_compress(&numbers, &config)
                .map_err(|e| Error::InvalidArgument(format!("pcodec: {e}")))
        })
    }

    fn decode_into(&self, input: &[u8], out: &mut [u8]) -> Result<()> {
        let size = self.element.size();
        if !out.len().is_multiple_of(size) {
            return Err(Error::CorruptChunk(format!(
                "pcodec: a chunk of {} bytes is not whole numbers",
                out.len()
            )));
        }
        let progress = self.decompress(input, out)?;
        let count = out.len() / size;
        if progress.n_processed != count || !progress.finished {
            let held = match progress.finished {
                true => progress.n_processed.to_string(),
                false => "more".to_string(),
            };
            return Err(Error::CorruptChunk(format!(
                "pcodec: the data holds {held} numbers, not the {count} of the chunk"
            )));
        }
        Ok(())
    }

    fn decode_to_vec(&self, input: &[u8], max_len: usize) -> Result<Vec<u8>> {
        // The count is in the stream: decode up to the most that may come, keep what came.
        let size = self.element.size();
        let mut out = vec![0u8; max_len / size * size];
        let progress = self.decompress(input, &mut out)?;
        if !progress.finished {
            return Err(Error::CorruptChunk(format!(
                "pcodec: the data holds more than the {} numbers expected",
                max_len / size
            )));
        }
        out.truncate(progress.n_processed * size);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` numbers of the type `typestr` with some structure (little-endian, as x86-64 holds
    /// them).
    fn sample(typestr: &str, n: u32) -> Vec<u8> {
        (0..n)
            .flat_map(|i| {
                let v = i64::from(i * 37 % 1001) - 500;
                match typestr {
                    "<u2" => (v as u16).to_le_bytes().to_vec(),
                    "<i2" => (v as i16).to_le_bytes().to_vec(),
                    "<f2" => half::f16::from_f64(v as f64 / 8.0).to_le_bytes().to_vec(),
                    "<u4" => (v as u32).to_le_bytes().to_vec(),
                    "<i4" => (v as i32).to_le_bytes().to_vec(),
                    "<f4" => (v as f32 / 3.0).to_le_bytes().to_vec(),
                    "<u8" => (v as u64).to_le_bytes().to_vec(),
                    "<i8" => v.to_le_bytes().to_vec(),
                    _ => (v as f64 / 7.0).to_le_bytes().to_vec(),
                }
            })
            .collect()
    }

    fn codec(config: Value, elem: &str) -> Result<Pcodec> {
        let elem = ElemType::parse(elem).unwrap();
        Pcodec::from_config(config.as_object().unwrap(), Some(&elem))
    }

    /// Every element type round trips; the stream is pco's standalone format ("pco!").
    #[test]
    fn round_trips_every_type() {
        for (typestr, size) in [
            ("<u2", 2),
            ("<i2", 2),
            ("<f2", 2),
            ("<u4", 4),
            ("<i4", 4),
            ("<f4", 4),
            ("<u8", 8),
            ("<i8", 8),
            ("<f8", 8),
        ] {
            let c = codec(json!({"id": "pcodec"}), typestr).unwrap();
            let raw = sample(typestr, 1000);
            let encoded = c.encode(&raw).unwrap();
            assert!(encoded.starts_with(b"pco!"), "{typestr}");
            let mut back = vec![0u8; raw.len()];
            c.decode_into(&encoded, &mut back).unwrap();
            assert_eq!(back, raw, "{typestr}");
            assert_eq!(c.decode_to_vec(&encoded, raw.len() + 64).unwrap(), raw);
            // Another count than the chunk's is a corrupt chunk, never a partial read.
            let mut short = vec![0u8; raw.len() - size];
            assert!(matches!(
                c.decode_into(&encoded, &mut short),
                Err(Error::CorruptChunk(_))
            ));
            assert!(c.decode_to_vec(&encoded, raw.len() - size).is_err());
            let mut long = vec![0u8; raw.len() + size];
            assert!(c.decode_into(&encoded, &mut long).is_err());
        }
    }

    #[test]
    fn refuses_other_types_and_bad_settings() {
        for typestr in ["|u1", "|i1", ">i4", "<c8", "|b1"] {
            let err = codec(json!({"id": "pcodec"}), typestr).unwrap_err();
            assert!(matches!(err, Error::Unsupported(_)), "{typestr}: {err}");
        }
        for (config, key) in [
            (json!({"level": 13}), "level"),
            (json!({"mode_spec": "float_mult"}), "mode_spec"),
            (json!({"delta_spec": "conv1"}), "delta_spec"),
            (
                json!({"delta_spec": "no_op", "delta_encoding_order": 2}),
                "delta_encoding_order",
            ),
            (json!({"equal_pages_up_to": 0}), "equal_pages_up_to"),
        ] {
            let err = codec(config, "<i4").unwrap_err();
            assert!(err.to_string().contains(key), "{key}: {err}");
        }
        let garbage = codec(json!({}), "<i4")
            .unwrap()
            .decode_to_vec(b"pco!xx", 64);
        assert!(matches!(garbage, Err(Error::CorruptChunk(_))));
    }
}
