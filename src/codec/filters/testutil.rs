//! Test helpers shared by the filter files.

use super::numeric::ElemType;
use crate::codec::filter::{build, Filter};
use crate::error::{Error, Result};
use serde_json::Value;

pub use crate::codec::testutil::{sample, unhex};

/// Builds a filter for input of the NumPy type `input`.
pub fn filter(config: Value, input: &str) -> Result<Box<dyn Filter>> {
    let input = ElemType::parse(input).expect("a type string");
    build(&config, &input).map(|(f, _)| f)
}

/// Builds a filter that must be valid.
pub fn ok(config: Value, input: &str) -> Box<dyn Filter> {
    filter(config.clone(), input).unwrap_or_else(|e| panic!("{config}: {e}"))
}

/// The type string of what a filter built for `input` encodes to.
pub fn output_type(config: Value, input: &str) -> String {
    let input = ElemType::parse(input).expect("a type string");
    build(&config, &input).expect("a valid filter").1.typestr()
}

/// Encodes, checks the encoded length against `encoded_len`, decodes and returns both.
pub fn round_trip(f: &dyn Filter, input: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let enc = f.encode(input).unwrap();
    assert_eq!(f.encoded_len(input.len()), Some(enc.len()), "{f:?}");
    let dec = f.decode(&enc, input.len()).unwrap();
    (enc, dec)
}

/// Asserts that `result` is [`Error::CorruptChunk`] naming `id`.
pub fn assert_corrupt<T: std::fmt::Debug>(result: Result<T>, id: &str) {
    match result {
        Err(Error::CorruptChunk(m)) => assert!(m.contains(id), "{m}"),
        other => panic!("{id}: expected CorruptChunk, got {other:?}"),
    }
}

/// Asserts that building `config` for input `input` is [`Error::InvalidMetadata`] naming
/// `key` and the filter id.
pub fn assert_invalid(config: Value, input: &str, key: &str) {
    let id = config["id"].as_str().unwrap_or_default().to_string();
    match filter(config.clone(), input) {
        Err(Error::InvalidMetadata(m)) => {
            assert!(m.contains(key) && m.contains(&id), "{config}: {m}");
        }
        other => panic!("{config}: expected InvalidMetadata, got {other:?}"),
    }
}

/// Little-endian bytes of `i32` values.
pub fn i4(values: &[i32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Little-endian bytes of `f64` values.
pub fn f8(values: &[f64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Little-endian bytes of `f32` values.
pub fn f4(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}
