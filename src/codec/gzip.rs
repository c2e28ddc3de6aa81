//! numcodecs `GZip`: a gzip stream (RFC 1952) as Python's `gzip.GzipFile` writes it. The
//! deflate level and the zlib fallback are shared with [`super::zlib`].

use super::config::Config;
use super::stream::{decode_growing, decode_stream, finish, truncated, Sink};
use super::zlib::{compression, deflate_level, inflate};
use super::Codec;
use crate::error::{Error, Result};
use flate2::{Crc, Decompress};
use serde_json::{json, Map, Value};
use std::io::Write;

/// The two bytes every gzip member starts with.
pub(super) const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
/// The compression method byte that follows them: deflate, the only one defined.
const DEFLATE: u8 = 8;

const FHCRC: u8 = 0x02;
const FEXTRA: u8 = 0x04;
const FNAME: u8 = 0x08;
const FCOMMENT: u8 = 0x10;

/// The numcodecs `GZip` compressor: `{"id": "gzip", "level": 1}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gzip {
    level: i64,
}

impl Gzip {
    /// Reads `level` (-1..=9, default 1; -1 is zlib's default level, 6).
    pub fn from_config(obj: &Map<String, Value>) -> Result<Self> {
        Ok(Gzip {
            level: deflate_level(&Config::new(obj, "gzip"))?,
        })
    }
}

impl Codec for Gzip {
    fn id(&self) -> &'static str {
        "gzip"
    }

    fn config(&self) -> Value {
        json!({"id": "gzip", "level": self.level})
    }

    /// Writes one member with no file name and, unlike Python, a zero (unset) timestamp so
    /// that equal chunks encode to equal bytes.
    fn encode(&self, input: &[u8]) -> Result<Vec<u8>> {
        // Python sets the "extra flags" byte to 2 for the best and 4 for the fastest level.
        let xfl = match self.level {
            9 => 2,
            1 => 4,
            _ => 0,
        };
        // No flags, no timestamp, the extra flags, and 255 for "unknown operating system".
        let header = [&GZIP_MAGIC[..], &[DEFLATE, 0, 0, 0, 0, 0, xfl, 255]].concat();
        let mut enc = flate2::write::DeflateEncoder::new(header, compression(self.level));
        let mut out = enc
            .write_all(input)
            .and_then(|()| enc.finish())
            .map_err(|e| Error::Internal(format!("gzip: compressing into memory failed: {e}")))?;
        let mut crc = Crc::new();
        crc.update(input);
        out.extend_from_slice(&crc.sum().to_le_bytes());
        out.extend_from_slice(&(input.len() as u32).to_le_bytes());
        Ok(out)
    }

    /// Decodes one or more gzip members, or leniently a zlib stream.
    fn decode_into(&self, input: &[u8], out: &mut [u8]) -> Result<()> {
        inflate("gzip", input, &mut Sink::Exact(out)).map(drop)
    }

    fn decode_to_vec(&self, input: &[u8], max_len: usize) -> Result<Vec<u8>> {
        decode_growing(max_len, |sink| inflate("gzip", input, sink))
    }
}

/// Decodes concatenated gzip members into `out`, checking each member's CRC-32 and size,
/// and returns the decoded length. Zero bytes after a member are skipped, as Python's `gzip`
/// module does; anything else after a member must be another member.
pub(super) fn gunzip(id: &str, input: &[u8], out: &mut Sink) -> Result<usize> {
    let (mut pos, mut filled) = (0, 0);
    while pos < input.len() {
        pos += header_len(id, &input[pos..], filled, out.limit())?;
        let mut inflater = Decompress::new(false);
        let (used, end) = decode_stream(id, &mut inflater, &input[pos..], out, filled)?;
        pos += used;
        let trailer = input
            .get(pos..pos + 8)
            .ok_or_else(|| truncated(id, end, out.limit()))?;
        let mut crc = Crc::new();
        crc.update(out.bytes(filled..end));
        if trailer[..4] != crc.sum().to_le_bytes()
            || trailer[4..] != ((end - filled) as u32).to_le_bytes()
        {
            return Err(Error::CorruptChunk(format!(
                "{id}: gzip member fails its CRC-32 or size check"
            )));
        }
        pos += 8;
        filled = end;
        while input.get(pos) == Some(&0) {
            pos += 1;
        }
    }
    finish(id, out, filled)
}

