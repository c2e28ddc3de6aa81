//! Kerchunk reference files in JSON (<https://fsspec.github.io/kerchunk/spec.html>): what each
//! key of a Zarr store is, as text or bytes held in the file, or as a byte range of another
//! file (the target). Version 0 is a bare `{key: value}` object; version 1 is
//! `{"version": 1, "templates": {...}, "gen": [...], "refs": {...}}`, where `{{name}}` in a
//! target URL stands for a template and `gen` entries make many references from ranges of
//! integers, with Jinja-style expressions (`{{i * 1000}}`) in their key, URL, offset and length.

use crate::error::{Error, Result};
use crate::path;
use base64::Engine;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// What a key holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reference {
    /// The value itself, held in the reference file (text, or bytes given as `base64:...`).
    Inline(Vec<u8>),
    /// A whole target file: `[url]`.
    Whole(String),
    /// `length` bytes of a target file from `offset` on: `[url, offset, length]`.
    Range {
        /// The target file's URL or path, templates expanded.
        url: String,
        /// Where the bytes start.
        offset: u64,
        /// How many bytes.
        length: u64,
    },
}

/// The most references `gen` entries may make (each product of dimension ranges is one).
const MOST_GENERATED: u64 = 4_000_000;

/// Reads a reference file's text (`name` says which, in messages) into its references by key.
pub fn parse(bytes: &[u8], name: &str) -> Result<BTreeMap<String, Reference>> {
    let bad = |why: String| Error::InvalidMetadata(format!("{name}: {why}"));
    let value: Value = serde_json::from_slice(bytes)
        .map_err(|e| bad(format!("not a Kerchunk reference file (JSON): {e}")))?;
    let Value::Object(top) = value else {
        return Err(bad(
            "not a Kerchunk reference file: not a JSON object".into()
        ));
    };
    let mut references = BTreeMap::new();
    let Some(version) = top.get("version") else {
        // Version 0: every member is a key.
        for (key, value) in &top {
            insert(
                &mut references,
                key,
                reference(key, value, &Map::new(), &bad)?,
                &bad,
            )?;
        }
        return Ok(references);
    };
    if version != &Value::from(1) {
        return Err(Error::Unsupported(format!(
            "{name}: Kerchunk reference version {version} (versions 0 and 1 are known)"
        )));
    }
    if let Some(unknown) = top
        .keys()
        .find(|k| !["version", "templates", "gen", "refs"].contains(&k.as_str()))
    {
        return Err(bad(format!("unknown member {unknown:?}")));
    }
    let templates = match top.get("templates") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(t)) if t.values().all(Value::is_string) => t.clone(),
        Some(_) => return Err(bad("\"templates\" must map names to strings".into())),
    };
    match top.get("refs") {
        None => {}
        Some(Value::Object(refs)) => {
            for (key, value) in refs {
                let made = reference(key, value, &templates, &bad)?;
                insert(&mut references, key, made, &bad)?;
            }
        }
        Some(_) => return Err(bad("\"refs\" must be a JSON object".into())),
    }
    match top.get("gen") {
        None | Some(Value::Null) => {}
        Some(Value::Array(entries)) => {
            for (i, entry) in entries.iter().enumerate() {
                let bad = |why: String| bad(format!("\"gen\" entry {i}: {why}"));
                generate(entry, &templates, &mut references, &bad)?;
            }
        }
        Some(_) => return Err(bad("\"gen\" must be a JSON array".into())),
    }
    Ok(references)
}

/// Adds a reference under `key`, which must be a valid store key.
fn insert(
    references: &mut BTreeMap<String, Reference>,
    key: &str,
    reference: Reference,
    bad: &dyn Fn(String) -> Error,
) -> Result<()> {
    path::validate_key(key).map_err(|_| bad(format!("{key:?} is not a store key")))?;
    references.insert(key.to_string(), reference);
    Ok(())
}

