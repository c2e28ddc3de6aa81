//! Which keys a key copy takes: zarr-python 2's `excludes` and `includes`, regular expressions
//! searched for anywhere in the source key (Python's `re.search`), an include overriding the
//! excludes.
//!
//! Patterns are compiled by the `regex` crate, whose syntax is Python's for everything a key
//! filter needs (classes, anchors, repetition, groups, alternation, inline flags such as
//! `(?i)`), but which matches in linear time and so has no look-around (`(?=`, `(?!`, `(?<=`,
//! `(?<!`) and no backreferences (`\1`, `(?P=name)`): these are refused with an error naming the
//! pattern. Other differences: `\Z` is written `\z`; `\d`, `\w` and `\s` are Unicode-aware as in
//! Python's `str` patterns.

use crate::error::{Error, Result};
use regex::{Regex, RegexBuilder};

/// Python's `re` flag bits this filter honours, and how.
const IGNORECASE: u64 = 2;
const MULTILINE: u64 = 8;
const DOTALL: u64 = 16;
const UNICODE: u64 = 32;
const VERBOSE: u64 = 64;

/// The excludes and includes of a key copy, compiled.
#[derive(Debug, Default)]
pub struct KeyFilter {
    excludes: Vec<Regex>,
    includes: Vec<Regex>,
}

impl KeyFilter {
    /// Compiles the patterns with Python's `re` `flags` (an `int`: `re.IGNORECASE` 2,
    /// `re.MULTILINE` 8, `re.DOTALL` 16, `re.UNICODE` 32 (always on), `re.VERBOSE` 64; `re.LOCALE`,
    /// `re.DEBUG` and `re.ASCII` are refused).
    pub fn new(excludes: &[String], includes: &[String], flags: u64) -> Result<KeyFilter> {
        let known = IGNORECASE | MULTILINE | DOTALL | UNICODE | VERBOSE;
        if flags & !known != 0 {
            return Err(Error::Unsupported(format!(
                "option \"flags\" {flags} holds re flags libzarr does not support ({}): only IGNORECASE (2), MULTILINE (8), DOTALL (16), UNICODE (32) and VERBOSE (64)",
                flags & !known
            )));
        }
        let compile = |option: &str, patterns: &[String]| -> Result<Vec<Regex>> {
            patterns
                .iter()
                .map(|pattern| compile(option, pattern, flags))
                .collect()
        };
        Ok(KeyFilter {
            excludes: compile("excludes", excludes)?,
            includes: compile("includes", includes)?,
        })
    }

    /// Whether a source key is copied: it matches no exclude, or it matches an include.
    pub fn accepts(&self, key: &str) -> bool {
        !self.excludes.iter().any(|r| r.is_match(key))
            || self.includes.iter().any(|r| r.is_match(key))
    }
}

fn compile(option: &str, pattern: &str, flags: u64) -> Result<Regex> {
    RegexBuilder::new(pattern)
        .case_insensitive(flags & IGNORECASE != 0)
        .multi_line(flags & MULTILINE != 0)
        .dot_matches_new_line(flags & DOTALL != 0)
        .ignore_whitespace(flags & VERBOSE != 0)
        .build()
        .map_err(|e| {
            let why = match e {
                regex::Error::Syntax(text) => text,
                other => other.to_string(),
            };
            Error::InvalidArgument(format!(
                "{option} pattern {pattern:?} is not a regular expression libzarr supports (Rust regex syntax: no look-around, no backreferences): {why}"
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(excludes: &[&str], includes: &[&str], flags: u64) -> KeyFilter {
        let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        KeyFilter::new(&owned(excludes), &owned(includes), flags).unwrap()
    }

    #[test]
    fn searches_anywhere_and_includes_override_excludes() {
        let f = filter(&["zattrs", r"^g/\d"], &[r"g/0$"], 0);
        assert!(!f.accepts("a/.zattrs"));
        assert!(!f.accepts("g/1"));
        assert!(f.accepts("g/0"), "included again");
        assert!(f.accepts("x/g/1"), "^ anchors at the key's start");
        assert!(f.accepts(".zarray"));
        let only_includes = filter(&[], &["nothing"], 0);
        assert!(only_includes.accepts("a"), "includes alone exclude nothing");
    }

    #[test]
    fn python_flags() {
        assert!(!filter(&["ZATTRS"], &[], 2).accepts(".zattrs"));
        assert!(filter(&["ZATTRS"], &[], 0).accepts(".zattrs"));
        assert!(!filter(&[r"a \. b  # comment"], &[], 64).accepts("a.b"));
        assert!(!filter(&["^b"], &[], 8).accepts("a\nb"));
        assert!(!filter(&["a.b"], &[], 16).accepts("a\nb"));
        assert!(filter(&["a.b"], &[], 32).accepts("a\nb"));
        for flags in [4, 128, 256, 1 << 20] {
            let err = KeyFilter::new(&[], &[], flags).unwrap_err();
            assert!(matches!(err, Error::Unsupported(_)), "{flags}: {err}");
        }
    }

    #[test]
    fn refuses_what_python_has_and_rust_regex_has_not_naming_the_pattern() {
        for (pattern, why) in [
            ("(?=a)", "look-around"),
            ("(?<!a)b", "look-around"),
            (r"(a)\1", "backreferences"),
            ("(", "unclosed group"),
        ] {
            let err = KeyFilter::new(&[], &[pattern.to_string()], 0).unwrap_err();
            let text = err.to_string();
            assert!(matches!(err, Error::InvalidArgument(_)), "{text}");
            assert!(
                text.contains("includes pattern") && text.contains(&format!("{pattern:?}")),
                "{text}"
            );
            assert!(text.contains(why), "{pattern}: {text}");
        }
    }
}
