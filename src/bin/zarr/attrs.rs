//! `zarr attrs`: a node's attributes as JSON, changed first by `--set` and `--delete`.

use crate::{Node, Result};
use serde_json::Value;
use zarr::hierarchy;
use zarr::Error;

/// Applies `set` (`KEY=JSON` each) and `delete` (keys), then prints the attributes (without
/// changes, as stored).
pub fn run(node: &Node, set: &[String], delete: &[String]) -> Result<String> {
    let changing = !set.is_empty() || !delete.is_empty();
    let (store, path, _) = node.find(changing)?;
    let text = hierarchy::attributes(&store, &path)?;
    if !changing {
        return Ok(text); // as stored, NaN and Infinity included
    }
    let mut attributes: serde_json::Map<String, Value> =
        serde_json::from_str(&text).map_err(|e| {
            Error::Unsupported(format!(
                "the attributes of {path:?} are no strict JSON ({e}; NaN or Infinity?), so they \
             cannot be rewritten faithfully"
            ))
        })?;
    {
        for item in set {
            let (key, value) = item.split_once('=').ok_or_else(|| {
                Error::InvalidArgument(format!("--set {item:?}: expected KEY=VALUE"))
            })?;
            let value: Value = serde_json::from_str(value).map_err(|e| {
                Error::InvalidArgument(format!(
                    "--set {key}: the value {value:?} is not JSON ({e}); a string needs its quotes"
                ))
            })?;
            attributes.insert(key.to_string(), value);
        }
        for key in delete {
            if attributes.remove(key).is_none() {
                return Err(Error::NotFound(format!("--delete {key:?}: no such attribute")).into());
            }
        }
        hierarchy::set_attributes(
            &store,
            &path,
            &Value::Object(attributes.clone()).to_string(),
        )?;
        store.close()?;
    }
    Ok(serde_json::to_string_pretty(&attributes)?)
}
