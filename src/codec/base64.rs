//! numcodecs `Base64`: the bytes as standard base64 text (RFC 4648 alphabet, `=` padding), as
//! Python's `base64.standard_b64encode` writes them; a compressor that makes data bigger, for
//! stores that hold text only.

use super::Codec;
use crate::error::{Error, Result};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde_json::{json, Map, Value};

/// The numcodecs `Base64` codec: `{"id": "base64"}`, no parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Base64;

impl Base64 {
    /// The codec of a configuration (numcodecs' `Base64` has no parameters).
    pub fn from_config(_obj: &Map<String, Value>) -> Result<Self> {
        Ok(Base64)
    }

    /// The length `input` decodes to, checked before decoding: at most `max_len` bytes.
    fn decoded_len(input: &[u8], max_len: usize) -> Result<usize> {
        let padding = input.iter().rev().take(2).filter(|&&c| c == b'=').count();
        let len = (input.len() / 4 * 3).saturating_sub(padding);
        if !input.len().is_multiple_of(4) {
            return Err(Error::CorruptChunk(format!(
                "base64: {} bytes of text are not a whole number of 4-character groups",
                input.len()
            )));
        }
        if len > max_len {
            return Err(Error::CorruptChunk(format!(
                "base64: the text decodes to {len} bytes, more than the {max_len} expected"
            )));
        }
        Ok(len)
    }
}

impl Codec for Base64 {
    fn id(&self) -> &'static str {
        "base64"
    }

    fn config(&self) -> Value {
        json!({"id": "base64"})
    }

    fn encode(&self, input: &[u8]) -> Result<Vec<u8>> {
        Ok(STANDARD.encode(input).into_bytes())
    }

    fn decode_into(&self, input: &[u8], out: &mut [u8]) -> Result<()> {
        let len = Self::decoded_len(input, out.len())?;
        if len != out.len() {
            return Err(Error::CorruptChunk(format!(
                "base64: the text decodes to {len} bytes, not the {} of a chunk",
                out.len()
            )));
        }
        STANDARD
            .decode_slice(input, out)
            .map_err(|e| Error::CorruptChunk(format!("base64: {e}")))
            .map(drop)
    }

    fn decode_to_vec(&self, input: &[u8], max_len: usize) -> Result<Vec<u8>> {
        let mut out = vec![0u8; Self::decoded_len(input, max_len)?];
        self.decode_into(input, &mut out)?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text Python's `base64.standard_b64encode` gives, and back.
    #[test]
    fn encodes_as_python_does() {
        let codec = Base64;
        for (raw, text) in [
            (&b""[..], ""),
            (b"f", "Zg=="),
            (b"fo", "Zm8="),
            (b"foo", "Zm9v"),
            (b"\xff\xfe\x00\x01", "//4AAQ=="),
        ] {
            assert_eq!(codec.encode(raw).unwrap(), text.as_bytes());
            let mut out = vec![0u8; raw.len()];
            codec.decode_into(text.as_bytes(), &mut out).unwrap();
            assert_eq!(out, raw);
            assert_eq!(codec.decode_to_vec(text.as_bytes(), 8).unwrap(), raw);
        }
    }

    /// Text that is not base64, or decodes to another size, is a corrupt chunk.
    #[test]
    fn refuses_bad_text_and_sizes() {
        let codec = Base64;
        let mut four = [0u8; 4];
        for bad in [&b"Zm9"[..], b"Zm9v!A==", b"Zm9vZm9v"] {
            let err = codec.decode_into(bad, &mut four).unwrap_err();
            assert!(matches!(err, Error::CorruptChunk(_)), "{err}");
            assert!(err.to_string().contains("base64"), "{err}");
        }
        let err = codec.decode_to_vec(b"Zm9vZm9v", 5).unwrap_err();
        assert!(err.to_string().contains("more than the 5"), "{err}");
    }
}
