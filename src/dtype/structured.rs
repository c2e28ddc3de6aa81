//! Structured (record) types: `[["x", "<f4"], ["z", "<f4", [2, 2]], ["inner", [...]]]`.

use super::{ByteOrder, DataType, DataTypeKind};
use crate::error::{Error, Result};
use serde_json::{json, Value};

/// One named field of a structured type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// The field's name (unique within its record).
    pub name: String,
    /// The type of one element of the field.
    pub dtype: DataType,
    /// The sub-array shape (`[]` for a scalar field).
    pub shape: Vec<u64>,
    /// Byte offset of the field inside the record (fields are packed, in order).
    pub offset: usize,
}

impl Field {
    /// Number of elements of the field's type it holds (1 for a scalar field).
    pub fn count(&self) -> usize {
        self.shape.iter().product::<u64>() as usize
    }

    /// Bytes the field takes in a record.
    pub fn size(&self) -> usize {
        self.dtype.size * self.count()
    }

    /// The field as JSON: `{"name", "dtype", "offset", "itemsize", "shape"}`, and `"fields"`
    /// (the same for each) when its type is a record itself.
    pub fn to_json(&self) -> Value {
        let mut info = json!({
            "name": self.name,
            "dtype": self.dtype.to_json(),
            "offset": self.offset,
            "itemsize": self.size(),
            "shape": self.shape,
        });
        if let DataTypeKind::Structured(inner) = &self.dtype.kind {
            info["fields"] = inner.iter().map(Field::to_json).collect();
        }
        info
    }
}

/// `(offset in the full record, offset in the packed record, length)` of each selected field.
pub type FieldRanges = Vec<(usize, usize, usize)>;

/// The record type holding only the fields `names` of `fields`, packed in that order, and
/// where each selected field lies in both records.
pub fn select_fields(fields: &[Field], names: &[&str]) -> Result<(DataType, FieldRanges)> {
    if names.is_empty() {
        return Err(Error::InvalidArgument("no fields selected".into()));
    }
    let mut picked = Vec::with_capacity(names.len());
    let mut ranges = Vec::with_capacity(names.len());
    let mut offset = 0;
    for &name in names {
        let field = fields.iter().find(|f| f.name == name).ok_or_else(|| {
            let known: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
            Error::InvalidArgument(format!("no field {name:?} (fields: {known:?})"))
        })?;
        if picked.iter().any(|f: &Field| f.name == name) {
            return Err(Error::InvalidArgument(format!(
                "field {name:?} selected twice"
            )));
        }
        ranges.push((field.offset, offset, field.size()));
        picked.push(Field {
            offset,
            ..field.clone()
        });
        offset += field.size();
    }
    let packed = DataType {
        kind: DataTypeKind::Structured(picked),
        size: offset,
        order: ByteOrder::NotApplicable,
    };
    Ok((packed, ranges))
}

/// Parses the list form of a structured type.
pub(super) fn parse_fields(list: &[Value]) -> Result<DataType> {
    let invalid = |why: String| Error::InvalidMetadata(format!("structured dtype: {why}"));
    if list.is_empty() {
        return Err(invalid("it has no fields".into()));
    }
    let mut fields: Vec<Field> = Vec::with_capacity(list.len());
    let mut offset = 0usize;
    for entry in list {
        let parts = entry
            .as_array()
            .filter(|p| p.len() == 2 || p.len() == 3)
            .ok_or_else(|| {
                invalid(format!(
                    "field {entry} is not [name, type] or [name, type, shape]"
                ))
            })?;
        let name = parts[0]
            .as_str()
            .filter(|n| !n.is_empty())
            .ok_or_else(|| invalid(format!("field name {} is not a non-empty string", parts[0])))?;
        if fields.iter().any(|f| f.name == name) {
            return Err(invalid(format!("field name {name:?} appears twice")));
        }
        let dtype = DataType::parse(&parts[1]).map_err(|e| e.context(format!("field {name:?}")))?;
        let shape = match parts.get(2) {
            None => Vec::new(),
            Some(Value::Array(dims)) => dims
                .iter()
                .map(|d| d.as_u64().filter(|&n| n > 0))
                .collect::<Option<Vec<u64>>>()
                .ok_or_else(|| {
                    invalid(format!(
                        "field {name:?} has shape {}, not positive integers",
                        parts[2]
                    ))
                })?,
            Some(other) => {
                return Err(invalid(format!(
                    "field {name:?} has shape {other}, not a list"
                )))
            }
        };
        let size = shape
            .iter()
            .try_fold(dtype.size, |acc, &n| {
                acc.checked_mul(usize::try_from(n).ok()?)
            })
            .ok_or_else(|| invalid(format!("field {name:?} is too large")))?;
        let field = Field {
            name: name.to_string(),
            dtype,
            shape,
            offset,
        };
        offset = offset
            .checked_add(size)
            .ok_or_else(|| invalid("the record is too large".into()))?;
        fields.push(field);
    }
    Ok(DataType {
        kind: DataTypeKind::Structured(fields),
        size: offset,
        order: ByteOrder::NotApplicable,
    })
}

/// The list form of a structured type, as zarr-python writes it.
pub(super) fn fields_to_json(fields: &[Field]) -> Value {
    Value::Array(
        fields
            .iter()
            .map(|f| match f.shape.as_slice() {
                [] => json!([f.name, f.dtype.to_json()]),
                shape => json!([f.name, f.dtype.to_json(), shape]),
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_nested_records_with_sub_arrays() {
        let doc = json!([
            ["x", "<f4"],
            ["z", ">i2", [2, 3]],
            ["inner", [["a", "|u1"], ["s", "|S3"]]]
        ]);
        let dt = DataType::parse(&doc).unwrap();
        assert_eq!(dt.size, 4 + 12 + 4);
        let DataTypeKind::Structured(fields) = &dt.kind else {
            panic!("not structured")
        };
        assert_eq!(
            fields.iter().map(|f| f.offset).collect::<Vec<_>>(),
            vec![0, 4, 16]
        );
        assert_eq!(fields[1].count(), 6);
        assert_eq!(dt.to_json(), doc);
    }

    #[test]
    fn selects_fields_in_the_order_asked() {
        let dt = DataType::parse(&json!([["x", "<f4"], ["z", ">i2", [2]], ["s", "|S3"]])).unwrap();
        let DataTypeKind::Structured(fields) = &dt.kind else {
            panic!("not structured")
        };
        let (packed, ranges) = select_fields(fields, &["s", "x"]).unwrap();
        assert_eq!(packed.size, 7);
        assert_eq!(ranges, vec![(8, 0, 3), (0, 3, 4)]);
        assert!(select_fields(fields, &["nope"]).is_err());
        assert!(select_fields(fields, &["x", "x"]).is_err());
        assert!(select_fields(fields, &[]).is_err());
    }

    #[test]
    fn refuses_malformed_records() {
        for bad in [
            json!([]),
            json!([["x"]]),
            json!([["", "<f4"]]),
            json!([[1, "<f4"]]),
            json!([["x", "<f4"], ["x", "<i4"]]),
            json!([["x", "<f4", [0]]]),
            json!([["x", "<f4", 2]]),
            json!([["x", "<q4"]]),
            json!(["x"]),
        ] {
            assert!(DataType::parse(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn records_with_object_fields_hold_objects() {
        let with = DataType::parse(&json!([["i", "<i4"], ["inner", [["o", "|O"]]]])).unwrap();
        assert!(with.holds_objects());
        let without = DataType::parse(&json!([["i", "<i4"], ["s", "|S2"]])).unwrap();
        assert!(!without.holds_objects());
    }
}
