//! The lines of a `dbm.dumb` index (`PATH.dir`), as CPython's `Lib/dbm/dumb.py` writes and
//! reads them: `"%r, %r\n" % (key.decode("Latin-1"), (pos, size))`, read back line by line
//! with `ast.literal_eval`. The file is Latin-1 text, so each byte of a key is one character
//! of a Python string literal: printable characters stand for themselves, the others are
//! escaped as `repr` escapes them.

/// One entry: where a key's value lies in `PATH.dat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// The offset of the value's first byte.
    pub pos: u64,
    /// The value's length in bytes.
    pub len: u64,
}

/// The index line for `key` (bytes, each one Latin-1 character) at `entry`, with its newline,
/// exactly as Python's `"%r, %r\n" % (key, (pos, siz))` writes it.
pub fn line(key: &[u8], entry: Entry) -> Vec<u8> {
    let mut out = repr(key);
    out.extend_from_slice(format!(", ({}, {})\n", entry.pos, entry.len).as_bytes());
    out
}

/// Python's `repr` of the string whose characters are the bytes of `key`, in Latin-1: single
/// quotes unless the text holds a single quote and no double quote; `\\`, `\t`, `\n`, `\r`
/// and the quote escaped; other characters that are not printable (controls, U+007F–U+00A0,
/// the soft hyphen U+00AD) as `\xNN`.
fn repr(key: &[u8]) -> Vec<u8> {
    let quote = if key.contains(&b'\'') && !key.contains(&b'"') {
        b'"'
    } else {
        b'\''
    };
    let mut out = Vec::with_capacity(key.len() + 2);
    out.push(quote);
    for &b in key {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            _ if b == quote => out.extend_from_slice(&[b'\\', quote]),
            0x20..=0x7e => out.push(b),
            0xa1..=0xff if b != 0xad => out.push(b),
            _ => out.extend_from_slice(format!("\\x{b:02x}").as_bytes()),
        }
    }
    out.push(quote);
    out
}

/// Reads one index line (without its newline): the key's bytes and its entry, or what is wrong
/// with a line that is not what Python writes.
pub fn parse(line: &[u8]) -> Result<(Vec<u8>, Entry), String> {
    let mut p = Parser { text: line, at: 0 };
    p.skip_space();
    let key = p.string()?;
    p.expect(b',')?;
    p.expect(b'(')?;
    let pos = p.integer()?;
    p.expect(b',')?;
    let len = p.integer()?;
    p.expect(b')')?;
    p.skip_space();
    match p.at == line.len() {
        true => Ok((key, Entry { pos, len })),
        false => Err(format!(
            "unexpected text after the entry at column {}",
            p.at + 1
        )),
    }
}

