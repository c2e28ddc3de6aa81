//! A group's diagnostics, the facts zarr-python 2's `group.info` reports.

use crate::error::Result;
use crate::group::Group;
use crate::store::OpenMode;
use serde_json::{json, Value};

impl Group {
    /// Diagnostics like zarr-python's `group.info`: `name` (h5py style: `"/"` for the root,
    /// else `"/"` + path), `path`, `store` (the location it was opened with), `store_type`
    /// (as [`crate::store::StoreKind::name`] gives it), `read_only`, `num_members`, `num_arrays`,
    /// `num_groups`, and the sorted member names in `arrays` and `groups`.
    pub fn info(&self) -> Result<Value> {
        let members = self.members()?;
        let store = self.store();
        Ok(json!({
            "name": format!("/{}", self.path()),
            "path": self.path(),
            "store": store.location(),
            "store_type": store.kind().name(),
            "read_only": store.mode() == OpenMode::Read,
            "num_members": members.arrays.len() + members.groups.len(),
            "num_arrays": members.arrays.len(),
            "num_groups": members.groups.len(),
            "arrays": members.arrays,
            "groups": members.groups,
        }))
    }
}

#[cfg(test)]
mod tests {
    use crate::{Array, Group, OpenMode, StoreHandle};
    use serde_json::json;

    #[test]
    fn reports_members_and_store() {
        let store = StoreHandle::open("memory:", OpenMode::Write).unwrap();
        Group::create(store.clone(), "g/sub2").unwrap();
        Group::create(store.clone(), "g/sub1/deeper").unwrap();
        Array::create(
            store.clone(),
            "g/x",
            r#"{"shape": [2], "chunks": [2], "dtype": "<i4"}"#,
        )
        .unwrap();
        let info = Group::open(store.clone(), "g").unwrap().info().unwrap();
        assert_eq!(
            info,
            json!({"name": "/g", "path": "g", "store": "memory:", "store_type": "memory",
                   "read_only": false, "num_members": 3, "num_arrays": 1, "num_groups": 2,
                   "arrays": ["x"], "groups": ["sub1", "sub2"]})
        );
        let root = Group::open(store, "").unwrap().info().unwrap();
        assert_eq!(
            (root["name"].as_str(), root["path"].as_str()),
            (Some("/"), Some(""))
        );
        assert_eq!(root["groups"], json!(["g"]));
    }
}
