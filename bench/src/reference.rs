//! The two physical references: the uncompressed chunk files read into one buffer, and a
//! plain memory copy of the array's size. Both use the rayon pool (all cores).

use crate::subject::{bytes_of, read_zarray, shape_and_chunks, Result, Sink, Subject};
use rayon::prelude::*;
use serde_json::Value;
use std::io::Read;
use std::sync::OnceLock;

/// Reads (or, for the write row, writes) an uncompressed array's chunk files as raw bytes,
/// with no decoding and no rearranging: the file-system floor for that array.
pub struct RawFiles;

/// The chunk keys of an array (`i.j.k` or `i/j/k`), in C order of the chunk grid.
fn chunk_keys(zarray: &Value) -> Result<Vec<String>> {
    let (shape, chunks) = shape_and_chunks(zarray)?;
    let sep = zarray["dimension_separator"].as_str().unwrap_or(".");
    let grid: Vec<u64> = shape
        .iter()
        .zip(&chunks)
        .map(|(s, c)| s.div_ceil(*c))
        .collect();
    let mut keys = Vec::new();
    let mut index = vec![0u64; grid.len()];
    for _ in 0..grid.iter().product::<u64>() {
        keys.push(
            index
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(sep),
        );
        for d in (0..grid.len()).rev() {
            index[d] += 1;
            if index[d] < grid[d] {
                break;
            }
            index[d] = 0;
        }
    }
    Ok(keys)
}

/// Bytes of one chunk of a `.zarray` whose dtype is a NumPy type string such as `<u2`.
fn chunk_bytes(zarray: &Value) -> Result<usize> {
    let (_, chunks) = shape_and_chunks(zarray)?;
    let dtype = zarray["dtype"].as_str().unwrap_or_default();
    let item: usize = dtype
        .get(2..)
        .and_then(|n| n.parse().ok())
        .ok_or("bad dtype")?;
    Ok(chunks.iter().product::<u64>() as usize * item)
}

impl Subject for RawFiles {
    fn version(&self) -> String {
        "-".into()
    }

    fn threads(&self) -> String {
        format!("{} (rayon global pool)", rayon::current_num_threads())
    }

    /// Reads every chunk file, which must hold exactly one chunk's bytes, into one buffer.
    fn read_all(&self, path: &str, sink: &mut Sink) -> Result<()> {
        let zarray = read_zarray(path)?;
        let (keys, size) = (chunk_keys(&zarray)?, chunk_bytes(&zarray)?);
        let mut out = vec![0u8; keys.len() * size];
        out.par_chunks_mut(size)
            .zip(&keys)
            .try_for_each(|(dst, key)| -> Result<()> {
                let mut file = std::fs::File::open(format!("{path}/{key}"))?;
                file.read_exact(dst)?;
                match file.read(&mut [0])? {
                    0 => Ok(()),
                    _ => Err(format!("{key} is larger than one chunk").into()),
                }
            })?;
        sink.take(&out);
        Ok(())
    }

    /// Writes `.zarray` and consecutive chunk-sized slices of `data` as the chunk files
    /// (`metadata` must be an uncompressed v2 `.zarray`).
    fn write(&self, path: &str, zarray: &Value, data: &[u16]) -> Result<()> {
        std::fs::create_dir_all(path)?;
        std::fs::write(format!("{path}/.zarray"), zarray.to_string())?;
        let (keys, size) = (chunk_keys(zarray)?, chunk_bytes(zarray)?);
        bytes_of(data)
            .par_chunks(size)
            .zip(&keys)
            .try_for_each(|(chunk, key)| std::fs::write(format!("{path}/{key}"), chunk))?;
        Ok(())
    }
}

/// Copies the array's bytes (loaded once from the raw source file given as `path`) into a
/// freshly allocated buffer: the memory floor of producing the array, page faults included.
#[derive(Default)]
pub struct Memcpy {
    source: OnceLock<Vec<u8>>,
}

/// Bytes each parallel copy task moves.
const COPY_BLOCK: usize = 1 << 20;

impl Subject for Memcpy {
    fn version(&self) -> String {
        "-".into()
    }

    fn threads(&self) -> String {
        format!(
            "{} (rayon global pool, 1 MiB blocks)",
            rayon::current_num_threads()
        )
    }

    fn read_all(&self, path: &str, sink: &mut Sink) -> Result<()> {
        if self.source.get().is_none() {
            let _ = self.source.set(std::fs::read(path)?);
        }
        let source = &self.source.get().expect("set above");
        let mut out = vec![0u8; source.len()];
        out.par_chunks_mut(COPY_BLOCK)
            .zip(source.par_chunks(COPY_BLOCK))
            .for_each(|(dst, src)| dst.copy_from_slice(src));
        sink.take(&out);
        Ok(())
    }
}