/// The reference a value of `refs` gives: a string (text, or `base64:` bytes), a JSON object
/// (a document, kept as its JSON text), `[url]` or `[url, offset, length]`.
fn reference(
    key: &str,
    value: &Value,
    templates: &Map<String, Value>,
    bad: &dyn Fn(String) -> Error,
) -> Result<Reference> {
    let bad = |why: &str| bad(format!("the reference of {key:?} {why}"));
    match value {
        Value::String(text) => match text.strip_prefix("base64:") {
            Some(encoded) => base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .map(Reference::Inline)
                .map_err(|e| bad(&format!("is not valid base64 ({e})"))),
            None => Ok(Reference::Inline(text.as_bytes().to_vec())),
        },
        Value::Object(_) => Ok(Reference::Inline(value.to_string().into_bytes())),
        Value::Array(parts) => {
            let url = match parts.first() {
                Some(Value::String(url)) => expand(url, &|name| {
                    templates.get(name).and_then(Value::as_str).map(Word::Text)
                })
                .map_err(|why| bad(&format!("has a URL {url:?} that {why}")))?,
                _ => return Err(bad("must start with the target's URL")),
            };
            match parts.as_slice() {
                [_] => Ok(Reference::Whole(url)),
                [_, offset, length] => match (offset.as_u64(), length.as_u64()) {
                    (Some(offset), Some(length)) => Ok(Reference::Range {
                        url,
                        offset,
                        length,
                    }),
                    _ => Err(bad("needs an offset and a length that are whole numbers")),
                },
                _ => Err(bad("must be [url] or [url, offset, length]")),
            }
        }
        _ => Err(bad("must be a string, [url] or [url, offset, length]")),
    }
}

/// Adds the references a `gen` entry makes: one for each combination of its dimensions'
/// values (the first dimension varying slowest, as `itertools.product`).
fn generate(
    entry: &Value,
    templates: &Map<String, Value>,
    references: &mut BTreeMap<String, Reference>,
    bad: &dyn Fn(String) -> Error,
) -> Result<()> {
    let Value::Object(entry) = entry else {
        return Err(bad("not a JSON object".into()));
    };
    let text = |name: &str| -> Result<Option<String>> {
        match entry.get(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(Value::Number(n)) => Ok(Some(n.to_string())),
            Some(_) => Err(bad(format!("{name:?} must be a string"))),
        }
    };
    let (Some(key), Some(url)) = (text("key")?, text("url")?) else {
        return Err(bad("needs \"key\" and \"url\"".into()));
    };
    let (offset, length) = (text("offset")?, text("length")?);
    if offset.is_some() != length.is_some() {
        return Err(bad(
            "gives one of \"offset\" and \"length\" without the other".into(),
        ));
    }
    let Some(Value::Object(dimensions)) = entry.get("dimensions") else {
        return Err(bad("needs \"dimensions\", a JSON object".into()));
    };
    let mut names = Vec::new();
    let mut ranges = Vec::new();
    let mut total: u64 = 1;
    for (name, spec) in dimensions {
        let values = dimension_values(spec)
            .ok_or_else(|| bad(format!("dimension {name:?} must be a list of integers or {{\"start\", \"stop\", \"step\"}}")))?;
        total = total.saturating_mul(values.len() as u64);
        names.push(name.as_str());
        ranges.push(values);
    }
    if total > MOST_GENERATED {
        return Err(Error::TooLarge(format!(
            "{}: makes {total} references (at most {MOST_GENERATED})",
            bad(String::new())
        )));
    }
    let mut at = vec![0usize; ranges.len()];
    for _ in 0..total {
        let lookup = |name: &str| match names.iter().position(|n| *n == name) {
            Some(d) => Some(Word::Number(ranges[d][at[d]])),
            None => templates.get(name).and_then(Value::as_str).map(Word::Text),
        };
        let render = |text: &str, what: &str| {
            expand(text, &lookup).map_err(|why| bad(format!("{what} {text:?} {why}")))
        };
        let made_key = render(&key, "key")?;
        let made_url = render(&url, "url")?;
        let made = match (&offset, &length) {
            (Some(offset), Some(length)) => {
                let number = |text: &str, what: &str| {
                    let rendered = render(text, what)?;
                    rendered.trim().parse::<u64>().map_err(|_| {
                        bad(format!(
                            "{what} {text:?} gives {rendered:?}, not a whole number"
                        ))
                    })
                };
                Reference::Range {
                    url: made_url,
                    offset: number(offset, "offset")?,
                    length: number(length, "length")?,
                }
            }
            _ => Reference::Whole(made_url),
        };
        insert(references, &made_key, made, bad)?;
        // The next combination: the last dimension varies fastest.
        for d in (0..at.len()).rev() {
            at[d] += 1;
            if at[d] < ranges[d].len() {
                break;
            }
            at[d] = 0;
        }
    }
    Ok(())
}