/// A cursor over one line.
struct Parser<'a> {
    text: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\x0c')) {
            self.at += 1;
        }
    }

    fn expect(&mut self, what: u8) -> Result<(), String> {
        self.skip_space();
        match self.peek() {
            Some(c) if c == what => {
                self.at += 1;
                Ok(())
            }
            _ => Err(format!(
                "expected {:?} at column {}",
                what as char,
                self.at + 1
            )),
        }
    }

    /// A non-negative decimal integer that fits 63 bits.
    fn integer(&mut self) -> Result<u64, String> {
        self.skip_space();
        let start = self.at;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
        std::str::from_utf8(&self.text[start..self.at])
            .ok()
            .and_then(|digits| digits.parse::<u64>().ok())
            .filter(|n| *n <= i64::MAX as u64)
            .ok_or_else(|| format!("expected a byte offset or length at column {}", start + 1))
    }

    /// A Python string literal in single or double quotes whose characters are all below
    /// U+0100, as bytes.
    fn string(&mut self) -> Result<Vec<u8>, String> {
        let quote = match self.peek() {
            Some(q @ (b'\'' | b'"')) => q,
            _ => return Err(format!("expected a quoted key at column {}", self.at + 1)),
        };
        self.at += 1;
        let mut out = Vec::new();
        loop {
            let Some(c) = self.peek() else {
                return Err("the key's closing quote is missing".into());
            };
            self.at += 1;
            match c {
                _ if c == quote => return Ok(out),
                b'\\' => out.push(self.escape()?),
                b'\n' => return Err("a line break inside the key".into()),
                _ => out.push(c),
            }
        }
    }

    /// The character after a backslash (which was consumed).
    fn escape(&mut self) -> Result<u8, String> {
        let column = self.at;
        let c = self.peek().ok_or("a backslash ends the line")?;
        self.at += 1;
        let simple = match c {
            b'\\' | b'\'' | b'"' => Some(c),
            b'n' => Some(b'\n'),
            b'r' => Some(b'\r'),
            b't' => Some(b'\t'),
            b'a' => Some(0x07),
            b'b' => Some(0x08),
            b'f' => Some(0x0c),
            b'v' => Some(0x0b),
            _ => None,
        };
        if let Some(byte) = simple {
            return Ok(byte);
        }
        let (digits, radix) = match c {
            b'x' => (2, 16),
            b'u' => (4, 16),
            b'U' => (8, 16),
            b'0'..=b'7' => {
                self.at -= 1;
                let run = self.text[self.at..]
                    .iter()
                    .take(3)
                    .take_while(|d| matches!(d, b'0'..=b'7'))
                    .count();
                (run, 8)
            }
            _ => return Err(format!("unknown escape \\{} at column {column}", c as char)),
        };
        let text = self
            .text
            .get(self.at..self.at + digits)
            .and_then(|d| std::str::from_utf8(d).ok())
            .ok_or_else(|| format!("a short escape at column {column}"))?;
        self.at += digits;
        let code = u32::from_str_radix(text, radix)
            .map_err(|_| format!("a malformed escape at column {column}"))?;
        u8::try_from(code).map_err(|_| {
            format!("escape at column {column} is not a Latin-1 character (keys are bytes)")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines as Python 3.11 writes them (`"%r, %r\n" % (key.decode("Latin-1"), (pos, siz))`),
    /// checked byte for byte, and read back.
    #[test]
    fn lines_are_written_as_python_writes_them_and_read_back() {
        for (key, expected) in [
            (&b"a/.zarray"[..], &b"'a/.zarray', (0, 12)\n"[..]),
            (b"it's", b"\"it's\", (0, 12)\n"),
            (b"both'\"", b"'both\\'\"', (0, 12)\n"),
            (b"tab\tnl\ncr\rbs\\", b"'tab\\tnl\\ncr\\rbs\\\\', (0, 12)\n"),
            (
                b"\x00\x1f\x7f\x80\xa0\xa1\xad\xe9\xff",
                b"'\\x00\\x1f\\x7f\\x80\\xa0\xa1\\xad\xe9\xff', (0, 12)\n",
            ),
            (b"", b"'', (0, 12)\n"),
        ] {
            let entry = Entry { pos: 0, len: 12 };
            let written = line(key, entry);
            assert_eq!(written, expected, "{key:?}");
            assert_eq!(
                parse(&written[..written.len() - 1]).unwrap(),
                (key.to_vec(), entry)
            );
        }
        let (key, entry) = parse(b"  '\\101\\x41\\u0041\\0', ( 512 ,3 )  ").unwrap();
        assert_eq!(
            (key, entry),
            (b"AAA\0".to_vec(), Entry { pos: 512, len: 3 })
        );
    }

    #[test]
    fn damaged_lines_are_refused_saying_why() {
        for (line, needle) in [
            (&b"'a', (0, 1"[..], "')'"),
            (b"'a, (0, 1)", "closing quote"),
            (b"a, (0, 1)", "quoted key"),
            (b"'a', (-1, 1)", "offset"),
            (b"'a', (0, 99999999999999999999)", "offset"),
            (b"'\\u0100', (0, 1)", "Latin-1"),
            (b"'\\q', (0, 1)", "unknown escape"),
            (b"'\\x4', (0, 1)", "escape"),
            (b"'a', (0, 1) x", "after the entry"),
            (b"", "quoted key"),
        ] {
            let message = parse(line).unwrap_err();
            assert!(message.contains(needle), "{line:?}: {message}");
        }
    }
}
