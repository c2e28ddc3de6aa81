//! The zarr-extensions data types narrower than the core ones: the small floats
//! ([`SmallFloat`]) and the integers `int2`, `int4`, `uint2`, `uint4`. In memory an element
//! is one byte (two for `bfloat16`): a small float's code, an integer's value as `int8` or
//! `uint8`. float6, float4 and the integers use the byte's low bits; the `bytes` codec stores
//! the byte, whose upper bits readers ignore, and `packbits` stores just the low bits.

use super::small_float::{Direction, SmallFloat};
use serde_json::{json, Value};

/// A zarr-extensions small float or narrow integer type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SmallType {
    /// `bfloat16` or a float8/float6/float4 format.
    Float(SmallFloat),
    /// `int2`, `int4` (`signed`), `uint2`, `uint4`.
    Int {
        /// 2 or 4.
        bits: u32,
        /// Two's complement; in memory sign-extended to the byte.
        signed: bool,
    },
}

/// The names of the narrow integer types.
const INTS: [(&str, u32, bool); 4] = [
    ("int2", 2, true),
    ("int4", 4, true),
    ("uint2", 2, false),
    ("uint4", 4, false),
];

impl SmallType {
    /// Every type, by name.
    pub fn all() -> impl Iterator<Item = SmallType> {
        SmallFloat::ALL.into_iter().map(SmallType::Float).chain(
            INTS.iter()
                .map(|&(_, bits, signed)| SmallType::Int { bits, signed }),
        )
    }

    /// The type of a zarr-extensions data type name.
    pub fn from_name(name: &str) -> Option<SmallType> {
        Self::all().find(|t| t.name() == name)
    }

