//! How NumPy prints data types and shapes (`str(dtype)`, `repr(shape)`), for listings that must
//! match zarr-python's text byte for byte.

use super::{ByteOrder, DataType, DataTypeKind, Field};

impl DataType {
    /// NumPy's `str(dtype)`: the type's name for numbers, booleans, datetimes and objects in
    /// the machine's byte order (`"int32"`, `"bool"`, `"datetime64[ns]"`, `"object"`), the type
    /// string for the other byte order and for byte strings, text and raw bytes (`">i4"`,
    /// `"|S5"`, `"<U3"`), the field list for records (`"[('x', '<f4'), ('y', 'u1', (2,))]"`), and
    /// ml_dtypes' names for the small types (`"bfloat16"`, `"int4"`).
    pub fn numpy_str(&self) -> String {
        let named = |prefix: &str| format!("{prefix}{}", self.size * 8);
        match &self.kind {
            DataTypeKind::Structured(fields) => field_list(fields),
            DataTypeKind::Bytes | DataTypeKind::Unicode | DataTypeKind::Raw => self.typestr(),
            _ if !matches!(self.order, ByteOrder::NotApplicable)
                && self.order != ByteOrder::NATIVE =>
            {
                self.typestr()
            }
            DataTypeKind::Bool => "bool".to_string(),
            DataTypeKind::Int => named("int"),
            DataTypeKind::UInt => named("uint"),
            DataTypeKind::Float => named("float"),
            DataTypeKind::Complex => named("complex"),
            DataTypeKind::DateTime(unit) => format!("datetime64{}", unit.suffix()),
            DataTypeKind::TimeDelta(unit) => format!("timedelta64{}", unit.suffix()),
            DataTypeKind::Object => "object".to_string(),
            // ml_dtypes' names.
            DataTypeKind::Small(t) => t.name().to_string(),
        }
    }

    /// NumPy's short construction form of a field's type: the quoted type string without a
    /// `|` order (`'<i4'`, `'u1'`, `'S3'`, `'?'` for booleans), or a nested field list.
    fn numpy_short_repr(&self) -> String {
        match &self.kind {
            DataTypeKind::Structured(fields) => field_list(fields),
            DataTypeKind::Bool => "'?'".to_string(),
            _ => format!("'{}'", self.typestr().trim_start_matches('|')),
        }
    }
}

/// A packed record's fields as NumPy lists them: `[('name', 'type'), ('name', 'type', shape)]`.
fn field_list(fields: &[Field]) -> String {
    let items: Vec<String> = fields
        .iter()
        .map(|field| {
            let name = python_str_repr(&field.name);
            let dtype = field.dtype.numpy_short_repr();
            if field.shape.is_empty() {
                format!("({name}, {dtype})")
            } else {
                format!("({name}, {dtype}, {})", python_tuple(&field.shape))
            }
        })
        .collect();
    format!("[{}]", items.join(", "))
}

/// A shape as Python prints a tuple of integers: `()`, `(5,)`, `(3, 4)`.
pub fn python_tuple(dims: &[u64]) -> String {
    match dims {
        [only] => format!("({only},)"),
        _ => {
            let parts: Vec<String> = dims.iter().map(u64::to_string).collect();
            format!("({})", parts.join(", "))
        }
    }
}