/// A dimension's values: a list of integers, or `{"start": 0, "stop": N, "step": 1}` as
/// Python's `range` (start and step optional).
fn dimension_values(spec: &Value) -> Option<Vec<i64>> {
    match spec {
        Value::Array(values) => values.iter().map(Value::as_i64).collect(),
        Value::Object(range) => {
            let get = |name: &str, default: i64| match range.get(name) {
                None => Some(default),
                Some(v) => v.as_i64(),
            };
            let (start, stop, step) = (
                get("start", 0)?,
                range.get("stop")?.as_i64()?,
                get("step", 1)?,
            );
            if step == 0 {
                return None;
            }
            let count = if step > 0 {
                (stop - start).max(0).checked_add(step - 1)? / step
            } else {
                (start - stop).max(0).checked_add(-step - 1)? / -step
            };
            if count as u64 > MOST_GENERATED {
                return None;
            }
            Some((0..count).map(|i| start + i * step).collect())
        }
        _ => None,
    }
}

/// What a name in a template stands for.
#[derive(Clone, Copy)]
enum Word<'a> {
    Text(&'a str),
    Number(i64),
}

/// `text` with each `{{ expression }}` replaced by its value; `lookup` gives the names'. An
/// expression is a name, or integer arithmetic (`+ - * // % /` and parentheses) over numbers
/// and names standing for numbers. Returns why not, for the caller's message.
fn expand<'a>(
    text: &str,
    lookup: &dyn Fn(&str) -> Option<Word<'a>>,
) -> std::result::Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find("{{") {
        out.push_str(&rest[..open]);
        let after = &rest[open + 2..];
        let close = after.find("}}").ok_or("has \"{{\" without \"}}\"")?;
        let expression = after[..close].trim();
        match lookup(expression) {
            Some(Word::Text(t)) => out.push_str(t),
            Some(Word::Number(n)) => out.push_str(&n.to_string()),
            None => out.push_str(&Arithmetic::evaluate(expression, lookup)?.to_string()),
        }
        rest = &after[close + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

/// A small evaluator of integer arithmetic, for `gen` expressions.
struct Arithmetic<'t, 'a> {
    tokens: Vec<&'t str>,
    at: usize,
    lookup: &'t dyn Fn(&str) -> Option<Word<'a>>,
}

impl<'t, 'a> Arithmetic<'t, 'a> {
    fn evaluate(
        expression: &'t str,
        lookup: &'t dyn Fn(&str) -> Option<Word<'a>>,
    ) -> std::result::Result<i64, String> {
        let mut tokens = Vec::new();
        let mut rest = expression.trim_start();
        while !rest.is_empty() {
            let len = if rest.starts_with("//") {
                2
            } else if rest.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
                rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(rest.len())
            } else if rest.starts_with(['+', '-', '*', '/', '%', '(', ')']) {
                1
            } else {
                return Err(format!(
                    "has {expression:?}, which is not integer arithmetic"
                ));
            };
            tokens.push(&rest[..len]);
            rest = rest[len..].trim_start();
        }
        let mut parser = Arithmetic {
            tokens,
            at: 0,
            lookup,
        };
        let value = parser.sum(0)?;
        if parser.at != parser.tokens.len() {
            return Err(format!(
                "has {expression:?}, which is not integer arithmetic"
            ));
        }
        value.ok_or_else(|| format!("has {expression:?}, which overflows"))
    }

    fn next_is(&mut self, token: &str) -> bool {
        let found = self.tokens.get(self.at) == Some(&token);
        self.at += usize::from(found);
        found
    }

    fn sum(&mut self, depth: usize) -> std::result::Result<Option<i64>, String> {
        let mut value = self.product(depth)?;
        loop {
            if self.next_is("+") {
                let right = self.product(depth)?;
                value = value.zip(right).and_then(|(a, b)| a.checked_add(b));
            } else if self.next_is("-") {
                let right = self.product(depth)?;
                value = value.zip(right).and_then(|(a, b)| a.checked_sub(b));
            } else {
                return Ok(value);
            }
        }
    }

    fn product(&mut self, depth: usize) -> std::result::Result<Option<i64>, String> {
        let mut value = self.factor(depth)?;
        loop {
            let op = ["*", "//", "/", "%"]
                .into_iter()
                .find(|op| self.next_is(op));
            let Some(op) = op else {
                return Ok(value);
            };
            let right = self.factor(depth)?;
            value = match (value, right) {
                (Some(a), Some(b)) => match op {
                    "*" => a.checked_mul(b),
                    "//" if b != 0 => Some(a.div_euclid(b)),
                    "/" if b != 0 && a % b == 0 => Some(a / b),
                    "/" if b != 0 => {
                        return Err(format!("divides {a} by {b}, which is not a whole number"))
                    }
                    "%" if b != 0 => Some(a.rem_euclid(b)),
                    _ => return Err("divides by zero".into()),
                },
                _ => None,
            };
        }
    }

    fn factor(&mut self, depth: usize) -> std::result::Result<Option<i64>, String> {
        if depth > 64 {
            return Err("nests parentheses too deeply".into());
        }
        if self.next_is("-") {
            return Ok(self.factor(depth + 1)?.and_then(i64::checked_neg));
        }
        if self.next_is("(") {
            let value = self.sum(depth + 1)?;
            return if self.next_is(")") {
                Ok(value)
            } else {
                Err("has an unclosed parenthesis".into())
            };
        }
        let Some(token) = self.tokens.get(self.at).copied() else {
            return Err("ends too soon".into());
        };
        self.at += 1;
        if let Ok(n) = token.parse::<i64>() {
            return Ok(Some(n));
        }
        match (self.lookup)(token) {
            Some(Word::Number(n)) => Ok(Some(n)),
            Some(Word::Text(_)) => Err(format!("computes with {token:?}, which is text")),
            None => Err(format!(
                "names {token:?}, which is neither a template nor a dimension"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> Result<BTreeMap<String, Reference>> {
        parse(text.as_bytes(), "refs.json")
    }

    fn range(url: &str, offset: u64, length: u64) -> Reference {
        Reference::Range {
            url: url.into(),
            offset,
            length,
        }
    }

    #[test]
    fn reads_version_0_and_1_with_templates_and_inline_values() {
        let v0 = parsed(r#"{".zgroup": "{\"zarr_format\": 2}", "a/0": ["/d/f.h5", 8, 4], "a/1": "base64:AAEC", "b/0": ["s3://b/x"]}"#).unwrap();
        assert_eq!(
            v0[".zgroup"],
            Reference::Inline(br#"{"zarr_format": 2}"#.to_vec())
        );
        assert_eq!(v0["a/0"], range("/d/f.h5", 8, 4));
        assert_eq!(v0["a/1"], Reference::Inline(vec![0, 1, 2]));
        assert_eq!(v0["b/0"], Reference::Whole("s3://b/x".into()));
        let v1 = parsed(
            r#"{"version": 1, "templates": {"u": "https://h/data.nc"}, "refs": {"a/.zarray": {"shape": [2]}, "a/0": ["{{u}}", 0, 10], "a/1": ["{{ u }}?x", 10, 10]}}"#,
        )
        .unwrap();
        assert_eq!(
            v1["a/.zarray"],
            Reference::Inline(br#"{"shape":[2]}"#.to_vec())
        );
        assert_eq!(v1["a/0"], range("https://h/data.nc", 0, 10));
        assert_eq!(v1["a/1"], range("https://h/data.nc?x", 10, 10));
    }

    #[test]
    fn gen_makes_references_from_ranges_as_fsspec_does() {
        let refs = parsed(
            r#"{"version": 1, "templates": {"u": "/d/raw.bin"}, "gen": [{"key": "a/{{i}}.{{j}}", "url": "{{u}}", "offset": "{{(i * 3 + j) * 16 + 8}}", "length": "16", "dimensions": {"i": {"stop": 2}, "j": [0, 1, 2]}}, {"key": "w/{{k}}", "url": "/d/w{{k}}", "dimensions": {"k": {"start": 4, "stop": 0, "step": -2}}}]}"#,
        )
        .unwrap();
        assert_eq!(refs.len(), 8);
        assert_eq!(refs["a/0.0"], range("/d/raw.bin", 8, 16));
        assert_eq!(refs["a/0.2"], range("/d/raw.bin", 40, 16));
        assert_eq!(refs["a/1.1"], range("/d/raw.bin", 72, 16));
        assert_eq!(refs["w/4"], Reference::Whole("/d/w4".into()));
        assert_eq!(refs["w/2"], Reference::Whole("/d/w2".into()));
        assert!(!refs.contains_key("w/0"));
    }

    #[test]
    fn arithmetic_follows_python() {
        let none = |_: &str| None;
        let eval = |e| Arithmetic::evaluate(e, &none);
        assert_eq!(eval("7 // 2"), Ok(3));
        assert_eq!(eval("-7 // 2"), Ok(-4));
        assert_eq!(eval("-7 % 3"), Ok(2));
        assert_eq!(eval("2 + 3 * (4 - 1)"), Ok(11));
        assert_eq!(eval("8 / 2"), Ok(4));
        assert!(eval("7 / 2").unwrap_err().contains("whole number"));
        assert!(eval("1 // 0").unwrap_err().contains("zero"));
        assert!(eval("9223372036854775807 + 1")
            .unwrap_err()
            .contains("overflows"));
        assert!(eval("i.upper()")
            .unwrap_err()
            .contains("not integer arithmetic"));
        assert!(eval("(1 + 2").unwrap_err().contains("parenthesis"));
        assert!(eval(&"(".repeat(100)).unwrap_err().contains("deeply"));
    }

    #[test]
    fn refuses_what_is_not_a_reference_naming_the_key() {
        for (text, words) in [
            ("[1, 2]", "not a JSON object"),
            ("{", "not a Kerchunk reference file"),
            (r#"{"version": 2, "refs": {}}"#, "version 2"),
            (r#"{"version": 1, "refs": {"a/0": 5}}"#, "\"a/0\""),
            (r#"{"version": 1, "refs": {"a/0": "base64:@@"}}"#, "base64"),
            (r#"{"a/0": ["/f", 1]}"#, "[url, offset, length]"),
            (r#"{"a/0": ["/f", -1, 2]}"#, "whole numbers"),
            (r#"{"a/0": [3, 1, 2]}"#, "URL"),
            (r#"{"../x": "t"}"#, "not a store key"),
            (r#"{"a/0": ["{{nope}}", 0, 1]}"#, "\"nope\""),
            (r#"{"version": 1, "extra": 1}"#, "unknown member"),
            (
                r#"{"version": 1, "gen": [{"key": "k{{i}}", "url": "u", "offset": "1", "dimensions": {"i": [0]}}]}"#,
                "without the other",
            ),
            (
                r#"{"version": 1, "gen": [{"key": "k{{i}}", "url": "u", "dimensions": {"i": {"stop": 1e20}}}]}"#,
                "dimension \"i\"",
            ),
            (
                r#"{"version": 1, "gen": [{"key": "k{{i}}.{{j}}", "url": "u", "dimensions": {"i": {"stop": 100000}, "j": {"stop": 100000}}}]}"#,
                "at most",
            ),
            (
                r#"{"version": 1, "gen": [{"key": "k{{i}}", "url": "u", "offset": "{{i/2}}", "length": "1", "dimensions": {"i": [1]}}]}"#,
                "offset",
            ),
        ] {
            let e = parsed(text).unwrap_err().to_string();
            assert!(e.contains(words), "{text}: {e}");
        }
    }
}
