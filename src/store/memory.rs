//! An in-memory store: a sorted map from key to bytes.

use super::{sorted_keys, Store};
use crate::error::Result;
use crate::path::{validate_key, validate_prefix};
use std::collections::BTreeMap;
use std::sync::RwLock;

/// A store that keeps every key in memory; it disappears with its last handle.
#[derive(Debug, Default)]
pub struct MemoryStore {
    entries: RwLock<BTreeMap<String, Vec<u8>>>,
}

impl MemoryStore {
    fn read(&self) -> std::sync::RwLockReadGuard<'_, BTreeMap<String, Vec<u8>>> {
        self.entries.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, BTreeMap<String, Vec<u8>>> {
        self.entries.write().unwrap_or_else(|p| p.into_inner())
    }
}

impl Store for MemoryStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        validate_key(key)?;
        Ok(self.read().get(key).cloned())
    }

    fn get_into(&self, key: &str, buf: &mut Vec<u8>) -> Result<bool> {
        validate_key(key)?;
        buf.clear();
        Ok(self
            .read()
            .get(key)
            .map(|v| buf.extend_from_slice(v))
            .is_some())
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        validate_key(key)?;
        self.write().insert(key.to_string(), value.to_vec());
        Ok(())
    }

    fn erase(&self, key: &str) -> Result<()> {
        validate_key(key)?;
        self.write().remove(key);
        Ok(())
    }

    fn value_len(&self, key: &str) -> Result<Option<u64>> {
        validate_key(key)?;
        Ok(self.read().get(key).map(|v| v.len() as u64))
    }

    fn contains(&self, key: &str) -> Result<bool> {
        validate_key(key)?;
        Ok(self.read().contains_key(key))
    }

    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        validate_prefix(prefix)?;
        Ok(sorted_keys::list_prefix(&self.read(), prefix))
    }

    fn list_dir(&self, prefix: &str) -> Result<Vec<String>> {
        validate_prefix(prefix)?;
        Ok(sorted_keys::list_dir(&self.read(), prefix))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn behaves_like_a_store() {
        super::super::tests::exercise_store(&super::MemoryStore::default());
    }
}
