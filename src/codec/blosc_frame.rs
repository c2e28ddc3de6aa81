//! A c-blosc 1.x frame checked before c-blosc decodes it: the block and split layout walked
//! as `blosc_d` walks it, refusing what valid frames never hold and what c-blosc's decoders
//! would overrun on (c-blosc #405: a blosclz stream with a long enough match run makes its
//! length wrap and the copy write far past the output).
//!
//! The frame: a 16-byte header (version, format version, flags, type size, then `nbytes`,
//! `blocksize` and `cbytes` as little-endian u32), unless the data was stored as it is
//! (flag 0x02) the start offset of each block (i32), and in each block one or more splits,
//! each a compressed length (i32) and that many bytes.

use crate::error::{Error, Result};
use std::ops::Range;

/// Flag: the data follows the header as it is.
const MEMCPYED: u8 = 0x02;
/// Flag: blocks are not split by byte position.
const DONT_SPLIT: u8 = 0x10;
/// The compressor code in the flags' top three bits that means blosclz.
const BLOSCLZ: u8 = 0;
/// c-blosc splits a block by byte position only for type sizes up to this...
const MAX_SPLITS: usize = 16;
/// ... and when a block holds at least this many items.
const MIN_BUFFERSIZE: usize = 128;
/// The longest blosclz split accepted: from about 8,421,505 bytes of match run on, blosclz's
/// `int32_t` match length wraps (c-blosc #405).
const BLOSCLZ_SPLIT_MAX: usize = 8 << 20;

/// The blocks of a frame that hold `parts` (byte ranges of its `nbytes` decoded bytes) in
/// blocks of `blocksize` decoded bytes: `wanted[block]`.
pub fn wanted_blocks(nbytes: usize, blocksize: usize, parts: &[Range<usize>]) -> Vec<bool> {
    let nblocks = nbytes.div_ceil(blocksize);
    let mut wanted = vec![false; nblocks];
    for part in parts.iter().filter(|p| !p.is_empty() && p.start < nbytes) {
        let last = ((part.end - 1) / blocksize).min(nblocks - 1);
        wanted[part.start / blocksize..=last].fill(true);
    }
    wanted
}

/// The `(offset, length)` ranges of a stored frame that decoding the blocks holding `parts`
/// (byte ranges of its `nbytes` decoded bytes) reads, told from the frame's first bytes
/// `head`: the header with the block starts, and each wanted block up to the start of the
/// block stored after it (c-blosc's threads store blocks in any order). `None` when the
/// whole frame is read: `head` too short for the block starts or not such a frame, the data
/// stored as it is, or every block wanted.
pub fn block_ranges(head: &[u8], nbytes: usize, parts: &[Range<usize>]) -> Option<Vec<(u64, u64)>> {
    let word = |at: usize| -> Option<usize> {
        let bytes = head.get(at..at + 4)?;
        Some(u32::from_le_bytes(bytes.try_into().expect("4 bytes")) as usize)
    };
    let (flags, typesize) = (*head.get(2)?, usize::from(*head.get(3)?));
    let (stated, blocksize, cbytes) = (word(4)?, word(8)?, word(12)?);
    if stated != nbytes || nbytes == 0 || flags & MEMCPYED != 0 || typesize == 0 {
        return None;
    }
    if blocksize == 0 || !blocksize.is_multiple_of(typesize) || !nbytes.is_multiple_of(typesize) {
        return None;
    }
    let wanted = wanted_blocks(nbytes, blocksize, parts);
    if wanted.iter().all(|&w| w) {
        return None;
    }
    let starts: Vec<usize> = (0..wanted.len())
        .map(|block| word(16 + 4 * block))
        .collect::<Option<_>>()?;
    let mut sorted = starts.clone();
    sorted.sort_unstable();
    let mut ranges = vec![(0, 16 + 4 * wanted.len() as u64)];
    for (&start, _) in starts.iter().zip(&wanted).filter(|(_, &w)| w) {
        let next = sorted.partition_point(|&s| s <= start);
        let end = sorted.get(next).copied().unwrap_or(cbytes).max(start);
        ranges.push((start as u64, (end - start) as u64));
    }
    Some(ranges)
}

