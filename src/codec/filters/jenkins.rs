//! numcodecs `JenkinsLookup3`: the data followed by Bob Jenkins' lookup3 hash (`hashlittle`,
//! as HDF5 computes it), little-endian.

use super::checksum32::mismatch;
use super::{concat, copy};
use crate::codec::config::Config;
use crate::codec::filter::{check_len, Filter};
use crate::error::{Error, Result};
use serde_json::{json, Map, Value};

/// `{"id": "jenkins_lookup3", "initval": 0, "prefix": null}`.
///
/// numcodecs turns a non-null `prefix` into bytes with `np.frombuffer`, which no JSON value
/// survives, so only `null` is accepted.
#[derive(Debug, Clone)]
pub struct JenkinsLookup3 {
    initval: u32,
}

impl JenkinsLookup3 {
    /// Reads `initval` (0..=2^32-1, default 0) and `prefix` (null).
    pub(crate) fn from_config(obj: &Map<String, Value>) -> Result<JenkinsLookup3> {
        let cfg = Config::filter(obj, "jenkins_lookup3");
        let initval = cfg.int("initval", 0, 0..=u32::MAX.into())? as u32;
        if cfg.opt_value("prefix").is_some() {
            return Err(cfg.invalid("prefix", "null (numcodecs cannot build a prefix from JSON)"));
        }
        Ok(JenkinsLookup3 { initval })
    }
}

impl Filter for JenkinsLookup3 {
    fn id(&self) -> &'static str {
        "jenkins_lookup3"
    }

    fn config(&self) -> Value {
        json!({"id": "jenkins_lookup3", "initval": self.initval, "prefix": null})
    }

    fn encode(&self, input: &[u8]) -> Result<Vec<u8>> {
        concat(input, &lookup3(input, self.initval).to_le_bytes())
    }

    fn decode(&self, input: &[u8], max_len: usize) -> Result<Vec<u8>> {
        let Some(split) = input.len().checked_sub(4) else {
            return Err(Error::CorruptChunk(format!(
                "jenkins_lookup3 filter: {} bytes are too short to hold a 32-bit checksum",
                input.len()
            )));
        };
        let (payload, stored) = input.split_at(split);
        check_len("jenkins_lookup3", payload.len(), max_len)?;
        let stored = u32::from_le_bytes(stored.try_into().expect("4 bytes"));
        let computed = lookup3(payload, self.initval);
        if stored != computed {
            return Err(mismatch("jenkins_lookup3", stored, computed));
        }
        copy(payload)
    }

    fn encoded_len(&self, decoded_len: usize) -> Option<usize> {
        decoded_len.checked_add(4)
    }
}

/// `hashlittle` from lookup3.c, reading bytes one by one (no alignment or endianness
/// assumptions), as HDF5's `H5_checksum_lookup3` and numcodecs do.
pub(crate) fn lookup3(data: &[u8], initval: u32) -> u32 {
    let word = |k: &[u8]| {
        k.iter().enumerate().fold(0u32, |acc, (i, &b)| {
            acc.wrapping_add(u32::from(b) << (8 * i))
        })
    };
    let init = 0xdead_beef_u32
        .wrapping_add(data.len() as u32)
        .wrapping_add(initval);
    let (mut a, mut b, mut c) = (init, init, init);
    if data.is_empty() {
        return c;
    }
    let mut k = data;
    while k.len() > 12 {
        a = a.wrapping_add(word(&k[0..4]));
        b = b.wrapping_add(word(&k[4..8]));
        c = c.wrapping_add(word(&k[8..12]));
        mix(&mut a, &mut b, &mut c);
        k = &k[12..];
    }
    // The last 1..=12 bytes, zero-padded.
    let mut tail = [0u8; 12];
    tail[..k.len()].copy_from_slice(k);
    a = a.wrapping_add(word(&tail[0..4]));
    b = b.wrapping_add(word(&tail[4..8]));
    c = c.wrapping_add(word(&tail[8..12]));
    final_mix(&mut a, &mut b, &mut c);
    c
}