/// Python's `repr` of a string: single quotes unless the text holds `'` and no `"`; the quote,
/// backslash, `\t`, `\n`, `\r` and non-printable characters escaped. Non-printable means control
/// characters, separators other than the space, private-use characters and format characters
/// (Unicode 14, as in Python 3.11); code points Unicode has not assigned are printed as they are,
/// where Python would escape them.
fn python_str_repr(text: &str) -> String {
    let quote = if text.contains('\'') && !text.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(text.len() + 2);
    out.push(quote);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            _ if c == quote => {
                out.push('\\');
                out.push(c);
            }
            _ if !python_printable(c) => {
                let code = u32::from(c);
                out.push_str(&match code {
                    0..=0xff => format!("\\x{code:02x}"),
                    0x100..=0xffff => format!("\\u{code:04x}"),
                    _ => format!("\\U{code:08x}"),
                });
            }
            _ => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// Whether Python's `str.isprintable` holds for `c` (see [`python_str_repr`] for the cases).
fn python_printable(c: char) -> bool {
    let code = u32::from(c);
    let format_char = matches!(
        code,
        0xad | 0x600..=0x605
            | 0x61c
            | 0x6dd
            | 0x70f
            | 0x890..=0x891
            | 0x8e2
            | 0x180e
            | 0x200b..=0x200f
            | 0x202a..=0x202e
            | 0x2060..=0x2064
            | 0x2066..=0x206f
            | 0xfeff
            | 0xfff9..=0xfffb
            | 0x110bd
            | 0x110cd
            | 0x13430..=0x13438
            | 0x1bca0..=0x1bca3
            | 0x1d173..=0x1d17a
            | 0xe0001
            | 0xe0020..=0xe007f
    );
    let private_use = matches!(code, 0xe000..=0xf8ff | 0xf0000..=0x10ffff);
    c == ' ' || !(c.is_control() || c.is_whitespace() || format_char || private_use)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn numpy_str(dtype: serde_json::Value) -> String {
        DataType::parse(&dtype).unwrap().numpy_str()
    }

    #[test]
    fn prints_simple_types_as_numpy_does() {
        // Expected values are NumPy 2's str(np.dtype(t)) on a little-endian machine.
        for (typestr, expected) in [
            ("|b1", "bool"),
            ("|i1", "int8"),
            ("<i2", "int16"),
            (">i2", ">i2"),
            ("<u8", "uint64"),
            (">u1", "uint8"),
            ("<f2", "float16"),
            (">f8", ">f8"),
            ("<c8", "complex64"),
            (">c16", ">c16"),
            ("|S5", "|S5"),
            ("<U3", "<U3"),
            (">U3", ">U3"),
            ("|V7", "|V7"),
            ("<M8", "datetime64"),
            ("<M8[ns]", "datetime64[ns]"),
            ("<M8[10s]", "datetime64[10s]"),
            (">M8[10s]", ">M8[10s]"),
            ("<m8[D]", "timedelta64[D]"),
            (">m8", ">m8"),
            ("|O", "object"),
        ] {
            if cfg!(target_endian = "little") {
                assert_eq!(numpy_str(json!(typestr)), expected, "{typestr}");
            }
        }
    }

    #[test]
    fn prints_records_as_numpy_does() {
        assert_eq!(
            numpy_str(json!([["a", "<i4"], ["b", ">f8", [2, 3]]])),
            "[('a', '<i4'), ('b', '>f8', (2, 3))]"
        );
        assert_eq!(
            numpy_str(json!([
                ["x", [["y", "|u1"], ["z", "<U2"]]],
                ["w", "|S3", [4]]
            ])),
            "[('x', [('y', 'u1'), ('z', '<U2')]), ('w', 'S3', (4,))]"
        );
        assert_eq!(
            numpy_str(json!([
                ["v", "|V3"],
                ["c", "<c8"],
                ["o", ">u1"],
                ["t", "|b1", [1]]
            ])),
            "[('v', 'V3'), ('c', '<c8'), ('o', 'u1'), ('t', '?', (1,))]"
        );
        assert_eq!(
            numpy_str(json!([["s", [["y", "|u1"], ["z", "<M8[ns]"]], [2]]])),
            "[('s', [('y', 'u1'), ('z', '<M8[ns]')], (2,))]"
        );
    }

    #[test]
    fn quotes_names_as_python_does() {
        assert_eq!(python_str_repr("it's"), "\"it's\"");
        assert_eq!(python_str_repr("q\""), "'q\"'");
        assert_eq!(python_str_repr("both'\""), "'both\\'\"'");
        assert_eq!(python_str_repr("b\\n\u{1}é"), "'b\\\\n\\x01é'");
        assert_eq!(
            python_str_repr("\t\u{a0}\u{200b}\u{10ffff}"),
            "'\\t\\xa0\\u200b\\U0010ffff'"
        );
    }

    #[test]
    fn prints_shapes_as_python_tuples() {
        assert_eq!(python_tuple(&[]), "()");
        assert_eq!(python_tuple(&[100]), "(100,)");
        assert_eq!(python_tuple(&[3, 4, 5]), "(3, 4, 5)");
    }
}
