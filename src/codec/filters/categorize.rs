//! numcodecs `Categorize`: text values replaced by their 1-based index in a list of labels
//! (0 for text not in the list).

use super::alloc;
use super::numeric::{ElemType, Kind, Num, NumType, PyScalar};
use super::{count, num_dtype};
use crate::codec::config::Config;
use crate::codec::filter::{check_len, ragged, Filter};
use crate::error::{Error, Result};
use serde_json::{json, Map, Value};
use std::collections::HashMap;

/// `{"id": "categorize", "labels": ["a", "b"], "dtype": "<U1", "astype": "|u1"}`.
///
/// For fixed-width text (`<U`/`>U`) arrays; for object arrays (`"|O"`) it is the object codec
/// (`dtype::ObjectCodec::Categorize`), the array's first filter.
/// As in NumPy, text compares without its trailing NUL padding, a label matching several
/// elements' text gets them all, a repeated label's last index wins, and decoding truncates
/// labels longer than the type holds. Like numcodecs, encoding fails when a label's index
/// does not fit `astype` (more than 255 labels for `|u1`), while decoding still works.
#[derive(Debug, Clone)]
pub struct Categorize {
    labels: Vec<String>,
    /// Characters per element.
    chars: usize,
    big: bool,
    astype: NumType,
    /// Each label's code points without trailing NULs, mapped to its last index + 1.
    index: HashMap<Vec<u32>, usize>,
    /// The code each index + 1 encodes to, or why it does not fit `astype`.
    codes: std::result::Result<Vec<Num>, String>,
    /// For decoding: the label index for each code value (by its bit pattern as f64 or i128).
    by_code: HashMap<CodeKey, usize>,
}

/// A code value as decoding compares it with `i + 1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum CodeKey {
    Int(i128),
    Float(u64),
}

impl Categorize {
    /// Reads `labels` (a list of strings) and `dtype` (`<Un`/`>Un`; `|O` only as an object codec),
    /// both required, and `astype` (a numeric type, default `|u1`).
    pub(crate) fn from_config(obj: &Map<String, Value>) -> Result<(Categorize, ElemType)> {
        let cfg = Config::filter(obj, "categorize");
        let labels: Vec<String> = cfg
            .required("labels")?
            .as_array()
            .and_then(|list| list.iter().map(|l| l.as_str().map(String::from)).collect())
            .ok_or_else(|| cfg.invalid("labels", "a list of strings"))?;
        let dtype_value = cfg.required("dtype")?;
        let (chars, big) = match dtype_value.as_str().and_then(ElemType::parse) {
            Some(ElemType::Unicode { chars, big }) => (chars, big),
            Some(ElemType::Object) => {
                return Err(Error::InvalidMetadata(
                    "categorize filter with dtype \"|O\": the object codec of an object array, so its first filter".into(),
                ))
            }
            _ => return Err(cfg.invalid("dtype", "a unicode type such as \"<U10\" (or \"|O\")")),
        };
        let astype = num_dtype(&cfg, "astype", Some(NumType::U1))?;
        let mut index = HashMap::new();
        for (i, label) in labels.iter().enumerate() {
            index.insert(trimmed(label.chars().map(u32::from)), i + 1);
        }
        let codes = (1..=labels.len())
            .map(|i| astype.weak(PyScalar::Int(i as i128)))
            .collect();
        let mut by_code = HashMap::new();
        for i in 0..labels.len() {
            // NumPy compares `enc == i + 1` with `i + 1` converted to `astype` (for floats,
            // rounded to its precision); later labels win.
            let key = match astype.kind {
                Kind::Bool => Some(CodeKey::Int(i as i128 + 1)),
                Kind::Int | Kind::UInt => Some(CodeKey::Int(i as i128 + 1)),
                _ => match astype.weak(PyScalar::Int(i as i128 + 1)) {
                    Ok(Num::F(x) | Num::C(x, _)) if x.is_finite() => {
                        Some(CodeKey::Float(x.to_bits()))
                    }
                    _ => None,
                },
            };
            if let Some(key) = key {
                by_code.insert(key, i);
            }
        }
        let filter = Categorize {
            labels,
            chars,
            big,
            astype,
            index,
            codes,
            by_code,
        };
        Ok((filter, ElemType::Num(astype)))
    }

    fn dtype(&self) -> ElemType {
        ElemType::Unicode {
            chars: self.chars,
            big: self.big,
        }
    }