    /// Its data type name (`"bfloat16"`, `"float8_e4m3"`, `"int4"`).
    pub fn name(self) -> &'static str {
        match self {
            SmallType::Float(f) => f.name(),
            SmallType::Int { bits, signed } => {
                INTS.iter()
                    .find(|&&(_, b, s)| (b, s) == (bits, signed))
                    .expect("one of the four")
                    .0
            }
        }
    }

    /// The bits a value takes: 16, 8, 6, 4 or 2.
    pub fn bits(self) -> u32 {
        match self {
            SmallType::Float(f) => f.bits(),
            SmallType::Int { bits, .. } => bits,
        }
    }

    /// Bytes per element in memory and under the `bytes` codec.
    pub fn size(self) -> usize {
        match self {
            SmallType::Float(f) => f.size(),
            SmallType::Int { .. } => 1,
        }
    }

    /// Decoding extends the sign bit over the byte (the signed integers).
    pub fn signed(self) -> bool {
        matches!(self, SmallType::Int { signed: true, .. })
    }

    /// Whether values leave bits of their bytes unused (float6, float4 and the integers).
    pub fn is_sub_byte(self) -> bool {
        self.bits() < 8
    }

    /// The byte a stored byte means, its unused upper bits ignored (cleared, or filled with
    /// the sign for the signed integers).
    pub fn normalize(self, byte: u8) -> u8 {
        let unused = 8 - self.bits();
        if self.signed() {
            (((byte << unused) as i8) >> unused) as u8
        } else {
            (byte << unused) >> unused
        }
    }

    /// Describes a byte in memory that is not a value of this type (`None` when it is one):
    /// an integer out of range, or a float6/float4 code with upper bits set.
    pub fn invalid_byte(self, byte: u8) -> Option<String> {
        if self.normalize(byte) == byte {
            return None;
        }
        Some(match self {
            SmallType::Int { signed, .. } => {
                let (lo, hi) = self.int_range();
                let value = if signed {
                    i64::from(byte as i8)
                } else {
                    i64::from(byte)
                };
                format!("{value} is outside {} [{lo}, {hi}]", self.name())
            }
            SmallType::Float(_) => format!(
                "byte {byte:#04x} is not a {} code (only its low {} bits may be set)",
                self.name(),
                self.bits()
            ),
        })
    }

    /// The smallest and largest value of an integer type.
    pub fn int_range(self) -> (i64, i64) {
        match self {
            SmallType::Int { bits, signed: true } => (-(1 << (bits - 1)), (1 << (bits - 1)) - 1),
            SmallType::Int { bits, .. } => (0, (1 << bits) - 1),
            SmallType::Float(_) => (0, 0),
        }
    }

    /// The native bytes of a v3 `fill_value` (`Err` says why it is not valid): for
    /// integers, an integer in range; for floats, a number rounded to the nearest value
    /// (half to even), `"NaN"`, `"Infinity"`, `"-Infinity"` where the format has them, or
    /// `"0x"` and the code in 2 (4 for `bfloat16`) hex digits.
    pub fn parse_fill(self, value: &Value) -> std::result::Result<Vec<u8>, String> {
        let format = match self {
            SmallType::Float(f) => f,
            SmallType::Int { .. } => {
                let (lo, hi) = self.int_range();
                let v = value
                    .as_i64()
                    .ok_or_else(|| "expected an integer".to_string())?;
                if !(lo..=hi).contains(&v) {
                    return Err(format!("out of range [{lo}, {hi}]"));
                }
                return Ok(vec![v as u8]);
            }
        };
        let code = match value {
            Value::String(text) => match text.as_str() {
                "NaN" => format
                    .canonical_nan()
                    .ok_or_else(|| format!("{format} has no NaN"))?,
                "Infinity" | "-Infinity" => {
                    let inf = format
                        .infinity()
                        .ok_or_else(|| format!("{format} has no infinity"))?;
                    let sign = 1 << (format.bits() - 1);
                    if text.starts_with('-') {
                        inf | sign
                    } else {
                        inf
                    }
                }
                _ => {
                    let digits = format.size() * 2;
                    text.strip_prefix("0x")
                        .filter(|hex| hex.len() == digits)
                        .and_then(|hex| u16::from_str_radix(hex, 16).ok())
                        .filter(|&code| code & !format.mask() == 0)
                        .ok_or_else(|| {
                            format!(
                                "expected a number, \"NaN\", \"Infinity\", \"-Infinity\" or \"0x\" and {digits} hex digits of a {}-bit code",
                                format.bits()
                            )
                        })?
                }
            },
            Value::Number(n) => {
                let x = n.as_f64().ok_or_else(|| "expected a number".to_string())?;
                let rounded = format.round(x, Direction::NearestEven);
                if rounded.out_of_range && format.infinity().is_none() {
                    return Err(format!(
                        "{format} holds values from {} to {}",
                        if format.to_f64(0) > 0.0 {
                            format.to_f64(0)
                        } else {
                            -format.max_value()
                        },
                        format.max_value()
                    ));
                }
                rounded.code
            }
            _ => return Err("expected a number or a string".into()),
        };
        let mut bytes = vec![0; format.size()];
        Self::put_code(code, &mut bytes);
        Ok(bytes)
    }

    /// The fill value an array gets when its creator names none: zero, or NaN for
    /// `float8_e8m0fnu`, which has no zero.
    pub fn default_fill(self) -> Value {
        match self {
            SmallType::Float(SmallFloat::Float8E8M0Fnu) => json!("NaN"),
            SmallType::Float(_) => json!(0.0),
            SmallType::Int { .. } => json!(0),
        }
    }

    /// The v3 JSON form of a fill value's native bytes: a number where it is one, `"NaN"`
    /// for the canonical NaN, hex for other NaNs, `"Infinity"`/`"-Infinity"`.
    pub fn fill_json(self, bytes: &[u8]) -> Value {
        match self {
            SmallType::Int { signed: true, .. } => json!(bytes[0] as i8),
            SmallType::Int { .. } => json!(bytes[0]),
            SmallType::Float(format) => {
                let code = Self::code(bytes);
                let x = format.to_f64(code);
                if Some(code) == format.canonical_nan() {
                    json!("NaN")
                } else if x.is_nan() {
                    json!(format!("0x{code:0width$x}", width = format.size() * 2))
                } else if x.is_infinite() {
                    json!(if x > 0.0 { "Infinity" } else { "-Infinity" })
                } else {
                    json!(x)
                }
            }
        }
    }

    /// The code in one element's native bytes (one byte, or two for `bfloat16`).
    pub fn code(bytes: &[u8]) -> u16 {
        match bytes {
            [b] => u16::from(*b),
            [a, b] => u16::from_ne_bytes([*a, *b]),
            _ => unreachable!("small types are one or two bytes"),
        }
    }

    /// Writes `code` as one element's native bytes (`out` is one byte, or two for `bfloat16`).
    pub fn put_code(code: u16, out: &mut [u8]) {
        match out {
            [b] => *b = code as u8,
            _ => out.copy_from_slice(&code.to_ne_bytes()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fill(name: &str, value: Value) -> std::result::Result<Value, String> {
        let t = SmallType::from_name(name).unwrap();
        t.parse_fill(&value).map(|b| t.fill_json(&b))
    }

    #[test]
    fn names_every_type() {
        assert_eq!(SmallType::all().count(), 15);
        for t in SmallType::all() {
            assert_eq!(SmallType::from_name(t.name()), Some(t));
        }
        assert_eq!(SmallType::from_name("int8"), None);
    }

    #[test]
    fn ignores_and_checks_unused_bits() {
        let int4 = SmallType::from_name("int4").unwrap();
        assert_eq!(int4.normalize(0x08), 0xf8);
        assert_eq!(int4.normalize(0x37), 0x07);
        assert_eq!(int4.invalid_byte(0xf8), None);
        assert_eq!(int4.invalid_byte(9).unwrap(), "9 is outside int4 [-8, 7]");
        let uint2 = SmallType::from_name("uint2").unwrap();
        assert_eq!(uint2.normalize(0xfc), 0);
        assert!(uint2.invalid_byte(4).is_some());
        let f4 = SmallType::from_name("float4_e2m1fn").unwrap();
        assert_eq!(f4.normalize(0xf1), 0x01);
        assert!(f4.invalid_byte(0x10).unwrap().contains("low 4 bits"));
        assert_eq!(
            SmallType::from_name("float8_e4m3").unwrap().normalize(0xff),
            0xff
        );
    }

    #[test]
    fn reads_and_writes_fill_values() {
        assert_eq!(fill("bfloat16", json!("NaN")), Ok(json!("NaN")));
        assert_eq!(fill("bfloat16", json!("0x3f80")), Ok(json!(1.0)));
        assert_eq!(fill("bfloat16", json!("0xffc1")), Ok(json!("0xffc1")));
        assert_eq!(fill("float8_e4m3", json!("0xff")), Ok(json!("0xff")));
        assert_eq!(
            fill("float8_e4m3", json!("-Infinity")),
            Ok(json!("-Infinity"))
        );
        assert_eq!(
            fill("float8_e4m3", json!(1.0625000000001)),
            Ok(json!(1.125))
        );
        assert_eq!(fill("float8_e4m3fnuz", json!(-0.0)), Ok(json!(0.0)));
        assert_eq!(fill("float6_e2m3fn", json!(-0.0)), Ok(json!(-0.0)));
        assert_eq!(fill("float8_e8m0fnu", json!(0.25)), Ok(json!(0.25)));
        assert_eq!(fill("int4", json!(-3)), Ok(json!(-3)));
        assert_eq!(fill("uint2", json!(3)), Ok(json!(3)));
        for (name, bad) in [
            ("float4_e2m1fn", json!("NaN")),
            ("float4_e2m1fn", json!("0xff")),
            ("float4_e2m1fn", json!(7.0)),
            ("float6_e3m2fn", json!("Infinity")),
            ("float8_e4m3fnuz", json!("Infinity")),
            ("float8_e4m3fnuz", json!(1e6)),
            ("float8_e8m0fnu", json!(0)),
            ("float8_e8m0fnu", json!(-1)),
            ("bfloat16", json!("0x3f")),
            ("bfloat16", json!(true)),
            ("int4", json!(8)),
            ("int4", json!(1.5)),
            ("int4", json!("0x1")),
            ("uint2", json!(-1)),
        ] {
            assert!(fill(name, bad.clone()).is_err(), "{name} {bad}");
        }
    }
}
