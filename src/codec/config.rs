//! Reading the keys of a compressor's or filter's configuration object, with numcodecs'
//! defaults.

use crate::error::{Error, Result};
use serde_json::{Map, Value};
use std::fmt::Display;
use std::ops::RangeInclusive;

/// A compressor's or filter's `.zarray` configuration object, read key by key. Absent keys
/// take the numcodecs default; present keys of the wrong type or out of range are
/// [`Error::InvalidMetadata`] naming the key and the codec id. Unknown keys are ignored.
pub(super) struct Config<'a> {
    obj: &'a Map<String, Value>,
    id: &'static str,
    /// "compressor" or "filter", for messages.
    role: &'static str,
}

impl<'a> Config<'a> {
    /// Wraps the configuration object of the compressor `id`.
    pub(super) fn new(obj: &'a Map<String, Value>, id: &'static str) -> Self {
        Config {
            obj,
            id,
            role: "compressor",
        }
    }

    /// Wraps the configuration object of the filter `id`.
    pub(super) fn filter(obj: &'a Map<String, Value>, id: &'static str) -> Self {
        Config {
            obj,
            id,
            role: "filter",
        }
    }

    /// The error for key `key` whose value is not `expected`.
    pub(super) fn invalid(&self, key: &str, expected: impl Display) -> Error {
        let got = self.obj.get(key).unwrap_or(&Value::Null);
        Error::InvalidMetadata(format!(
            "{} {}: \"{key}\" must be {expected}, got {got}",
            self.id, self.role
        ))
    }

    /// The error for a configuration that is wrong as a whole rather than in one key.
    pub(super) fn error(&self, msg: impl Display) -> Error {
        Error::InvalidMetadata(format!("{} {}: {msg}", self.id, self.role))
    }

    /// The value of a key numcodecs requires (absent or `null` is an error).
    pub(super) fn required(&self, key: &str) -> Result<&'a Value> {
        self.opt_value(key)
            .ok_or_else(|| self.error(format_args!("missing required key \"{key}\"")))
    }

    /// An integer key within `range`, or `default` when absent.
    pub(super) fn int(&self, key: &str, default: i64, range: RangeInclusive<i64>) -> Result<i64> {
        match self.obj.get(key) {
            None => Ok(default),
            Some(v) => self.int_value(key, v, range),
        }
    }

    /// An integer key within `range`, or `None` when absent or `null`.
    pub(super) fn opt_int(&self, key: &str, range: RangeInclusive<i64>) -> Result<Option<i64>> {
        match self.opt_value(key) {
            None => Ok(None),
            Some(v) => self.int_value(key, v, range).map(Some),
        }
    }

    fn int_value(&self, key: &str, v: &Value, range: RangeInclusive<i64>) -> Result<i64> {
        match v.as_i64() {
            Some(n) if range.contains(&n) => Ok(n),
            _ => Err(self.invalid(key, format_args!("an integer in {range:?}"))),
        }
    }

    /// A boolean key, or `default` when absent.
    pub(super) fn bool(&self, key: &str, default: bool) -> Result<bool> {
        match self.obj.get(key) {
            None => Ok(default),
            Some(v) => v
                .as_bool()
                .ok_or_else(|| self.invalid(key, "true or false")),
        }
    }

    /// A string key, or `default` when absent.
    pub(super) fn str(&self, key: &str, default: &'a str) -> Result<&'a str> {
        match self.obj.get(key) {
            None => Ok(default),
            Some(v) => v.as_str().ok_or_else(|| self.invalid(key, "a string")),
        }
    }

    /// The value of `key`, or `None` when it is absent or `null`.
    pub(super) fn opt_value(&self, key: &str) -> Option<&'a Value> {
        self.obj.get(key).filter(|v| !v.is_null())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn reads_keys_with_defaults() {
        let o = obj(json!({"id": "x", "a": 3, "b": true, "c": "lz4", "n": null}));
        let c = Config::new(&o, "x");
        assert_eq!(c.int("a", 1, 0..=9).unwrap(), 3);
        assert_eq!(c.int("missing", 1, 0..=9).unwrap(), 1);
        assert_eq!(c.opt_int("n", 0..=9).unwrap(), None);
        assert!(c.bool("b", false).unwrap());
        assert!(!c.bool("missing", false).unwrap());
        assert_eq!(c.str("c", "zstd").unwrap(), "lz4");
        assert_eq!(c.str("missing", "zstd").unwrap(), "zstd");
        assert!(c.opt_value("n").is_none());
        assert_eq!(c.opt_value("a"), Some(&json!(3)));
    }

    #[test]
    fn rejects_bad_values_naming_key_and_codec() {
        let o = obj(json!({"a": 10, "f": 1.5, "s": "1", "b": 1, "t": 5, "n": null}));
        let c = Config::new(&o, "zlib");
        for err in [
            c.int("a", 1, 0..=9).unwrap_err(),
            c.int("f", 1, 0..=9).unwrap_err(),
            c.int("s", 1, 0..=9).unwrap_err(),
            c.int("n", 1, 0..=9).unwrap_err(),
            c.opt_int("a", 0..=9).unwrap_err(),
            c.bool("b", false).unwrap_err(),
            c.str("t", "x").unwrap_err(),
        ] {
            let msg = err.to_string();
            assert!(matches!(err, Error::InvalidMetadata(_)), "{msg}");
            assert!(msg.contains("zlib compressor: \""), "{msg}");
        }
    }
}