    /// The label index (if any) a decoded code value selects.
    fn label_for(&self, code: Num) -> Option<usize> {
        let key = match code {
            Num::B(b) => CodeKey::Int((b != 0).into()),
            Num::I(i) => CodeKey::Int(i.into()),
            Num::U(u) => CodeKey::Int(u.into()),
            Num::F(x) => CodeKey::Float((x + 0.0).to_bits()),
            Num::C(x, 0.0) => CodeKey::Float((x + 0.0).to_bits()),
            Num::C(..) => return None,
        };
        self.by_code.get(&key).copied()
    }
}

/// Code points without trailing NULs (NumPy's string comparison ignores them).
fn trimmed(units: impl Iterator<Item = u32>) -> Vec<u32> {
    let mut v: Vec<u32> = units.collect();
    while v.last() == Some(&0) {
        v.pop();
    }
    v
}

impl Filter for Categorize {
    fn id(&self) -> &'static str {
        "categorize"
    }

    fn config(&self) -> Value {
        json!({
            "id": "categorize",
            "labels": self.labels,
            "dtype": self.dtype().typestr(),
            "astype": self.astype.typestr(),
        })
    }

    fn encode(&self, input: &[u8]) -> Result<Vec<u8>> {
        let codes = self.codes.as_ref().map_err(|m| {
            Error::InvalidMetadata(format!("categorize filter: cannot encode: {m}"))
        })?;
        let size = self.chars * 4;
        if size == 0 || !input.len().is_multiple_of(size) {
            return Err(ragged(
                "categorize",
                input.len(),
                &self.dtype().typestr(),
                false,
            ));
        }
        let n = input.len() / size;
        let to = self.astype;
        let mut out = alloc(n * to.size)?;
        for (src, dst) in input.chunks_exact(size).zip(out.chunks_exact_mut(to.size)) {
            let text = trimmed(src.chunks_exact(4).map(|u| {
                let u = [u[0], u[1], u[2], u[3]];
                if self.big {
                    u32::from_be_bytes(u)
                } else {
                    u32::from_le_bytes(u)
                }
            }));
            let code = match self.index.get(&text) {
                Some(&i) => codes[i - 1],
                None => Num::U(0),
            };
            to.write(code, dst);
        }
        Ok(out)
    }

    fn decode(&self, input: &[u8], max_len: usize) -> Result<Vec<u8>> {
        let n = count("categorize", input, self.astype, true)?;
        let size = self.chars * 4;
        let len = n.saturating_mul(size);
        check_len("categorize", len, max_len)?;
        let mut out = alloc(len)?;
        for (src, dst) in input
            .chunks_exact(self.astype.size)
            .zip(out.chunks_exact_mut(size.max(1)))
        {
            if let Some(i) = self.label_for(self.astype.read(src)) {
                for (unit, c) in dst.chunks_exact_mut(4).zip(self.labels[i].chars()) {
                    let c = u32::from(c);
                    unit.copy_from_slice(&if self.big {
                        c.to_be_bytes()
                    } else {
                        c.to_le_bytes()
                    });
                }
            }
        }
        Ok(out)
    }

    fn encoded_len(&self, decoded_len: usize) -> Option<usize> {
        let size = self.chars * 4;
        (size > 0 && decoded_len.is_multiple_of(size))
            .then(|| decoded_len / size * self.astype.size)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use crate::error::Error;
    use serde_json::json;

    /// Fixed-width text as NumPy stores it: UTF-32 code units, NUL-padded to `chars`.
    fn text(values: &[&str], chars: usize, big: bool) -> Vec<u8> {
        let mut out = Vec::new();
        for v in values {
            let mut units: Vec<u32> = v.chars().map(u32::from).collect();
            units.resize(chars, 0);
            for u in units {
                out.extend(if big {
                    u.to_be_bytes()
                } else {
                    u.to_le_bytes()
                });
            }
        }
        out
    }

    #[test]
    fn matches_numcodecs_fixtures() {
        // numcodecs.Categorize(labels=['female', 'male'], dtype='<U10')
        //   .encode(np.array(['male', 'female', 'female', 'male', 'unexpected'], '<U10'))
        // and its decode (its docstring, with a text array; 0.15.2 and 0.16.6).
        let config = json!({"id": "categorize", "labels": ["female", "male"], "dtype": "<U10"});
        let f = ok(config, "<U10");
        assert_eq!(
            f.config(),
            json!({"id": "categorize", "labels": ["female", "male"], "dtype": "<U10", "astype": "|u1"})
        );
        let input = text(
            &["male", "female", "female", "male", "unexpected"],
            10,
            false,
        );
        let (enc, dec) = round_trip(&*f, &input);
        assert_eq!(enc, [2, 1, 1, 2, 0]);
        assert_eq!(
            dec,
            text(&["male", "female", "female", "male", ""], 10, false)
        );

        // Categorize(labels=['é', 'ab\x00', '😀'], dtype='>U2', astype='<i2')
        //   .encode(np.array(['😀', 'ab', 'a', 'é'], '>U2')), and
        //   .decode(np.array([3, 2, 0, 1, 7], '<i2')): trailing NULs do not count.
        let config = json!({"id": "categorize", "labels": ["é", "ab\u{0}", "😀"], "dtype": ">U2", "astype": "<i2"});
        let f = ok(config, ">U2");
        assert_eq!(
            f.encode(&text(&["😀", "ab", "a", "é"], 2, true)).unwrap(),
            unhex("0300020000000100")
        );
        assert_eq!(
            f.decode(&unhex("03000200000001000700"), 40).unwrap(),
            unhex(
                "0001f6000000000000000061000000620000000000000000000000e9000000000000000000000000"
            )
        );
    }

    #[test]
    fn follows_numpy_comparisons() {
        // A repeated label's last index wins; labels longer than the type never match and
        // are truncated when decoding.
        let config = json!({"id": "categorize", "labels": ["a", "abcd", "a"], "dtype": "<U3"});
        let f = ok(config, "<U3");
        assert_eq!(
            f.encode(&text(&["a", "abc", ""], 3, false)).unwrap(),
            [3, 0, 0]
        );
        assert_eq!(
            f.decode(&[2, 1, 3], 36).unwrap(),
            text(&["abc", "a", "a"], 3, false)
        );
        // Float codes compare after rounding to the type: in float16, 2049 is 2048.
        let labels: Vec<String> = (0..2049).map(|i| i.to_string()).collect();
        let config = json!({"id": "categorize", "labels": labels, "dtype": "<U4", "astype": "<f2"});
        let f = ok(config, "<U4");
        let codes = f.encode(&text(&["2047", "2048"], 4, false)).unwrap();
        assert_eq!(codes, unhex("00680068"));
        assert_eq!(
            f.decode(&codes, 32).unwrap(),
            text(&["2048", "2048"], 4, false)
        );
    }

    #[test]
    fn too_many_labels_fail_to_encode_only() {
        // numcodecs raises OverflowError for 256 and more labels with |u1, even when no value
        // matches, but decodes.
        let labels: Vec<String> = (0..300).map(|i| i.to_string()).collect();
        let f = ok(
            json!({"id": "categorize", "labels": labels, "dtype": "<U3"}),
            "<U3",
        );
        let err = f.encode(&text(&["x"], 3, false)).unwrap_err();
        assert!(
            matches!(err, Error::InvalidMetadata(ref m) if m.contains("categorize")),
            "{err}"
        );
        assert_eq!(
            f.decode(&[1, 255], 24).unwrap(),
            text(&["0", "254"], 3, false)
        );
    }

    #[test]
    fn rejects_bad_config_and_sizes() {
        let err = filter(
            json!({"id": "categorize", "labels": [], "dtype": "|O"}),
            "|O",
        )
        .unwrap_err();
        assert!(
            matches!(err, Error::InvalidMetadata(ref m) if m.contains("object codec")),
            "{err}"
        );
        assert_invalid(
            json!({"id": "categorize", "labels": ["a"], "dtype": "<i4"}),
            "<i4",
            "dtype",
        );
        assert_invalid(
            json!({"id": "categorize", "labels": [1], "dtype": "<U1"}),
            "<U1",
            "labels",
        );
        assert_invalid(json!({"id": "categorize", "dtype": "<U1"}), "<U1", "labels");
        assert_invalid(
            json!({"id": "categorize", "labels": [], "dtype": "<U1", "astype": "|O"}),
            "<U1",
            "astype",
        );
        let f = ok(
            json!({"id": "categorize", "labels": ["a"], "dtype": "<U2"}),
            "<U2",
        );
        assert!(matches!(f.encode(&[0; 12]), Err(Error::InvalidMetadata(_))));
        assert_corrupt(f.decode(&[1; 10], 79), "categorize");
    }
}
