//! numcodecs `CRC32`, `Adler32` and `CRC32C`: the data with a 32-bit little-endian checksum
//! before it (`"location": "start"`, the default of `crc32` and `adler32`) or after it
//! (`"end"`, the default of `crc32c`).

use super::{concat, copy};
use crate::codec::config::Config;
use crate::codec::filter::{check_len, Filter};
use crate::error::{Error, Result};
use serde_json::{json, Map, Value};

/// `{"id": "crc32"}`, `{"id": "adler32"}`, `{"id": "crc32c"}`, each optionally with
/// `"location": "start" | "end"` (numcodecs 0.14 and later; earlier versions always put the
/// checksum first and know no `location` key). As numcodecs does, the configuration only
/// lists `location` when it was given.
#[derive(Debug, Clone)]
pub struct Checksum32 {
    id: &'static str,
    at_end: bool,
    /// `location` as given (`None`: the default).
    location: Option<&'static str>,
}

impl Checksum32 {
    /// Reads `location` (absent or null: the codec's default) for the codec `id`.
    pub(crate) fn from_config(obj: &Map<String, Value>, id: &str) -> Result<Checksum32> {
        let id: &'static str = match id {
            "crc32" => "crc32",
            "adler32" => "adler32",
            _ => "crc32c",
        };
        let cfg = Config::filter(obj, id);
        let location = match cfg.opt_value("location").map(Value::as_str) {
            None => None,
            Some(Some("start")) => Some("start"),
            Some(Some("end")) => Some("end"),
            Some(_) => return Err(cfg.invalid("location", "\"start\" or \"end\"")),
        };
        let at_end = location.unwrap_or(if id == "crc32c" { "end" } else { "start" }) == "end";
        Ok(Checksum32 {
            id,
            at_end,
            location,
        })
    }

    fn checksum(&self, data: &[u8]) -> u32 {
        match self.id {
            "crc32" => {
                let mut crc = flate2::Crc::new();
                crc.update(data);
                crc.sum()
            }
            "adler32" => adler32(data),
            _ => crc32c(data),
        }
    }
}

impl Filter for Checksum32 {
    fn id(&self) -> &'static str {
        self.id
    }

    fn config(&self) -> Value {
        match self.location {
            Some(location) => json!({"id": self.id, "location": location}),
            None => json!({"id": self.id}),
        }
    }

    fn encode(&self, input: &[u8]) -> Result<Vec<u8>> {
        let sum = self.checksum(input).to_le_bytes();
        Ok(if self.at_end {
            concat(input, &sum)?
        } else {
            concat(&sum, input)?
        })
    }

    fn decode(&self, input: &[u8], max_len: usize) -> Result<Vec<u8>> {
        if input.len() < 4 {
            return Err(Error::CorruptChunk(format!(
                "{} filter: {} bytes are too short to hold a 32-bit checksum",
                self.id,
                input.len()
            )));
        }
        let (stored, payload) = if self.at_end {
            let (payload, stored) = input.split_at(input.len() - 4);
            (stored, payload)
        } else {
            input.split_at(4)
        };
        check_len(self.id, payload.len(), max_len)?;
        let stored = u32::from_le_bytes(stored.try_into().expect("4 bytes"));
        let computed = self.checksum(payload);
        if stored != computed {
            return Err(mismatch(self.id, stored, computed));
        }
        copy(payload)
    }

    fn encoded_len(&self, decoded_len: usize) -> Option<usize> {
        decoded_len.checked_add(4)
    }
}

/// The error for a stored checksum that differs from the data's.
pub(crate) fn mismatch(id: &str, stored: u32, computed: u32) -> Error {
    Error::CorruptChunk(format!(
        "{id} filter: checksum mismatch (stored {stored:#010x}, computed {computed:#010x})"
    ))
}

