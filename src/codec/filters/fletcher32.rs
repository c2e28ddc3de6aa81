//! numcodecs `Fletcher32`: the data followed by HDF5's Fletcher-32 checksum (little-endian).

use super::checksum32::mismatch;
use super::{concat, copy};
use crate::codec::filter::{check_len, Filter};
use crate::error::{Error, Result};
use serde_json::{json, Value};

/// `{"id": "fletcher32"}`.
///
/// The checksum is HDF5's (and netCDF's) variant: 16-bit big-endian words, sums folded every
/// 360 words, an odd last byte counted as the high byte of a word. numcodecs cannot encode
/// empty input nor decode a bare checksum (IndexError); here an empty payload has
/// checksum 0.
#[derive(Debug, Clone, Copy)]
pub struct Fletcher32;

impl Filter for Fletcher32 {
    fn id(&self) -> &'static str {
        "fletcher32"
    }

    fn config(&self) -> Value {
        json!({"id": "fletcher32"})
    }

    fn encode(&self, input: &[u8]) -> Result<Vec<u8>> {
        concat(input, &fletcher32(input).to_le_bytes())
    }

    fn decode(&self, input: &[u8], max_len: usize) -> Result<Vec<u8>> {
        let Some(split) = input.len().checked_sub(4) else {
            return Err(Error::CorruptChunk(format!(
                "fletcher32 filter: {} bytes are too short to hold a 32-bit checksum",
                input.len()
            )));
        };
        let (payload, stored) = input.split_at(split);
        check_len("fletcher32", payload.len(), max_len)?;
        let stored = u32::from_le_bytes(stored.try_into().expect("4 bytes"));
        let computed = fletcher32(payload);
        if stored != computed {
            return Err(mismatch("fletcher32", stored, computed));
        }
        copy(payload)
    }

    fn encoded_len(&self, decoded_len: usize) -> Option<usize> {
        decoded_len.checked_add(4)
    }
}

/// HDF5's `H5_checksum_fletcher32`, as numcodecs ports it (32-bit sums that wrap).
pub(crate) fn fletcher32(data: &[u8]) -> u32 {
    let fold = |s: u32| (s & 0xffff) + (s >> 16);
    let (mut sum1, mut sum2) = (0u32, 0u32);
    let (words, odd) = data.split_at(data.len() & !1);
    // 360 words (720 bytes) at a time.
    for block in words.chunks(720) {
        for w in block.chunks_exact(2) {
            sum1 = sum1.wrapping_add((u32::from(w[0]) << 8) | u32::from(w[1]));
            sum2 = sum2.wrapping_add(sum1);
        }
        sum1 = fold(sum1);
        sum2 = fold(sum2);
    }
    if let Some(&last) = odd.first() {
        sum1 = sum1.wrapping_add(u32::from(last) << 8);
        sum2 = sum2.wrapping_add(sum1);
        sum1 = fold(sum1);
        sum2 = fold(sum2);
    }
    sum1 = fold(sum1);
    sum2 = fold(sum2);
    (sum2 << 16) | sum1
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use serde_json::json;

    #[test]
    fn matches_numcodecs_fixtures() {
        let f = ok(json!({"id": "fletcher32"}), "|u1");
        assert_eq!(f.config(), json!({"id": "fletcher32"}));
        // numcodecs.Fletcher32().encode(data)[-4:] (0.15.2 and 0.16.6) for an even length, an
        // odd length, and 5001 bytes (several 360-word blocks).
        let odd = [sample(), b"x".to_vec()].concat();
        let long: Vec<u8> = (0..5001u32).map(|i| ((i * 7 + 3) % 256) as u8).collect();
        for (data, sum) in [
            (sample(), "cd693c96"),
            (odd, "cde10a78"),
            (long, "a1f6c122"),
        ] {
            let (enc, dec) = round_trip(&*f, &data);
            assert_eq!(enc, [data.clone(), unhex(sum)].concat());
            assert_eq!(dec, data);
        }
    }

    #[test]
    fn refuses_mismatches_and_short_input() {
        let f = ok(json!({"id": "fletcher32"}), "|u1");
        let enc = f.encode(&sample()).unwrap();
        for i in [0, 100, enc.len() - 4, enc.len() - 1] {
            let mut bad = enc.clone();
            bad[i] ^= 1;
            assert_corrupt(f.decode(&bad, 1000), "fletcher32");
        }
        assert_corrupt(f.decode(&enc[..3], 1000), "fletcher32");
        assert_corrupt(f.decode(&enc, 199), "fletcher32");
    }
}
