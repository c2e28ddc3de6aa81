//! The options of the copies with zarr-python 2's choices (`copy_store`, `copy`, `copy_all`),
//! read from a JSON object: what to do with what the destination already holds, dry runs, and
//! for key copies the keys to leave out; unknown members and values of the wrong type are
//! errors naming the option.

use super::key_filter::KeyFilter;
use crate::error::{Error, Result};
use serde_json::{Map, Value};

/// What a copy does where the destination already holds what it would write (zarr-python 2's
/// `if_exists`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IfExists {
    /// Refuse the copy (`"raise"`, the default).
    #[default]
    Raise,
    /// Overwrite (`"replace"`).
    Replace,
    /// Leave it and go on (`"skip"`).
    Skip,
    /// Node copies: leave arrays whose every chunk is stored, replace the others
    /// (`"skip_initialized"`).
    SkipInitialized,
}

impl IfExists {
    fn parse(value: &Value, allowed: &[&str]) -> Result<IfExists> {
        let name = value.as_str().filter(|v| allowed.contains(v));
        match name {
            Some("raise") => Ok(IfExists::Raise),
            Some("replace") => Ok(IfExists::Replace),
            Some("skip") => Ok(IfExists::Skip),
            Some("skip_initialized") => Ok(IfExists::SkipInitialized),
            _ => Err(Error::InvalidArgument(format!(
                "option \"if_exists\" must be one of {}; got {value}",
                allowed
                    .iter()
                    .map(|a| format!("\"{a}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }
}

/// The options of a key copy (`zarr_store_copy_options`, zarr-python 2's `copy_store`).
#[derive(Debug, Default)]
pub struct StoreCopyOptions {
    /// What to do with a destination key that exists: raise, replace or skip.
    pub if_exists: IfExists,
    /// Decide and report, but write nothing.
    pub dry_run: bool,
    /// The source keys to copy.
    pub filter: KeyFilter,
}

impl StoreCopyOptions {
    /// Reads `{"if_exists": "raise" | "replace" | "skip", "dry_run": bool, "excludes": [..],
    /// "includes": [..], "flags": int}` (every member optional; `None`: the defaults).
    pub fn parse(json: Option<&str>) -> Result<StoreCopyOptions> {
        let mut options = StoreCopyOptions::default();
        let Some(members) = object(json)? else {
            return Ok(options);
        };
        let (mut excludes, mut includes, mut flags) = (Vec::new(), Vec::new(), 0);
        for (key, value) in &members {
            match key.as_str() {
                "if_exists" => {
                    options.if_exists = IfExists::parse(value, &["raise", "replace", "skip"])?
                }
                "dry_run" => options.dry_run = boolean(key, value)?,
                "excludes" => excludes = patterns(key, value)?,
                "includes" => includes = patterns(key, value)?,
                "flags" => {
                    flags = value.as_u64().ok_or_else(|| {
                        Error::InvalidArgument(format!(
                            "option \"flags\" must be a non-negative integer (Python's re flags), got {value}"
                        ))
                    })?
                }
                other => return Err(unknown(other, STORE_KEYS)),
            }
        }
        options.filter = KeyFilter::new(&excludes, &includes, flags)?;
        Ok(options)
    }
}

/// The options of a node copy (`zarr_node_copy`, zarr-python 2's `copy` and `copy_all`).
#[derive(Debug, Default)]
pub struct NodeCopyOptions {
    /// What to do with an array (or, for groups, an array in the way) at a destination path.
    pub if_exists: IfExists,
    /// Decide and report, but write nothing.
    pub dry_run: bool,
    /// Copy a group's direct arrays only: no member group, nothing deeper.
    pub shallow: bool,
    /// Copy no user attributes.
    pub without_attrs: bool,
    /// Copy every member of the source group into the destination group (`copy_all`) rather
    /// than the source node itself to the destination path.
    pub copy_all: bool,
    /// Metadata changes for every array copied, as `zarr_array_copy_to` takes them (JSON text
    /// of an object).
    pub overrides: String,
}

impl NodeCopyOptions {
    /// Reads `{"if_exists": "raise" | "replace" | "skip" | "skip_initialized", "dry_run": bool,
    /// "shallow": bool, "without_attrs": bool, "copy_all": bool, "overrides": {..}}` (every
    /// member optional; `None`: the defaults).
    pub fn parse(json: Option<&str>) -> Result<NodeCopyOptions> {
        let mut options = NodeCopyOptions {
            overrides: "{}".into(),
            ..NodeCopyOptions::default()
        };
        let Some(members) = object(json)? else {
            return Ok(options);
        };
        for (key, value) in &members {
            match key.as_str() {
                "if_exists" => {
                    options.if_exists = IfExists::parse(
                        value,
                        &["raise", "replace", "skip", "skip_initialized"],
                    )?
                }
                "dry_run" => options.dry_run = boolean(key, value)?,
                "shallow" => options.shallow = boolean(key, value)?,
                "without_attrs" => options.without_attrs = boolean(key, value)?,
                "copy_all" => options.copy_all = boolean(key, value)?,
                "overrides" => match value {
                    Value::Object(_) => options.overrides = value.to_string(),
                    _ => {
                        return Err(Error::InvalidArgument(format!(
                            "option \"overrides\" must be a JSON object of array metadata changes, got {value}"
                        )))
                    }
                },
                other => return Err(unknown(other, NODE_KEYS)),
            }
        }
        Ok(options)
    }
}

const STORE_KEYS: &[&str] = &["if_exists", "dry_run", "excludes", "includes", "flags"];
const NODE_KEYS: &[&str] = &[
    "if_exists",
    "dry_run",
    "shallow",
    "without_attrs",
    "copy_all",
    "overrides",
];

/// The members of the options object (`None` for no options).
fn object(json: Option<&str>) -> Result<Option<Map<String, Value>>> {
    let Some(json) = json else {
        return Ok(None);
    };
    match serde_json::from_str(json) {
        Ok(Value::Object(members)) => Ok(Some(members)),
        Ok(other) => Err(Error::InvalidArgument(format!(
            "copy options must be a JSON object, got {other}"
        ))),
        Err(e) => Err(Error::InvalidArgument(format!(
            "copy options are not valid JSON: {e}"
        ))),
    }
}

fn boolean(key: &str, value: &Value) -> Result<bool> {
    value.as_bool().ok_or_else(|| {
        Error::InvalidArgument(format!("option {key:?} must be true or false, got {value}"))
    })
}

/// A pattern or a list of patterns (zarr-python takes a string for a list of one).
fn patterns(key: &str, value: &Value) -> Result<Vec<String>> {
    let wrong = || {
        Error::InvalidArgument(format!(
            "option {key:?} must be a regular expression or a list of them, got {value}"
        ))
    };
    match value {
        Value::String(one) => Ok(vec![one.clone()]),
        Value::Array(items) => items
            .iter()
            .map(|item| item.as_str().map(str::to_string).ok_or_else(wrong))
            .collect(),
        _ => Err(wrong()),
    }
}

fn unknown(key: &str, known: &[&str]) -> Error {
    Error::InvalidArgument(format!(
        "unknown copy option {key:?} (the options are {})",
        known.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store_err(json: &str) -> String {
        StoreCopyOptions::parse(Some(json)).unwrap_err().to_string()
    }

    fn node_err(json: &str) -> String {
        NodeCopyOptions::parse(Some(json)).unwrap_err().to_string()
    }

    #[test]
    fn store_options_default_and_parse() {
        let none = StoreCopyOptions::parse(None).unwrap();
        assert_eq!((none.if_exists, none.dry_run), (IfExists::Raise, false));
        assert!(none.filter.accepts("anything"));
        let empty = StoreCopyOptions::parse(Some("{}")).unwrap();
        assert_eq!(empty.if_exists, IfExists::Raise);
        let o = StoreCopyOptions::parse(Some(
            r#"{"if_exists": "skip", "dry_run": true, "excludes": "^a/", "includes": ["a/b"], "flags": 2}"#,
        ))
        .unwrap();
        assert_eq!((o.if_exists, o.dry_run), (IfExists::Skip, true));
        assert!(!o.filter.accepts("A/x"), "IGNORECASE");
        assert!(o.filter.accepts("a/B/c"));
        assert!(o.filter.accepts("b/a"));
        let r = StoreCopyOptions::parse(Some(r#"{"if_exists": "replace"}"#)).unwrap();
        assert_eq!(r.if_exists, IfExists::Replace);
    }

    #[test]
    fn store_options_errors_name_the_option() {
        for (json, want) in [
            (
                r#"{"if_exist": "skip"}"#,
                "unknown copy option \"if_exist\"",
            ),
            (
                r#"{"if_exists": "skip_initialized"}"#,
                "\"if_exists\" must be one of",
            ),
            (r#"{"if_exists": 1}"#, "\"if_exists\""),
            (r#"{"dry_run": "yes"}"#, "\"dry_run\" must be true or false"),
            (
                r#"{"excludes": 3}"#,
                "\"excludes\" must be a regular expression",
            ),
            (r#"{"includes": ["a", 1]}"#, "\"includes\" must be"),
            (r#"{"flags": -1}"#, "\"flags\""),
            (r#"{"excludes": ["(?<=a)b"]}"#, "look-around"),
            ("[1]", "must be a JSON object"),
            ("{", "not valid JSON"),
        ] {
            let err = store_err(json);
            assert!(err.contains(want), "{json}: {err}");
        }
    }

    #[test]
    fn node_options_default_and_parse() {
        let none = NodeCopyOptions::parse(None).unwrap();
        assert_eq!(none.overrides, "{}");
        assert!(!none.shallow && !none.without_attrs && !none.copy_all && !none.dry_run);
        let o = NodeCopyOptions::parse(Some(
            r#"{"if_exists": "skip_initialized", "dry_run": true, "shallow": true,
                "without_attrs": true, "copy_all": true, "overrides": {"chunks": [3]}}"#,
        ))
        .unwrap();
        assert_eq!(o.if_exists, IfExists::SkipInitialized);
        assert!(o.shallow && o.without_attrs && o.copy_all && o.dry_run);
        assert_eq!(o.overrides, r#"{"chunks":[3]}"#);
    }

    #[test]
    fn node_options_errors_name_the_option() {
        for (json, want) in [
            (r#"{"excludes": []}"#, "unknown copy option \"excludes\""),
            (
                r#"{"if_exists": "overwrite"}"#,
                "\"if_exists\" must be one of",
            ),
            (r#"{"shallow": 1}"#, "\"shallow\" must be true or false"),
            (r#"{"without_attrs": null}"#, "\"without_attrs\""),
            (r#"{"copy_all": "no"}"#, "\"copy_all\""),
            (
                r#"{"overrides": "{}"}"#,
                "\"overrides\" must be a JSON object",
            ),
            ("3", "must be a JSON object"),
        ] {
            let err = node_err(json);
            assert!(err.contains(want), "{json}: {err}");
        }
    }
}