fn mix(a: &mut u32, b: &mut u32, c: &mut u32) {
    *a = a.wrapping_sub(*c);
    *a ^= c.rotate_left(4);
    *c = c.wrapping_add(*b);
    *b = b.wrapping_sub(*a);
    *b ^= a.rotate_left(6);
    *a = a.wrapping_add(*c);
    *c = c.wrapping_sub(*b);
    *c ^= b.rotate_left(8);
    *b = b.wrapping_add(*a);
    *a = a.wrapping_sub(*c);
    *a ^= c.rotate_left(16);
    *c = c.wrapping_add(*b);
    *b = b.wrapping_sub(*a);
    *b ^= a.rotate_left(19);
    *a = a.wrapping_add(*c);
    *c = c.wrapping_sub(*b);
    *c ^= b.rotate_left(4);
    *b = b.wrapping_add(*a);
}

fn final_mix(a: &mut u32, b: &mut u32, c: &mut u32) {
    *c ^= *b;
    *c = c.wrapping_sub(b.rotate_left(14));
    *a ^= *c;
    *a = a.wrapping_sub(c.rotate_left(11));
    *b ^= *a;
    *b = b.wrapping_sub(a.rotate_left(25));
    *c ^= *b;
    *c = c.wrapping_sub(b.rotate_left(16));
    *a ^= *c;
    *a = a.wrapping_sub(c.rotate_left(4));
    *b ^= *a;
    *b = b.wrapping_sub(a.rotate_left(14));
    *c ^= *b;
    *c = c.wrapping_sub(b.rotate_left(24));
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use serde_json::json;

    /// `numcodecs.JenkinsLookup3(initval=v).encode(bytes(range(n)))[-4:]` for n in 0..=25
    /// (0.15.2 and 0.16.6), covering every length of the last block.
    const BY_LENGTH: [(u32, [&str; 26]); 2] = [
        (
            0,
            [
                "efbeadde", "4b41a98b", "c9390ddf", "77f2126b", "421dcfe4", "cc33481d", "9eee2952",
                "d8119558", "3cb9ccd4", "7414a5ec", "e3c10f61", "7a81a62c", "93a54a5e", "16689dbc",
                "d3e90996", "03e5a663", "fcea845e", "cb32358c", "3d0032d7", "21adab74", "b559b694",
                "7bc30987", "5dcf9031", "583cffa5", "53dd0a9c", "4422883a",
            ],
        ),
        (
            12345,
            [
                "28efadde", "0c661092", "0b6e91fd", "0420e277", "ceadaf2d", "fe1e636b", "d8581bb4",
                "e51f2250", "d2040e46", "0d6042a5", "2117b74d", "a94a3f2e", "df51535a", "9e14c144",
                "9c8776bc", "66261365", "e6613fbb", "8132a0fe", "3e1b4246", "06f491ca", "d628df9f",
                "a5e312fb", "c321535d", "aca5269a", "1b4518b0", "3f387469",
            ],
        ),
    ];

    #[test]
    fn matches_numcodecs_fixtures() {
        for (initval, sums) in BY_LENGTH {
            let f = ok(json!({"id": "jenkins_lookup3", "initval": initval}), "|u1");
            assert_eq!(
                f.config(),
                json!({"id": "jenkins_lookup3", "initval": initval, "prefix": null})
            );
            for (n, sum) in sums.iter().enumerate() {
                let data: Vec<u8> = (0..n as u8).collect();
                let (enc, dec) = round_trip(&*f, &data);
                assert_eq!(enc, [data.clone(), unhex(sum)].concat(), "{initval} {n}");
                assert_eq!(dec, data);
            }
        }
        // JenkinsLookup3().encode(bytes(range(50)) * 4)[-4:]
        let f = ok(
            json!({"id": "jenkins_lookup3", "initval": 0, "prefix": null}),
            "|u1",
        );
        assert_eq!(f.encode(&sample()).unwrap()[200..], unhex("7ac93e99"));
    }

    #[test]
    fn refuses_mismatches_and_bad_config() {
        let f = ok(json!({"id": "jenkins_lookup3"}), "|u1");
        let mut bad = f.encode(&sample()).unwrap();
        bad[7] ^= 4;
        assert_corrupt(f.decode(&bad, 1000), "jenkins_lookup3");
        assert_corrupt(f.decode(&[1, 2, 3], 1000), "jenkins_lookup3");
        assert_invalid(
            json!({"id": "jenkins_lookup3", "prefix": [1, 2]}),
            "|u1",
            "prefix",
        );
        assert_invalid(
            json!({"id": "jenkins_lookup3", "initval": -1}),
            "|u1",
            "initval",
        );
        assert_invalid(
            json!({"id": "jenkins_lookup3", "initval": 1u64 << 32}),
            "|u1",
            "initval",
        );
    }
}
