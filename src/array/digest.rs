//! An array's digest, as zarr-python 2's `Array.digest(hashname)` computes it.

use super::Array;
use crate::error::{Error, Result};
use crate::metadata::{ZARRAY, ZARR_JSON, ZATTRS};
use crate::path;
use sha2::Digest;

/// The hash algorithms `Array::digest` knows, by the names Python's `hashlib` gives them.
pub const HASH_NAMES: [&str; 6] = ["md5", "sha1", "sha224", "sha256", "sha384", "sha512"];

/// `hashname`'s digest of everything `feed` hands to its sink, in order.
fn hash(hashname: &str, feed: impl FnOnce(&mut dyn FnMut(&[u8])) -> Result<()>) -> Result<Vec<u8>> {
    fn run<D: Digest>(feed: impl FnOnce(&mut dyn FnMut(&[u8])) -> Result<()>) -> Result<Vec<u8>> {
        let mut hasher = D::new();
        feed(&mut |bytes| hasher.update(bytes))?;
        Ok(hasher.finalize().to_vec())
    }
    match hashname.to_ascii_lowercase().as_str() {
        "md5" => run::<md5::Md5>(feed),
        "sha1" => run::<sha1::Sha1>(feed),
        "sha224" => run::<sha2::Sha224>(feed),
        "sha256" => run::<sha2::Sha256>(feed),
        "sha384" => run::<sha2::Sha384>(feed),
        "sha512" => run::<sha2::Sha512>(feed),
        _ => Err(Error::Unsupported(format!(
            "hash {hashname:?} (known: {})",
            HASH_NAMES.join(", ")
        ))),
    }
}

impl Array {
    /// The digest zarr-python 2's `Array.digest(hashname)` gives: one hash over the stored bytes
    /// of every chunk of the grid in C order of the chunk positions (a chunk never written adds
    /// nothing), then the stored metadata document (`.zarray`), then the stored attributes
    /// (`.zattrs`, nothing when absent). A v3 array hashes its chunks (shards) the same way,
    /// then its `zarr.json`, which holds its attributes. Stored keys outside the current grid
    /// (left by a shrinking resize) are not hashed, as zarr-python only visits the grid; only
    /// stored chunks are read, so sparse arrays of any size hash quickly.
    pub fn digest(&self, hashname: &str) -> Result<Vec<u8>> {
        let grid = self.chunk_grid().grid_shape(&self.shape());
        let mut chunks: Vec<Vec<u64>> = self
            .stored_chunks()?
            .into_iter()
            .filter(|coords| coords.iter().zip(&grid).all(|(i, n)| i < n))
            .collect();
        chunks.sort_unstable();
        chunks.dedup();
        let documents: &[&str] = match self.zarr_format() {
            3 => &[ZARR_JSON],
            _ => &[ZARRAY, ZATTRS],
        };
        hash(hashname, |sink| {
            for coords in &chunks {
                let key = self.chunk_key(coords);
                if let Some(bytes) = self.fetch_chunk(&key, |key| self.store.get(key))? {
                    sink(&bytes);
                }
            }
            for name in documents {
                if let Some(bytes) = self.store.get(&path::join(&self.path, name))? {
                    sink(&bytes);
                }
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::StoreHandle;
    use crate::OpenMode;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn hashes_chunks_in_grid_order_then_metadata_then_attributes() {
        let store = StoreHandle::open("memory:", OpenMode::Write).unwrap();
        let doc = r#"{"shape": [60], "chunks": [5], "dtype": "|u1", "compressor": null}"#;
        let array = Array::create(store.clone(), "a", doc).unwrap();
        // Chunk 10 sorts before 2 as text; the digest goes by position.
        store.set("a/10", &[9, 9]).unwrap();
        store.set("a/2", &[1; 5]).unwrap();
        store.set("a/12", b"outside the grid").unwrap();
        let zarray = store.get("a/.zarray").unwrap().unwrap();
        let mut expected = vec![1u8; 5];
        expected.extend([9, 9]);
        expected.extend(&zarray);
        let expect = |name: &str, bytes: &[u8]| {
            hash(name, |sink| {
                sink(bytes);
                Ok(())
            })
            .unwrap()
        };
        assert_eq!(array.digest("sha1").unwrap(), expect("sha1", &expected));
        assert_eq!(array.digest("MD5").unwrap(), expect("md5", &expected));
        assert_eq!(array.digest("sha256").unwrap().len(), 32);
        array.set_attributes(r#"{"x": 1}"#).unwrap();
        expected.extend(store.get("a/.zattrs").unwrap().unwrap());
        assert_eq!(array.digest("sha512").unwrap(), expect("sha512", &expected));
        let err = array.digest("whirlpool").unwrap_err();
        assert!(
            matches!(&err, Error::Unsupported(m) if m.contains("whirlpool")),
            "{err}"
        );
    }

    #[test]
    fn known_answers() {
        let empty = |name| hex(&hash(name, |_| Ok(())).unwrap());
        assert_eq!(empty("sha1"), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
        assert_eq!(empty("md5"), "d41d8cd98f00b204e9800998ecf8427e");
        assert_eq!(
            empty("sha256"),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