/// The length of the gzip member header at the start of `h`.
fn header_len(id: &str, h: &[u8], decoded: usize, expected: usize) -> Result<usize> {
    let start = [GZIP_MAGIC[0], GZIP_MAGIC[1], DEFLATE];
    if !h.iter().zip(&start).all(|(a, b)| a == b) {
        return Err(Error::CorruptChunk(format!(
            "{id}: not a gzip member (bad magic bytes or compression method)"
        )));
    }
    let flags = *h.get(3).unwrap_or(&0);
    let mut pos = 10;
    if flags & FEXTRA != 0 {
        let xlen = h
            .get(pos..pos + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]));
        pos += 2 + usize::from(xlen.unwrap_or(u16::MAX));
    }
    for flag in [FNAME, FCOMMENT] {
        if flags & flag != 0 {
            let field = h.get(pos..).unwrap_or_default();
            pos += field.iter().position(|&b| b == 0).unwrap_or(h.len()) + 1;
        }
    }
    if flags & FHCRC != 0 {
        pos += 2;
    }
    if pos > h.len() {
        return Err(truncated(id, decoded, expected));
    }
    Ok(pos)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::testutil::*;
    use crate::codec::zlib::tests::NUMCODECS_ZLIB;

    fn codec(config: Value) -> Result<Gzip> {
        Gzip::from_config(config.as_object().unwrap())
    }

    /// `numcodecs.GZip(level=1).encode(bytes(range(50)) * 4)` (numcodecs 0.16.6).
    const NUMCODECS_GZIP: &str = "\
        1f8b0800462d026b04ff6360646266616563e7e0e4e2e6e1e5e3171014121611151397909492969195935750\
        545256515553d7d0d4d2d6d1d5d337306418943a000f552629c8000000";

    #[test]
    fn config_defaults_and_round_trip() {
        assert_eq!(
            codec(json!({"id": "gzip"})).unwrap().config(),
            json!({"id": "gzip", "level": 1})
        );
        for level in -1..=9 {
            let c = codec(json!({"id": "gzip", "level": level})).unwrap();
            assert_eq!(c.config(), json!({"id": "gzip", "level": level}));
            assert_round_trips(&c);
            assert_eq!(c.encode(b"x").unwrap()[..2], GZIP_MAGIC);
        }
    }

    #[test]
    fn decodes_numcodecs_output_and_zlib() {
        let c = codec(json!({"id": "gzip"})).unwrap();
        assert_eq!(decode(&c, &unhex(NUMCODECS_GZIP), 200).unwrap(), sample());
        assert_eq!(decode(&c, &unhex(NUMCODECS_ZLIB), 200).unwrap(), sample());
    }

    #[test]
    fn decodes_members_padding_and_header_fields() {
        let c = codec(json!({"id": "gzip"})).unwrap();
        let one = unhex(NUMCODECS_GZIP);
        let mut two = [one.clone(), one.clone(), vec![0, 0, 0]].concat();
        assert_eq!(
            decode(&c, &two, 400).unwrap(),
            [sample(), sample()].concat()
        );
        // A member with FEXTRA, FNAME, FCOMMENT and FHCRC set.
        let mut fields = one[..10].to_vec();
        fields[3] = FEXTRA | FNAME | FCOMMENT | FHCRC;
        fields.extend_from_slice(&[3, 0, b'a', b'b', b'c']);
        fields.extend_from_slice(b"name\0comment\0");
        fields.extend_from_slice(&[0xaa, 0xbb]);
        fields.extend_from_slice(&one[10..]);
        assert_eq!(decode(&c, &fields, 200).unwrap(), sample());
        // Garbage after a member is an error, as in Python.
        two.extend_from_slice(b"xyz");
        assert_corrupt(&c, &two, 400);
    }

    #[test]
    fn rejects_corrupt_data() {
        let c = codec(json!({"id": "gzip"})).unwrap();
        let enc = unhex(NUMCODECS_GZIP);
        assert_truncations_refused(&c, &enc, 200);
        assert_corrupt(&c, &[0x1f, 0x8b, 8, FNAME, 0, 0, 0, 0, 0, 0, b'a'], 200);
        assert_corrupt(&c, &[0x1f, 0x8b, 8, FEXTRA, 0, 0, 0, 0, 0, 0, 0xff], 200);
        assert_corrupt(&c, &[0x1f, 0x8b, 7, 0, 0, 0, 0, 0, 0, 0, 0], 200);
        assert_corrupt(&c, b"garbage garbage garbage", 200);
        // The CRC-32 and the size in the trailer are both checked.
        for byte in [enc.len() - 8, enc.len() - 1] {
            let mut bad = enc.clone();
            bad[byte] ^= 1;
            assert_corrupt(&c, &bad, 200);
        }
        let bomb = c.encode(&vec![0u8; 10 << 20]).unwrap();
        assert_corrupt(&c, &bomb, 1024);
        assert_corrupt_vec(&c, &bomb, 1024);
    }

    #[test]
    fn rejects_bad_config() {
        for bad in [json!(10), json!(-2), json!("1"), json!(null), json!(true)] {
            let err = codec(json!({"id": "gzip", "level": bad})).unwrap_err();
            assert!(matches!(err, Error::InvalidMetadata(ref m) if m.contains("level")));
        }
    }
}
