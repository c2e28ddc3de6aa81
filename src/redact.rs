//! Keeping secrets out of text: in every URL of a message, log line, `Debug` output or CLI
//! output the library produces, the password of its user information and the values of its
//! query string and fragment (signed URLs' `X-Amz-Signature`, an Azure SAS's `sig`, tokens)
//! are replaced by `***`. Applications log these texts; the secrets must not reach the logs.

use std::borrow::Cow;

/// What a secret is replaced with.
const HIDDEN: &str = "***";

/// `text` with the secrets of every URL in it hidden: `https://user:***@host/p?a=***&b=***`.
/// Text without a URL comes back as it is.
pub fn redact(text: &str) -> Cow<'_, str> {
    let mut out = String::new();
    let mut done = 0;
    let mut search = 0;
    while let Some(found) = text[search..].find("://") {
        let marker = search + found;
        let start = scheme_start(text, marker);
        let mut end = text[marker + 3..]
            .find(ends_url)
            .map_or(text.len(), |n| marker + 3 + n);
        // Punctuation closing a sentence or a clause is not part of the URL.
        while end > marker + 3 && text[..end].ends_with(['.', ',', ':', ';', '!', '?']) {
            end -= 1;
        }
        search = end.max(marker + 3);
        let Some(start) = start else {
            continue;
        };
        let url = &text[start..end];
        if let Cow::Owned(hidden) = redact_url(url) {
            out.push_str(&text[done..start]);
            out.push_str(&hidden);
            done = end;
        }
    }
    if done == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[done..]);
    Cow::Owned(out)
}

/// The URL `url` (`scheme://...`) with its secrets hidden (see [`redact`]).
pub fn redact_url(url: &str) -> Cow<'_, str> {
    let Some(after_scheme) = url.find("://").map(|i| i + 3) else {
        return Cow::Borrowed(url);
    };
    let authority_end = url[after_scheme..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |n| after_scheme + n);
    let mut out = String::with_capacity(url.len());
    out.push_str(&url[..after_scheme]);
    let authority = &url[after_scheme..authority_end];
    match authority.rsplit_once('@') {
        Some((user_info, host)) if user_info.contains(':') => {
            let user = user_info.split_once(':').map_or(user_info, |(u, _)| u);
            out.push_str(&format!("{user}:{HIDDEN}@{host}"));
        }
        _ => out.push_str(authority),
    }
    let rest = &url[authority_end..];
    let params_start = rest.find(['?', '#']).unwrap_or(rest.len());
    out.push_str(&rest[..params_start]);
    let mut params = &rest[params_start..];
    while let Some(separator) = params.chars().next() {
        out.push(separator);
        params = &params[1..];
        let end = params.find(['&', ';', '#']).unwrap_or(params.len());
        match params[..end].split_once('=') {
            Some((name, value)) if !value.is_empty() => {
                out.push_str(name);
                out.push('=');
                out.push_str(HIDDEN);
            }
            _ => out.push_str(&params[..end]),
        }
        params = &params[end..];
    }
    match out == url {
        true => Cow::Borrowed(url),
        false => Cow::Owned(out),
    }
}

/// A secret given as an option (a key, a token, a signature): shown as `***` by `Debug`, so
/// that no debug print of the options that hold it reveals it.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// The secret itself, for the one place that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl From<String> for Secret {
    fn from(text: String) -> Self {
        Secret(text)
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(HIDDEN)
    }
}

/// Where the scheme of the URL whose `://` is at `marker` starts: a letter, then letters,
/// digits, `+`, `-` or `.`; `None` when no scheme precedes it.
fn scheme_start(text: &str, marker: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut start = marker;
    while start > 0
        && matches!(bytes[start - 1], b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'+' | b'-' | b'.')
    {
        start -= 1;
    }
    // The scheme starts with its first letter.
    while start < marker && !bytes[start].is_ascii_alphabetic() {
        start += 1;
    }
    (start < marker).then_some(start)
}

/// Whether `c` ends a URL inside a text: white space, quotes, brackets and the like.
fn ends_url(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '"' | '\'' | '<' | '>' | '`' | '\\' | ')' | ']' | '}' | '|'
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hides_passwords_and_query_values_in_urls_anywhere_in_a_text() {
        for (text, expected) in [
            ("https://user:PASSWORD@host/p", "https://user:***@host/p"),
            ("redis://:pw@host:6379/0", "redis://:***@host:6379/0"),
            ("https://user@host/p", "https://user@host/p"),
            (
                "reading \"a/.zarray\" in https://h/x?X-Amz-Signature=SIG&X-Amz-Date=2026: 403",
                "reading \"a/.zarray\" in https://h/x?X-Amz-Signature=***&X-Amz-Date=***: 403",
            ),
            (
                "in https://h/x?sig=S: no. See https://u:p@h.",
                "in https://h/x?sig=***: no. See https://u:***@h.",
            ),
            (
                "error sending request for url (http://u:pw@127.0.0.1:1/c/k?sv=1&sig=S%2F)",
                "error sending request for url (http://u:***@127.0.0.1:1/c/k?sv=***&sig=***)",
            ),
            (
                "\"https://h/k?token=T#access_token=A\", then s3://b/p",
                "\"https://h/k?token=***#access_token=***\", then s3://b/p",
            ),
            ("no URL here: a://", "no URL here: a://"),
            ("://x and 3x://y?z=1", "://x and 3x://y?z=***"),
            ("https://h/p?flag&empty=", "https://h/p?flag&empty="),
            ("über https://u:p@h", "über https://u:***@h"),
        ] {
            assert_eq!(redact(text), expected, "{text}");
        }
        assert!(matches!(redact("s3://bucket/prefix"), Cow::Borrowed(_)));
    }

    #[test]
    fn secrets_debug_as_stars() {
        let secret = Secret::from("hunter2".to_string());
        assert_eq!(format!("{:?}", Some(&secret)), "Some(***)");
        assert_eq!(secret.expose(), "hunter2");
    }
}