/// Adler-32 (RFC 1950), as `zlib.adler32`.
fn adler32(data: &[u8]) -> u32 {
    const MOD: u32 = 65521;
    // The largest block whose sums cannot overflow 32 bits before the reduction.
    const NMAX: usize = 5552;
    let (mut a, mut b) = (1u32, 0u32);
    for block in data.chunks(NMAX) {
        for &x in block {
            a += u32::from(x);
            b += a;
        }
        a %= MOD;
        b %= MOD;
    }
    (b << 16) | a
}

/// CRC-32C (Castagnoli), as `google_crc32c.value` (hardware-accelerated where the CPU has it).
fn crc32c(data: &[u8]) -> u32 {
    crc32c::crc32c(data)
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use serde_json::json;

    /// `numcodecs.get_codec({'id': id, ...}).encode(bytes(range(50)) * 4)`: the checksum
    /// and where it goes (0.15.2 and 0.16.6; crc32c from 0.16.6 with google_crc32c).
    const FIXTURES: [(&str, Option<&str>, &str, bool); 5] = [
        ("crc32", None, "0f552629", false),
        ("crc32", Some("end"), "0f552629", true),
        ("adler32", None, "251312e2", false),
        ("adler32", Some("end"), "251312e2", true),
        ("crc32c", None, "308d8d69", true),
    ];

    #[test]
    fn matches_numcodecs_fixtures() {
        for (id, location, sum, at_end) in FIXTURES {
            let config = match location {
                Some(l) => json!({"id": id, "location": l}),
                None => json!({"id": id}),
            };
            let f = ok(config.clone(), "|u1");
            assert_eq!(f.config(), config);
            let expect = if at_end {
                [sample(), unhex(sum)].concat()
            } else {
                [unhex(sum), sample()].concat()
            };
            let (enc, dec) = round_trip(&*f, &sample());
            assert_eq!(enc, expect, "{config}");
            assert_eq!(dec, sample());
        }
        let f = ok(json!({"id": "crc32", "location": "start"}), "<i4");
        assert_eq!(f.config(), json!({"id": "crc32", "location": "start"}));
        // Empty data: zlib.crc32(b'') == 0, zlib.adler32(b'') == 1.
        assert_eq!(
            ok(json!({"id": "crc32"}), "|u1").encode(&[]).unwrap(),
            [0, 0, 0, 0]
        );
        assert_eq!(
            ok(json!({"id": "adler32"}), "|u1").encode(&[]).unwrap(),
            [1, 0, 0, 0]
        );
    }

    #[test]
    fn adler32_handles_long_input() {
        // zlib.adler32(bytes([255]) * 100_000) == 0x2b1e6e0b... checked against flate2's own
        // adler32 through a zlib stream's trailer instead of a constant.
        let data = vec![255u8; 100_000];
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut z, &data).unwrap();
        let stream = z.finish().unwrap();
        let trailer = u32::from_be_bytes(stream[stream.len() - 4..].try_into().unwrap());
        assert_eq!(super::adler32(&data), trailer);
    }

    #[test]
    fn refuses_mismatches_and_short_input() {
        for (id, location, _, _) in FIXTURES {
            let config = match location {
                Some(l) => json!({"id": id, "location": l}),
                None => json!({"id": id}),
            };
            let f = ok(config, "|u1");
            let enc = f.encode(&sample()).unwrap();
            for i in [0, 3, 4, enc.len() - 1] {
                let mut bad = enc.clone();
                bad[i] ^= 0x10;
                assert_corrupt(f.decode(&bad, 1000), id);
            }
            assert_corrupt(f.decode(&enc[..3], 1000), id);
            assert_corrupt(f.decode(&enc, 199), id);
            assert_eq!(
                f.decode(&f.encode(&[]).unwrap(), 0).unwrap(),
                Vec::<u8>::new()
            );
        }
    }

    #[test]
    fn rejects_bad_location() {
        assert_invalid(
            json!({"id": "crc32", "location": "middle"}),
            "|u1",
            "location",
        );
        assert_invalid(json!({"id": "adler32", "location": 1}), "|u1", "location");
        let f = ok(json!({"id": "crc32", "location": null}), "|u1");
        assert_eq!(f.config(), json!({"id": "crc32"}));
    }
}