/// Checks the layout of the frame `frame` (exactly its `cbytes` bytes) that states `nbytes`
/// decoded bytes: every block start and split inside the frame, no split longer than its
/// decoded size (c-blosc stores such a split as it is), no blosclz split of 8 MiB or more.
pub fn check(frame: &[u8], nbytes: usize) -> Result<()> {
    let corrupt = |why: String| Error::CorruptChunk(format!("blosc: {why}"));
    let flags = frame[2];
    let typesize = usize::from(frame[3]);
    let blocksize = u32::from_le_bytes(frame[8..12].try_into().expect("4 bytes")) as usize;
    if nbytes == 0 || flags & MEMCPYED != 0 {
        return Ok(()); // c-blosc checks the stored length of these itself.
    }
    if typesize == 0 || blocksize == 0 {
        return Err(corrupt(format!(
            "the header states a type size of {typesize} and blocks of {blocksize} bytes"
        )));
    }
    let leftover = nbytes % blocksize;
    let nblocks = nbytes / blocksize + usize::from(leftover > 0);
    let starts = frame
        .get(16..)
        .and_then(|rest| rest.get(..nblocks.checked_mul(4)?))
        .ok_or_else(|| {
            corrupt(format!(
                "the frame is too short for its {nblocks} block starts"
            ))
        })?;
    let read_i32 = |at: usize| -> Option<usize> {
        let bytes = frame.get(at..at.checked_add(4)?)?;
        usize::try_from(i32::from_le_bytes(bytes.try_into().expect("4 bytes"))).ok()
    };
    let blosclz = flags >> 5 == BLOSCLZ;
    for (block, start) in starts.chunks_exact(4).enumerate() {
        let last_partial = block == nblocks - 1 && leftover > 0;
        let size = if last_partial { leftover } else { blocksize };
        let split = flags & DONT_SPLIT == 0
            && typesize <= MAX_SPLITS
            && size / typesize >= MIN_BUFFERSIZE
            && !last_partial;
        let nsplits = if split { typesize } else { 1 };
        let decoded = size / nsplits;
        let mut at = u32::from_le_bytes(start.try_into().expect("4 bytes")) as usize;
        for _ in 0..nsplits {
            let stored = read_i32(at)
                .filter(|&n| n <= frame.len() - (at + 4))
                .ok_or_else(|| corrupt(format!("block {block} has a split outside the frame")))?;
            if stored > decoded {
                return Err(corrupt(format!(
                    "block {block} has a split of {stored} bytes that decodes to {decoded}"
                )));
            }
            if blosclz && stored >= BLOSCLZ_SPLIT_MAX {
                return Err(corrupt(format!(
                    "block {block} has a blosclz split of {stored} bytes, which c-blosc's decoder \
                     can overrun on (c-blosc #405); refused"
                )));
            }
            at += 4 + stored;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A frame header: flags, type size, decoded size, block size; `cbytes` is the length.
    fn header(flags: u8, typesize: u8, nbytes: u32, blocksize: u32, cbytes: u32) -> Vec<u8> {
        let mut h = vec![2, 1, flags, typesize];
        for v in [nbytes, blocksize, cbytes] {
            h.extend(v.to_le_bytes());
        }
        h
    }

    /// A frame of one unsplit block holding one split of `stored` bytes.
    fn one_split(flags: u8, nbytes: u32, stored: u32) -> Vec<u8> {
        let len = 16 + 4 + 4 + stored;
        let mut frame = header(flags | DONT_SPLIT, 1, nbytes, nbytes, len);
        frame.extend(20u32.to_le_bytes());
        frame.extend(stored.to_le_bytes());
        frame.resize(len as usize, 0xff);
        frame
    }

    #[test]
    fn accepts_a_plain_layout() {
        check(&one_split(0x20, 1000, 999), 1000).unwrap();
        check(&one_split(0x20, 1000, 1000), 1000).unwrap();
        check(&header(MEMCPYED, 1, 8, 8, 24), 8).unwrap();
    }

    #[test]
    fn refuses_what_c_blosc_would_overrun_on() {
        let message = |frame: &[u8], nbytes| match check(frame, nbytes) {
            Err(Error::CorruptChunk(m)) => m,
            other => panic!("{other:?}"),
        };
        // A split longer than it decodes to.
        assert!(message(&one_split(0x20, 1000, 1001), 1000).contains("decodes to 1000"));
        // Zero type size or block size (c-blosc #229 divides by them).
        assert!(message(&header(0, 0, 8, 8, 40), 8).contains("type size of 0"));
        assert!(message(&header(0, 1, 8, 0, 40), 8).contains("blocks of 0"));
        // Block starts or splits outside the frame.
        let mut frame = one_split(0x20, 1000, 10);
        frame[16..20].copy_from_slice(&1000u32.to_le_bytes());
        assert!(message(&frame, 1000).contains("outside"));
        let mut frame = one_split(0x20, 1000, 10);
        frame[20..24].copy_from_slice(&(-5i32).to_le_bytes());
        assert!(message(&frame, 1000).contains("outside"));
        assert!(message(&header(0x20, 1, 1 << 20, 16, 40), 1 << 20).contains("block starts"));
    }

    #[test]
    #[cfg_attr(miri, ignore = "8 MiB frames take minutes under Miri")]
    fn refuses_the_blosclz_splits_c_blosc_405_overruns_on() {
        // c-blosc #405: a blosclz split of 8 MiB in a 16 MiB block.
        let big = 16 << 20;
        match check(&one_split(0, big, 8 << 20), big as usize) {
            Err(Error::CorruptChunk(m)) => assert!(m.contains("#405"), "{m}"),
            other => panic!("{other:?}"),
        }
        // lz4 (code 1) has no such limit.
        check(&one_split(0x20, big, 8 << 20), big as usize).unwrap();
    }
}
