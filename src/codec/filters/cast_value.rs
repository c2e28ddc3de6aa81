//! The registered Zarr v3 `cast_value` codec (zarr-extensions `codecs/cast_value`): each
//! element converted by value to another integer or float type, with a rounding mode, an
//! out-of-range rule and an optional explicit scalar map, and back on decode.

use super::numeric::{f16_to_f64, f64_to_f16, ElemType, Kind, Num, NumType};
use super::{check_keys, real_type, v3_name, v3_scalar};
use crate::codec::filter::{check_len, ragged, Filter};
use crate::dtype::small_float::Direction;
use crate::dtype::v3::{parse_data_type, to_json};
use crate::dtype::{DataTypeKind, SmallFloat, SmallType};
use crate::error::{Error, Result};
use serde_json::{json, Map, Value};

/// How a value the target type cannot hold exactly is rounded (`rounding`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rounding {
    /// `"nearest-even"` (the default): IEEE 754 roundTiesToEven.
    NearestEven,
    /// `"towards-zero"`: truncation.
    TowardsZero,
    /// `"towards-positive"`: the ceiling.
    TowardsPositive,
    /// `"towards-negative"`: the floor.
    TowardsNegative,
    /// `"nearest-away"`: to nearest, ties away from zero.
    NearestAway,
}

/// The rounding modes by name.
const ROUNDINGS: [(&str, Rounding); 5] = [
    ("nearest-even", Rounding::NearestEven),
    ("towards-zero", Rounding::TowardsZero),
    ("towards-positive", Rounding::TowardsPositive),
    ("towards-negative", Rounding::TowardsNegative),
    ("nearest-away", Rounding::NearestAway),
];

impl Rounding {
    /// The same direction for the small float formats.
    fn direction(self) -> Direction {
        match self {
            Rounding::NearestEven => Direction::NearestEven,
            Rounding::TowardsZero => Direction::TowardsZero,
            Rounding::TowardsPositive => Direction::TowardsPositive,
            Rounding::TowardsNegative => Direction::TowardsNegative,
            Rounding::NearestAway => Direction::NearestAway,
        }
    }

    /// The integer `x` (finite) rounds to; exact, since every float type's value is an `f64`.
    fn to_integral(self, x: f64) -> f64 {
        match self {
            Rounding::NearestEven => x.round_ties_even(),
            Rounding::TowardsZero => x.trunc(),
            Rounding::TowardsPositive => x.ceil(),
            Rounding::TowardsNegative => x.floor(),
            Rounding::NearestAway => x.round(),
        }
    }
}

/// What happens to a value outside the target type's range (`out_of_range`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OutOfRange {
    /// Not set: such a value is an error.
    Error,
    /// `"clamp"`: the type's minimum or maximum (±infinity for float types).
    Clamp,
    /// `"wrap"`: congruent modulo 2^bits (integer targets only).
    Wrap,
}

/// An element's exact value.
#[derive(Debug, Clone, Copy)]
enum Real {
    Int(i128),
    Float(f64),
}

impl Real {
    /// The value of an integer or float element.
    fn of(v: Num) -> Real {
        match v {
            Num::I(i) => Real::Int(i.into()),
            Num::U(u) => Real::Int(u.into()),
            Num::F(x) => Real::Float(x),
            Num::B(b) => Real::Int(b.into()),
            Num::C(re, _) => Real::Float(re),
        }
    }

    fn is_negative(self) -> bool {
        match self {
            Real::Int(i) => i < 0,
            Real::Float(x) => x < 0.0,
        }
    }
}

/// A value for messages.
fn show(v: Num) -> String {
    match v {
        Num::I(i) => i.to_string(),
        Num::U(u) => u.to_string(),
        Num::F(x) => format!("{x:?}"),
        other => format!("{other:?}"),
    }
}

/// A type the codec casts from or to: a core integer or float type (native byte order), or
/// a zarr-extensions small type.
#[derive(Debug, Clone, Copy)]
enum CastType {
    Num(NumType),
    Small(SmallType),
}

impl CastType {
    fn size(self) -> usize {
        match self {
            CastType::Num(t) => t.size,
            CastType::Small(t) => t.size(),
        }
    }

    /// The v3 name, for messages.
    fn name(self) -> String {
        match self {
            CastType::Num(t) => v3_name(t),
            CastType::Small(t) => t.name().into(),
        }
    }

    /// Integers, whose values are whole numbers in [`CastType::int_range`].
    fn is_int(self) -> bool {
        match self {
            CastType::Num(t) => t.kind != Kind::Float,
            CastType::Small(t) => matches!(t, SmallType::Int { .. }),
        }
    }

    fn signed(self) -> bool {
        match self {
            CastType::Num(t) => t.kind == Kind::Int,
            CastType::Small(t) => t.signed(),
        }
    }

    /// An integer type's bits.
    fn int_bits(self) -> u32 {
        match self {
            CastType::Num(t) => 8 * t.size as u32,
            CastType::Small(t) => t.bits(),
        }
    }

    /// An integer type's smallest and largest values.
    fn int_range(self) -> (i128, i128) {
        match self {
            CastType::Num(t) => t.int_range(),
            CastType::Small(t) => {
                let (lo, hi) = t.int_range();
                (lo.into(), hi.into())
            }
        }
    }

    /// One element's value (small floats exactly, NaN codes as NaN).
    fn read(self, b: &[u8]) -> Num {
        match self {
            CastType::Num(t) => t.read(b),
            CastType::Small(SmallType::Float(f)) => Num::F(f.to_f64(SmallType::code(b))),
            CastType::Small(t) if t.signed() => Num::I(i64::from(t.normalize(b[0]) as i8)),
            CastType::Small(t) => Num::U(u64::from(t.normalize(b[0]))),
        }
    }

    /// Writes `v`, a value of this type (a small float's NaN as its canonical code).
    fn write(self, v: Num, out: &mut [u8]) {
        match (self, v) {
            (CastType::Num(t), v) => t.write(v, out),
            (CastType::Small(SmallType::Float(f)), Num::F(x)) => {
                let code = match f.canonical_nan() {
                    Some(nan) if x.is_nan() => nan,
                    _ => f.round(x, Direction::NearestEven).code,
                };
                SmallType::put_code(code, out);
            }
            (CastType::Small(_), Num::I(i)) => out[0] = i as u8,
            (CastType::Small(_), Num::U(u)) => out[0] = u as u8,
            (CastType::Small(_), other) => unreachable!("cast to a small type gave {other:?}"),
        }
    }

    /// A scalar of this type in the v3 fill-value encoding.
    fn scalar(self, value: &Value) -> Option<Num> {
        match self {
            CastType::Num(t) => v3_scalar(value, t),
            CastType::Small(t) => Some(self.read(&t.parse_fill(value).ok()?)),
        }
    }
}

/// One direction of the codec: elements of `from` cast to `to`.
#[derive(Debug, Clone)]
struct Cast {
    from: CastType,
    to: CastType,
    rounding: Rounding,
    out_of_range: OutOfRange,
    /// The `scalar_map` entries of this direction, first occurrence first.
    map: Vec<(Num, Num)>,
}

impl Cast {
    /// Casts one value (of type `from`), in the spec's order: the scalar map, then exact
    /// values, then rounding followed by the out-of-range rule. `Err` says why it cannot.
    fn apply(&self, v: Num) -> std::result::Result<Num, String> {
        if let Some(&(_, out)) = self.map.iter().find(|(key, _)| same(v, *key)) {
            return Ok(out);
        }
        match (Real::of(v), self.to.is_int()) {
            (Real::Float(x), true) => {
                if !x.is_finite() {
                    return Err(self.no_value(v));
                }
                let r = self.rounding.to_integral(x);
                let exact = (r.abs() < 2f64.powi(127)).then_some(r as i128);
                self.to_int(exact, r > 0.0, v)
            }
            (Real::Int(i), true) => self.to_int(Some(i), i > 0, v),
            (x, false) => match self.to {
                CastType::Small(SmallType::Float(format)) => self.to_small_float(x, format, v),
                _ => self.to_float(x, v),
            },
        }
    }

    /// The message for a NaN or infinity the target type has no value for.
    fn no_value(&self, v: Num) -> String {
        format!(
            "{} has no {} value (only a scalar_map entry can map it)",
            show(v),
            self.to.name()
        )
    }

    /// The integer `value` (`None`: beyond ±2^127, so out of range; a multiple of 2^75, so
    /// 0 modulo 2^64) in the target integer type, or the out-of-range rule's answer.
    fn to_int(
        &self,
        value: Option<i128>,
        positive: bool,
        input: Num,
    ) -> std::result::Result<Num, String> {
        let (lo, hi) = self.to.int_range();
        let fitted = match value {
            Some(v) if (lo..=hi).contains(&v) => v,
            _ => match self.out_of_range {
                OutOfRange::Clamp if positive => hi,
                OutOfRange::Clamp => lo,
                OutOfRange::Wrap => {
                    let shift = 128 - self.to.int_bits();
                    let low = (value.unwrap_or(0) as u128) << shift;
                    if self.to.signed() {
                        (low as i128) >> shift
                    } else {
                        (low >> shift) as i128
                    }
                }
                OutOfRange::Error => return Err(self.out_of_range_message(input)),
            },
        };
        Ok(if self.to.signed() {
            Num::I(fitted as i64)
        } else {
            Num::U(fitted as u64)
        })
    }

    /// The message for `input` outside the target's range with no rule for it.
    fn out_of_range_message(&self, input: Num) -> String {
        let range = match self.to {
            _ if self.to.is_int() => {
                let (lo, hi) = self.to.int_range();
                format!("[{lo}, {hi}]")
            }
            CastType::Small(SmallType::Float(SmallFloat::Float8E8M0Fnu)) => {
                "[2^-127, 2^127]".to_string()
            }
            CastType::Small(SmallType::Float(f)) => format!("±{:?}", f.max_value()),
            _ => format!("±{:?}", float_max(self.to.size())),
        };
        let rule = match self.out_of_range {
            OutOfRange::Wrap => "\"wrap\" applies to integer types only",
            _ => "out_of_range is not set",
        };
        format!(
            "{} is out of range for {} {range} after {} rounding ({rule})",
            show(input),
            self.to.name(),
            ROUNDINGS
                .iter()
                .find(|(_, r)| *r == self.rounding)
                .map_or("", |(n, _)| n)
        )
    }

    /// `x` in the target float type, rounded by the rounding mode as IEEE 754 rounds (so a
    /// finite value overflows to infinity exactly when the mode's IEEE result is infinite:
    /// never towards zero, which gives the largest finite value); an overflow is out of
    /// range. NaN and infinities are kept, as is the sign of zero.
    fn to_float(&self, x: Real, input: Num) -> std::result::Result<Num, String> {
        let size = self.to.size();
        if let Real::Float(f) = x {
            if f.is_nan() {
                return Ok(Num::F(f));
            }
        }
        let r = nearest_even(x, size);
        let exact = match x {
            Real::Float(f) => r == f,
            Real::Int(i) => r.is_finite() && r as i128 == i,
        };
        if exact {
            return Ok(Num::F(r));
        }
        let negative = x.is_negative();
        let chosen = if r.is_infinite() {
            // At or beyond the largest finite value plus half a unit: IEEE 754 overflow.
            let to_infinity = match self.rounding {
                Rounding::NearestEven | Rounding::NearestAway => true,
                Rounding::TowardsZero => false,
                Rounding::TowardsPositive => !negative,
                Rounding::TowardsNegative => negative,
            };
            match (to_infinity, negative) {
                (true, _) => r,
                (false, false) => float_max(size),
                (false, true) => -float_max(size),
            }
        } else {
            let above = match x {
                Real::Float(f) => f > r,
                Real::Int(i) => i > r as i128,
            };
            let other = step(r, above, size);
            match self.rounding {
                Rounding::NearestEven => r,
                Rounding::TowardsZero if other.abs() < r.abs() => other,
                Rounding::TowardsZero => r,
                Rounding::TowardsPositive => r.max(other),
                Rounding::TowardsNegative => r.min(other),
                Rounding::NearestAway if is_tie(x, r, other) && other.abs() > r.abs() => other,
                Rounding::NearestAway => r,
            }
        };
        if chosen.is_infinite() && self.out_of_range != OutOfRange::Clamp {
            return Err(self.out_of_range_message(input));
        }
        Ok(Num::F(chosen))
    }

    /// `x` in the small float `format`, rounded once by the rounding mode; a value past its
    /// range (an overflow to infinity, or beyond the largest finite value of a format without
    /// infinity, or zero and negative values in `float8_e8m0fnu`) is out of range, which
    /// `clamp` turns into infinity or the nearest value. NaN and infinities are kept where
    /// the format has them.
    fn to_small_float(
        &self,
        x: Real,
        format: SmallFloat,
        input: Num,
    ) -> std::result::Result<Num, String> {
        let value = match x {
            Real::Float(f) if f.is_nan() => {
                return match format.canonical_nan() {
                    Some(_) => Ok(Num::F(f)),
                    None => Err(self.no_value(input)),
                }
            }
            Real::Float(f) => f,
            Real::Int(i) => odd_rounded(i),
        };
        let r = format.round(value, self.rounding.direction());
        if r.out_of_range && self.out_of_range != OutOfRange::Clamp {
            return Err(self.out_of_range_message(input));
        }
        Ok(Num::F(format.to_f64(r.code)))
    }

    /// The number of `from` elements in `input`, which must be whole.
    fn count(&self, input: &[u8], decoding: bool) -> Result<usize> {
        let size = self.from.size();
        if input.len().is_multiple_of(size) {
            Ok(input.len() / size)
        } else {
            Err(ragged(
                "cast_value",
                input.len(),
                &self.from.name(),
                decoding,
            ))
        }
    }

    /// Casts every element of `input` (whole `from` elements), `err` making the error for a
    /// value that cannot be cast.
    fn run(&self, input: &[u8], err: impl Fn(String) -> Error) -> Result<Vec<u8>> {
        let (from, to) = (self.from, self.to);
        let mut out = super::alloc(input.len() / from.size() * to.size())?;
        for (src, dst) in input
            .chunks_exact(from.size())
            .zip(out.chunks_exact_mut(to.size()))
        {
            to.write(self.apply(from.read(src)).map_err(&err)?, dst);
        }
        Ok(out)
    }
}

/// Whether `v` matches the scalar map key `key` (of the same type): equal values, and any
/// NaN matches a NaN key (as both reference implementations match them).
fn same(v: Num, key: Num) -> bool {
    match (v, key) {
        (Num::F(a), Num::F(b)) => a == b || (a.is_nan() && b.is_nan()),
        (a, b) => a == b,
    }
}

/// The integer `i` as an `f64`, rounded to odd where inexact (the last bit set when the
/// value lies between two `f64`s), so rounding it once more to a narrower format rounds as
/// `i` itself would.
fn odd_rounded(i: i128) -> f64 {
    let f = i as f64;
    if f as i128 == i || f.to_bits() & 1 == 1 {
        return f;
    }
    // Towards `i` by one unit in the last place (magnitudes grow with the bits).
    let bits = f.to_bits();
    let toward = if (f as i128).abs() > i.abs() {
        bits - 1
    } else {
        bits + 1
    };
    f64::from_bits(toward)
}

/// `x` rounded to nearest, ties to even, in the float type of `size` bytes (infinite beyond
/// its range).
fn nearest_even(x: Real, size: usize) -> f64 {
    match (x, size) {
        (Real::Float(f), 8) => f,
        (Real::Float(f), 4) => f64::from(f as f32),
        (Real::Float(f), _) => f16_to_f64(f64_to_f16(f)),
        (Real::Int(i), 8) => i as f64,
        (Real::Int(i), 4) => f64::from(i as f32),
        // Exact in f64 wherever float16 is finite, so rounded once.
        (Real::Int(i), _) => f16_to_f64(f64_to_f16(i as f64)),
    }
}

/// The largest finite value of the float type of `size` bytes.
fn float_max(size: usize) -> f64 {
    match size {
        8 => f64::MAX,
        4 => f64::from(f32::MAX),
        _ => 65504.0,
    }
}

/// The neighbour of the finite `r` in the float type of `size` bytes, above it (`up`) or
/// below it (infinite past the largest finite value).
fn step(r: f64, up: bool, size: usize) -> f64 {
    if r == 0.0 {
        let tiny = match size {
            8 => f64::from_bits(1),
            4 => f64::from(f32::from_bits(1)),
            _ => f16_to_f64(1),
        };
        return if up { tiny } else { -tiny };
    }
    let away = (r > 0.0) == up;
    let next = |bits: u64| if away { bits + 1 } else { bits - 1 };
    match size {
        8 => f64::from_bits(next(r.to_bits())),
        4 => f64::from(f32::from_bits(next(u64::from((r as f32).to_bits())) as u32)),
        _ => f16_to_f64(next(u64::from(f64_to_f16(r))) as u16),
    }
}

/// Whether `x` lies exactly halfway between the adjacent target values `r` and `other`.
fn is_tie(x: Real, r: f64, other: f64) -> bool {
    if !other.is_finite() {
        // Halfway past the largest finite value rounds to infinity under nearest-even too.
        return false;
    }
    match x {
        // Both are values of a type narrower than the source: their mean is exact.
        Real::Float(f) => (r + other) / 2.0 == f,
        // Inexact integers are beyond the significand, so both neighbours are integers.
        Real::Int(i) => 2 * i == r as i128 + other as i128,
    }
}

/// `{"name": "cast_value", "configuration": {"data_type": "uint8", "rounding":
/// "towards-zero", "out_of_range": "clamp", "scalar_map": {"encode": [["NaN", 0]],
/// "decode": [[0, "NaN"]]}}}`: integer and float types both ways (the ones libzarr has:
/// `int8`–`int64`, `uint8`–`uint64`, `float16`, `float32`, `float64`, and the small types
/// `bfloat16`, float8/float6/float4, `int2`, `int4`, `uint2`, `uint4`).
///
/// Semantics (zarr-extensions `codecs/cast_value/README.md`): a `scalar_map` entry wins
/// (first occurrence of a key; a NaN key matches every NaN); an exactly representable value
/// is kept (NaN and ±infinity between float types, the sign of zero too); otherwise the value
/// is rounded by `rounding` (default nearest-even; to an integer first for integer targets,
/// to the target's precision for float targets, exactly, including int64 to float32), and
/// then a value outside the target's range follows `out_of_range`: an error when it is not
/// set, the minimum or maximum with `clamp` (±infinity for float targets), the value modulo
/// 2^bits with `wrap` (integer targets only). NaN and ±infinity have no integer value: cast
/// to an integer type they are an error whatever `out_of_range` says, unless mapped. Decoding
/// is the same procedure from the target type back, with the `decode` map.
#[derive(Debug, Clone)]
pub struct CastValue {
    encode: Cast,
    decode: Cast,
    /// The codec's JSON as written back.
    canonical: Value,
}

impl CastValue {
    /// Reads the configuration (`data_type` required; `rounding`, `out_of_range`,
    /// `scalar_map` optional; any other key refused) for input elements of type `input`.
    pub(crate) fn from_v3(
        config: &Map<String, Value>,
        input: &ElemType,
    ) -> Result<(CastValue, ElemType)> {
        let invalid = |key: &str, expected: &str| {
            Error::InvalidMetadata(format!(
                "cast_value codec: \"{key}\" must be {expected}, got {}",
                config.get(key).unwrap_or(&Value::Null)
            ))
        };
        check_keys(
            "cast_value",
            config,
            &["data_type", "rounding", "out_of_range", "scalar_map"],
        )?;
        let from = match input {
            ElemType::Small(t) => CastType::Small(*t),
            other => CastType::Num(real_type("cast_value", other)?),
        };
        let data_type = config.get("data_type").ok_or_else(|| {
            Error::InvalidMetadata("cast_value codec: missing required key \"data_type\"".into())
        })?;
        let parsed =
            parse_data_type(data_type).map_err(|e| e.context("cast_value codec: \"data_type\""))?;
        let to = match parsed.dtype.kind {
            DataTypeKind::Int => CastType::Num(NumType::native(Kind::Int, parsed.dtype.size)),
            DataTypeKind::UInt => CastType::Num(NumType::native(Kind::UInt, parsed.dtype.size)),
            DataTypeKind::Float => CastType::Num(NumType::native(Kind::Float, parsed.dtype.size)),
            DataTypeKind::Small(t) => CastType::Small(t),
            _ => {
                return Err(invalid(
                    "data_type",
                    "an integer or floating-point data type",
                ))
            }
        };
        let rounding = match config.get("rounding") {
            None => Rounding::NearestEven,
            Some(v) => ROUNDINGS
                .iter()
                .find(|(name, _)| v == name)
                .map(|(_, r)| *r)
                .ok_or_else(|| {
                    invalid(
                        "rounding",
                        "one of \"nearest-even\", \"towards-zero\", \"towards-positive\", \"towards-negative\", \"nearest-away\"",
                    )
                })?,
        };
        let out_of_range = match config.get("out_of_range") {
            None => OutOfRange::Error,
            Some(v) if v == "clamp" => OutOfRange::Clamp,
            Some(v) if v == "wrap" && to.is_int() => OutOfRange::Wrap,
            Some(v) if v == "wrap" => {
                return Err(invalid(
                    "out_of_range",
                    "\"clamp\" for a floating-point data_type (\"wrap\" is for integer types)",
                ))
            }
            Some(_) => return Err(invalid("out_of_range", "\"clamp\" or \"wrap\"")),
        };
        let (encode_map, decode_map) = match config.get("scalar_map") {
            None => (Vec::new(), Vec::new()),
            Some(v) => (
                scalar_map(v, "encode", from, to)?,
                scalar_map(v, "decode", to, from)?,
            ),
        };
        // As the cast-value package's and zarr-python's `to_dict`: the default rounding
        // and an unset out_of_range are left out.
        let mut cfg = Map::new();
        cfg.insert("data_type".into(), to_json(&parsed.dtype, None)?);
        if rounding != Rounding::NearestEven {
            cfg.insert("rounding".into(), config["rounding"].clone());
        }
        for key in ["out_of_range", "scalar_map"] {
            if let Some(v) = config.get(key) {
                cfg.insert(key.into(), v.clone());
            }
        }
        let codec = CastValue {
            encode: Cast {
                from,
                to,
                rounding,
                out_of_range,
                map: encode_map,
            },
            decode: Cast {
                from: to,
                to: from,
                rounding,
                out_of_range,
                map: decode_map,
            },
            canonical: json!({"name": "cast_value", "configuration": cfg}),
        };
        let output = match to {
            CastType::Num(t) => ElemType::Num(t),
            CastType::Small(t) => ElemType::Small(t),
        };
        Ok((codec, output))
    }
}

/// The `direction` (`"encode"` or `"decode"`) entries of a `scalar_map`: pairs of a `from`
/// scalar and a `to` scalar, each in the v3 fill-value encoding of its type.
fn scalar_map(
    value: &Value,
    direction: &str,
    from: CastType,
    to: CastType,
) -> Result<Vec<(Num, Num)>> {
    let bad =
        |what: String| Error::InvalidMetadata(format!("cast_value codec: \"scalar_map\" {what}"));
    let obj = value.as_object().ok_or_else(|| {
        bad(format!(
            "must be an object of \"encode\" and \"decode\" lists, got {value}"
        ))
    })?;
    if let Some(key) = obj
        .keys()
        .find(|k| !matches!(k.as_str(), "encode" | "decode"))
    {
        return Err(bad(format!(
            "has an unknown key \"{key}\" (only \"encode\" and \"decode\")"
        )));
    }
    let Some(list) = obj.get(direction) else {
        return Ok(Vec::new());
    };
    let items = list.as_array().ok_or_else(|| {
        bad(format!(
            "\"{direction}\" must be a list of [input, output] pairs, got {list}"
        ))
    })?;
    let scalar = |v: &Value, t: CastType, i: usize| {
        t.scalar(v).ok_or_else(|| {
            bad(format!(
                "\"{direction}\"[{i}]: {v} is not a {} scalar in the v3 fill-value encoding",
                t.name()
            ))
        })
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| match item.as_array().map(Vec::as_slice) {
            Some([a, b]) => Ok((scalar(a, from, i)?, scalar(b, to, i)?)),
            _ => Err(bad(format!(
                "\"{direction}\"[{i}] must be an [input, output] pair, got {item}"
            ))),
        })
        .collect()
}

impl Filter for CastValue {
    fn id(&self) -> &'static str {
        "cast_value"
    }

    fn config(&self) -> Value {
        self.canonical.clone()
    }

    fn encode(&self, input: &[u8]) -> Result<Vec<u8>> {
        let c = &self.encode;
        c.count(input, false)?;
        c.run(input, |m| {
            Error::InvalidArgument(format!(
                "cast_value codec: cannot encode {} as {}: {m}",
                c.from.name(),
                c.to.name()
            ))
        })
    }

    fn decode(&self, input: &[u8], max_len: usize) -> Result<Vec<u8>> {
        let c = &self.decode;
        let n = c.count(input, true)?;
        check_len("cast_value", n * c.to.size(), max_len)?;
        c.run(input, |m| {
            Error::CorruptChunk(format!(
                "cast_value codec: cannot decode stored {} as {}: {m}",
                c.from.name(),
                c.to.name()
            ))
        })
    }

    fn encoded_len(&self, decoded_len: usize) -> Option<usize> {
        let c = &self.encode;
        decoded_len
            .is_multiple_of(c.from.size())
            .then(|| decoded_len / c.from.size() * c.to.size())
    }
}

#[cfg(test)]
mod tests {
    use super::super::numeric::ElemType;
    use super::super::testutil::*;
    use crate::codec::filter::Filter;
    use crate::error::{Error, Result};
    use serde_json::{json, Value};

    /// Builds the codec for input of the NumPy type `input`, with the type it encodes to.
    fn build(config: Value, input: &str) -> Result<(Box<dyn Filter>, String)> {
        let t = ElemType::parse(input).expect("a type string");
        let cfg = config.as_object().expect("an object").clone();
        super::super::build_v3("cast_value", &cfg, &t).map(|(f, out, _)| (f, out.typestr()))
    }

    fn cv(config: Value, input: &str) -> Box<dyn Filter> {
        build(config.clone(), input)
            .unwrap_or_else(|e| panic!("{config}: {e}"))
            .0
    }

    fn i1(v: &[i8]) -> Vec<u8> {
        v.iter().map(|&x| x as u8).collect()
    }

    fn i2(v: &[i16]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn i8s(v: &[i64]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn as_f4(b: &[u8]) -> Vec<f32> {
        b.chunks(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }

    fn as_f2(b: &[u8]) -> Vec<f64> {
        b.chunks(2)
            .map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f64())
            .collect()
    }

    fn as_f8(b: &[u8]) -> Vec<f64> {
        b.chunks(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }

    /// Asserts an encoding error is `InvalidArgument` naming the codec and `value`.
    fn assert_refused<T: std::fmt::Debug>(result: Result<T>, value: &str) {
        match result {
            Err(Error::InvalidArgument(m)) => {
                assert!(m.contains("cast_value") && m.contains(value), "{m}")
            }
            other => panic!("expected InvalidArgument naming {value}, got {other:?}"),
        }
    }

    #[test]
    fn float_to_int_rounding_modes() {
        let x = [
            2.5,
            -2.5,
            3.5,
            -3.5,
            2.4,
            -2.6,
            0.5,
            -0.5,
            0.49999999999999994,
        ];
        for (mode, expected) in [
            ("nearest-even", [2, -2, 4, -4, 2, -3, 0, 0, 0]),
            ("towards-zero", [2, -2, 3, -3, 2, -2, 0, 0, 0]),
            ("towards-positive", [3, -2, 4, -3, 3, -2, 1, 0, 1]),
            ("towards-negative", [2, -3, 3, -4, 2, -3, 0, -1, 0]),
            ("nearest-away", [3, -3, 4, -4, 2, -3, 1, -1, 0]),
        ] {
            let f = cv(json!({"data_type": "int8", "rounding": mode}), "<f8");
            assert_eq!(f.encode(&f8(&x)).unwrap(), i1(&expected), "{mode}");
        }
        // float32 and float16 sources round the same way.
        let f = cv(
            json!({"data_type": "int16", "rounding": "nearest-away"}),
            "<f4",
        );
        assert_eq!(f.encode(&f4(&[-1.5, 1.5, 2.5])).unwrap(), i2(&[-2, 2, 3]));
    }

    #[test]
    fn out_of_range_modes_for_integer_targets() {
        let x = f8(&[128.0, -129.0, 300.7, -1000.0, 5.0]);
        let f = cv(json!({"data_type": "int8"}), "<f8");
        assert_refused(f.encode(&x), "128.0");
        let f = cv(json!({"data_type": "int8", "out_of_range": "clamp"}), "<f8");
        assert_eq!(f.encode(&x).unwrap(), i1(&[127, -128, 127, -128, 5]));
        let f = cv(json!({"data_type": "int8", "out_of_range": "wrap"}), "<f8");
        assert_eq!(f.encode(&x).unwrap(), i1(&[-128, 127, 45, 24, 5]));
        // The spec's int16 examples.
        let f = cv(json!({"data_type": "int16", "out_of_range": "wrap"}), "<i4");
        assert_eq!(
            f.encode(&i4(&[32768, 32769, -32769, 7])).unwrap(),
            i2(&[-32768, -32767, 32767, 7])
        );
        // Unsigned targets at both ends.
        let x = i2(&[-5, 300, 255, 0]);
        let f = cv(
            json!({"data_type": "uint8", "out_of_range": "clamp"}),
            "<i2",
        );
        assert_eq!(f.encode(&x).unwrap(), vec![0, 255, 255, 0]);
        let f = cv(json!({"data_type": "uint8", "out_of_range": "wrap"}), "<i2");
        assert_eq!(f.encode(&x).unwrap(), vec![251, 44, 255, 0]);
        let f = cv(json!({"data_type": "uint8"}), "<i2");
        assert_refused(f.encode(&x), "-5");
        // Huge floats: beyond every integer type; wrapping them gives 0 (multiples of 2^64).
        let f = cv(
            json!({"data_type": "int64", "out_of_range": "clamp"}),
            "<f8",
        );
        assert_eq!(
            f.encode(&f8(&[1e300, -1e300, 9.3e18])).unwrap(),
            i8s(&[i64::MAX, i64::MIN, i64::MAX])
        );
        let f = cv(json!({"data_type": "int64", "out_of_range": "wrap"}), "<f8");
        assert_eq!(
            f.encode(&f8(&[1e300, 18446744073709551616.0 + 4096.0]))
                .unwrap(),
            i8s(&[0, 4096])
        );
        let f = cv(json!({"data_type": "uint64"}), "<i8");
        assert_refused(f.encode(&i8s(&[-1])), "-1");
        let f = cv(json!({"data_type": "int64"}), "<u8");
        let big = u64::MAX.to_le_bytes();
        assert_refused(f.encode(&big), "18446744073709551615");
    }

    #[test]
    fn nan_and_infinity_have_no_integer_value() {
        for oor in [json!("clamp"), json!("wrap")] {
            let f = cv(json!({"data_type": "uint8", "out_of_range": oor}), "<f4");
            assert_refused(f.encode(&f4(&[1.0, f32::NAN])), "NaN");
            assert_refused(f.encode(&f4(&[f32::INFINITY])), "inf");
        }
        let f = cv(
            json!({"data_type": "uint8", "scalar_map": {"encode": [["NaN", 0], ["Infinity", 255], ["-Infinity", 1]]}}),
            "<f4",
        );
        assert_eq!(
            f.encode(&f4(&[f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 7.0]))
                .unwrap(),
            vec![0, 255, 1, 7]
        );
    }

    #[test]
    fn float_to_float_rounds_by_the_mode() {
        let tie = 1.0 + 2f64.powi(-24); // halfway between 1 and the next float32
        let up = 1.0 + 2f32.powi(-23);
        let tenth = 0.1f32; // above 0.1
        let below = f32::from_bits(tenth.to_bits() - 1);
        let x = f8(&[tie, -tie, 0.1, -0.1, 2.0]);
        for (mode, expected) in [
            ("nearest-even", [1.0, -1.0, tenth, -tenth, 2.0]),
            ("towards-zero", [1.0, -1.0, below, -below, 2.0]),
            ("towards-positive", [up, -1.0, tenth, -below, 2.0]),
            ("towards-negative", [1.0, -up, below, -tenth, 2.0]),
            ("nearest-away", [up, -up, tenth, -tenth, 2.0]),
        ] {
            let f = cv(json!({"data_type": "float32", "rounding": mode}), "<f8");
            assert_eq!(as_f4(&f.encode(&x).unwrap()), expected, "{mode}");
        }
        // NaN, infinities and signed zeros are kept.
        let f = cv(json!({"data_type": "float32"}), "<f8");
        let out = as_f4(
            &f.encode(&f8(&[f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0]))
                .unwrap(),
        );
        assert!(out[0].is_nan());
        assert_eq!(out[1..3], [f32::INFINITY, f32::NEG_INFINITY]);
        assert_eq!(out[3].to_bits(), (-0.0f32).to_bits());
        // Underflow: tiny values go to a signed zero or the smallest subnormal.
        let tiny = f32::from_bits(1);
        for (mode, expected) in [
            ("nearest-even", [0.0, -0.0]),
            ("towards-zero", [0.0, -0.0]),
            ("towards-positive", [tiny, -0.0]),
            ("towards-negative", [0.0, -tiny]),
        ] {
            let f = cv(json!({"data_type": "float32", "rounding": mode}), "<f8");
            let out = as_f4(&f.encode(&f8(&[1e-50, -1e-50])).unwrap());
            let bits: Vec<u32> = out.iter().map(|v| v.to_bits()).collect();
            let want: Vec<u32> = expected.iter().map(|v: &f32| v.to_bits()).collect();
            assert_eq!(bits, want, "{mode}");
        }
    }

    #[test]
    fn float_overflow_is_out_of_range() {
        let x = f8(&[1e300, -1e300]);
        let f = cv(json!({"data_type": "float32"}), "<f8");
        assert_refused(f.encode(&x), "1e300");
        let f = cv(
            json!({"data_type": "float32", "out_of_range": "clamp"}),
            "<f8",
        );
        assert_eq!(
            as_f4(&f.encode(&x).unwrap()),
            [f32::INFINITY, f32::NEG_INFINITY]
        );
        // IEEE 754 directed rounding: towards zero never overflows.
        let f = cv(
            json!({"data_type": "float32", "rounding": "towards-zero"}),
            "<f8",
        );
        assert_eq!(as_f4(&f.encode(&x).unwrap()), [f32::MAX, -f32::MAX]);
        let f = cv(
            json!({"data_type": "float32", "rounding": "towards-positive"}),
            "<f8",
        );
        assert_refused(f.encode(&x), "1e300");
        assert_eq!(as_f4(&f.encode(&f8(&[-1e300])).unwrap()), [-f32::MAX]);
        // Just above the largest float32, below the halfway point: rounds to it.
        let max = f64::from(f32::MAX);
        let f = cv(json!({"data_type": "float32"}), "<f8");
        assert_eq!(
            as_f4(&f.encode(&f8(&[max * (1.0 + 1e-9)])).unwrap()),
            [f32::MAX]
        );
        // float32 to float16.
        let f = cv(json!({"data_type": "float16"}), "<f4");
        assert_eq!(
            as_f2(&f.encode(&f4(&[65519.0, 1.0 / 3.0])).unwrap()),
            [65504.0, 0.333251953125]
        );
        assert_refused(f.encode(&f4(&[65520.0])), "65520.0");
        // wrap is refused for float targets at build time (see refuses_bad_configurations).
    }

    #[test]
    fn int_to_float_rounds_exactly() {
        let p = 1i64 << 53;
        let x = i8s(&[p + 1, -(p + 1), p + 3, 5]);
        let (pf, p2) = (p as f64, (p + 2) as f64);
        for (mode, expected) in [
            ("nearest-even", [pf, -pf, (p + 4) as f64, 5.0]),
            ("towards-zero", [pf, -pf, p2, 5.0]),
            ("towards-positive", [p2, -pf, (p + 4) as f64, 5.0]),
            ("towards-negative", [pf, -p2, p2, 5.0]),
            ("nearest-away", [p2, -p2, (p + 4) as f64, 5.0]),
        ] {
            let f = cv(json!({"data_type": "float64", "rounding": mode}), "<i8");
            assert_eq!(as_f8(&f.encode(&x).unwrap()), expected, "{mode}");
        }
        // int64 to float32, at the top of the range.
        let f = cv(
            json!({"data_type": "float32", "rounding": "towards-zero"}),
            "<i8",
        );
        let top = 2f32.powi(63);
        assert_eq!(
            as_f4(&f.encode(&i8s(&[i64::MAX, i64::MIN])).unwrap()),
            [f32::from_bits(top.to_bits() - 1), -top]
        );
        let f = cv(json!({"data_type": "float32"}), "<i8");
        assert_eq!(as_f4(&f.encode(&i8s(&[i64::MAX])).unwrap()), [top]);
        // uint64 to float64.
        let f = cv(
            json!({"data_type": "float64", "rounding": "towards-zero"}),
            "<u8",
        );
        assert_eq!(
            as_f8(&f.encode(&u64::MAX.to_le_bytes()).unwrap()),
            [18446744073709549568.0]
        );
        // int32 to float16: beyond its range.
        let f = cv(json!({"data_type": "float16"}), "<i4");
        assert_eq!(
            as_f2(&f.encode(&i4(&[65519, -2049])).unwrap()),
            [65504.0, -2048.0]
        );
        assert_refused(f.encode(&i4(&[70000])), "70000");
        let f = cv(
            json!({"data_type": "float16", "rounding": "towards-positive"}),
            "<i4",
        );
        assert_refused(f.encode(&i4(&[65505])), "65505");
        let f = cv(
            json!({"data_type": "float16", "rounding": "towards-zero"}),
            "<i4",
        );
        assert_eq!(as_f2(&f.encode(&i4(&[70000])).unwrap()), [65504.0]);
        let f = cv(
            json!({"data_type": "float16", "out_of_range": "clamp"}),
            "<i4",
        );
        assert_eq!(
            as_f2(&f.encode(&i4(&[70000, -70000])).unwrap()),
            [f64::INFINITY, f64::NEG_INFINITY]
        );
    }

    #[test]
    fn decodes_back_and_reports_corrupt_values() {
        let (f, out) = build(json!({"data_type": "uint8"}), "<f4").unwrap();
        assert_eq!(out, "|u1");
        let (enc, dec) = round_trip(&*f, &f4(&[0.0, 254.6, 3.0]));
        assert_eq!(enc, vec![0, 255, 3]);
        assert_eq!(dec, f4(&[0.0, 255.0, 3.0]));
        assert_eq!(f.encoded_len(16), Some(4));
        assert_eq!(f.encoded_len(15), None);
        assert_corrupt(f.decode(&[1, 2, 3], 11), "cast_value");
        // Decoding int32 to float16 overflows: the stored value is corrupt.
        let f = cv(json!({"data_type": "int32"}), "<f2");
        assert_corrupt(f.decode(&i4(&[100000]), 2), "cast_value");
        assert_corrupt(f.decode(&[0; 3], 2), "cast_value");
        // int16 to int8 with clamp decodes losslessly.
        let f = cv(json!({"data_type": "int8", "out_of_range": "clamp"}), "<i2");
        let (enc, dec) = round_trip(&*f, &i2(&[-300, 5, 300]));
        assert_eq!(enc, i1(&[-128, 5, 127]));
        assert_eq!(dec, i2(&[-128, 5, 127]));
    }

    #[test]
    fn scalar_map_comes_first_and_first_entry_wins() {
        let f = cv(
            json!({"data_type": "uint8", "scalar_map": {
                "encode": [["NaN", 0], [0, 5], ["0x7ff8000000000001", 9], [1.5, 200]],
                "decode": [[0, "NaN"], [0, 3]],
            }}),
            "<f8",
        );
        let enc = f
            .encode(&f8(&[
                f64::NAN,
                0.0,
                -0.0,
                1.5,
                2.0,
                f64::from_bits(0x7ff8_0000_0000_0001),
            ]))
            .unwrap();
        assert_eq!(enc, vec![0, 5, 5, 200, 2, 0]);
        let dec = as_f8(&f.decode(&[0, 5, 200], 24).unwrap());
        assert!(dec[0].is_nan());
        assert_eq!(dec[1..], [5.0, 200.0]);
        // Integer to integer: a value out of range is mapped rather than refused.
        let f = cv(
            json!({"data_type": "int8", "scalar_map": {"encode": [[1000, -1]], "decode": [[-1, 1000]]}}),
            "<i2",
        );
        let (enc, dec) = round_trip(&*f, &i2(&[1000, 7]));
        assert_eq!(enc, i1(&[-1, 7]));
        assert_eq!(dec, i2(&[1000, 7]));
    }

    #[test]
    fn canonical_form() {
        let f = cv(
            json!({"data_type": {"name": "uint8"}, "rounding": "nearest-even"}),
            "<f8",
        );
        assert_eq!(
            f.config(),
            json!({"name": "cast_value", "configuration": {"data_type": "uint8"}})
        );
        let map = json!({"encode": [["NaN", 0]]});
        let f = cv(
            json!({"scalar_map": map, "out_of_range": "clamp", "rounding": "towards-zero", "data_type": "int16"}),
            "<f4",
        );
        assert_eq!(
            f.config().to_string(),
            json!({"name": "cast_value", "configuration": {"data_type": "int16",
                "rounding": "towards-zero", "out_of_range": "clamp", "scalar_map": map}})
            .to_string()
        );
    }

    #[test]
    fn refuses_bad_configurations() {
        for (config, input, key) in [
            (json!({"data_type": "uint8", "extra": 1}), "<f8", "extra"),
            (json!({}), "<f8", "data_type"),
            (json!({"data_type": "bool"}), "<f8", "data_type"),
            (json!({"data_type": "complex64"}), "<f8", "data_type"),
            (json!({"data_type": "string"}), "<f8", "data_type"),
            (json!({"data_type": 8}), "<f8", "data_type"),
            (
                json!({"data_type": "uint8", "rounding": "up"}),
                "<f8",
                "rounding",
            ),
            (
                json!({"data_type": "uint8", "rounding": null}),
                "<f8",
                "rounding",
            ),
            (
                json!({"data_type": "uint8", "out_of_range": "saturate"}),
                "<f8",
                "out_of_range",
            ),
            (
                json!({"data_type": "uint8", "out_of_range": null}),
                "<f8",
                "out_of_range",
            ),
            (
                json!({"data_type": "float32", "out_of_range": "wrap"}),
                "<f8",
                "out_of_range",
            ),
            (
                json!({"data_type": "uint8", "scalar_map": []}),
                "<f8",
                "scalar_map",
            ),
            (
                json!({"data_type": "uint8", "scalar_map": {"both": []}}),
                "<f8",
                "both",
            ),
            (
                json!({"data_type": "uint8", "scalar_map": {"encode": [[1]]}}),
                "<f8",
                "scalar_map",
            ),
            (
                json!({"data_type": "uint8", "scalar_map": {"encode": [["one", 1]]}}),
                "<f8",
                "scalar_map",
            ),
            (
                json!({"data_type": "uint8", "scalar_map": {"encode": [[0, 300]]}}),
                "<f8",
                "uint8",
            ),
            (
                json!({"data_type": "uint8", "scalar_map": {"encode": [[1.5, 1]]}}),
                "<i4",
                "int32",
            ),
            (
                json!({"data_type": "uint8", "scalar_map": {"decode": [[0, "NaN"]]}}),
                "<i4",
                "decode",
            ),
            (json!({"data_type": "uint8"}), "|b1", "cast_value"),
            (json!({"data_type": "uint8"}), "<c16", "cast_value"),
        ] {
            match build(config.clone(), input) {
                Err(Error::InvalidMetadata(m)) => {
                    assert!(m.contains("cast_value") && m.contains(key), "{config}: {m}")
                }
                other => panic!(
                    "{config}: expected InvalidMetadata, got {:?}",
                    other.map(|x| x.1)
                ),
            }
        }
        // Types libzarr does not have are unsupported, named.
        match build(json!({"data_type": "float7"}), "<f4") {
            Err(Error::Unsupported(m)) => assert!(m.contains("float7"), "{m}"),
            other => panic!("{:?}", other.map(|x| x.1)),
        }
    }

    fn f4(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn casts_to_and_from_the_small_types() {
        // bfloat16: rounded once by the mode; decoded exactly.
        let (f, out) = build(json!({"data_type": "bfloat16"}), "<f4").unwrap();
        assert_eq!(out, "bfloat16");
        let x = [1.0f32, -2.5, 1.003_906_4, f32::NAN, f32::INFINITY];
        let codes: Vec<u16> = f
            .encode(&f4(&x))
            .unwrap()
            .chunks(2)
            .map(|c| u16::from_ne_bytes([c[0], c[1]]))
            .collect();
        assert_eq!(codes, [0x3f80, 0xc020, 0x3f81, 0x7fc0, 0x7f80]);
        let back = as_f4(&f.decode(&f.encode(&f4(&x)).unwrap(), 20).unwrap());
        assert_eq!(back[..3], [1.0, -2.5, 1.0078125]);
        assert!(back[3].is_nan() && back[4] == f32::INFINITY);
        let down = cv(
            json!({"data_type": "bfloat16", "rounding": "towards-zero"}),
            "<f4",
        );
        assert_eq!(
            down.encode(&f4(&[1.0078124])).unwrap(),
            0x3f80u16.to_ne_bytes()
        );
        // A finite-only float8: NaN has its code, infinity and overflow are out of range
        // unless clamped.
        let fnuz = cv(json!({"data_type": "float8_e4m3fnuz"}), "<f8");
        assert_eq!(fnuz.encode(&i8s(&[0])).unwrap(), [0]);
        assert_eq!(fnuz.encode(&f64::NAN.to_le_bytes()).unwrap(), [0x80]);
        assert_refused(fnuz.encode(&1e6f64.to_le_bytes()), "1000000.0");
        assert_refused(fnuz.encode(&f64::INFINITY.to_le_bytes()), "inf");
        let clamped = cv(
            json!({"data_type": "float8_e4m3fnuz", "out_of_range": "clamp"}),
            "<f8",
        );
        assert_eq!(clamped.encode(&(-1e6f64).to_le_bytes()).unwrap(), [0xff]);
        assert_refused(
            cv(json!({"data_type": "float4_e2m1fn"}), "<f4").encode(&f4(&[f32::NAN])),
            "NaN",
        );
        // int4: ranges, wrapping and clamping at four bits; decoded sign-extended.
        let int4 = cv(json!({"data_type": "int4"}), "<i2");
        assert_eq!(int4.encode(&i2(&[-8, 7, -1])).unwrap(), i1(&[-8, 7, -1]));
        assert_refused(int4.encode(&i2(&[8])), "8");
        assert_eq!(int4.decode(&[0x0f], 2).unwrap(), i2(&[-1]));
        let wrap = cv(json!({"data_type": "int4", "out_of_range": "wrap"}), "<i2");
        assert_eq!(wrap.encode(&i2(&[8, 17, -9])).unwrap(), i1(&[-8, 1, 7]));
        let clamp = cv(
            json!({"data_type": "uint2", "out_of_range": "clamp"}),
            "<f4",
        );
        assert_eq!(clamp.encode(&f4(&[9.0, -3.0, 1.5])).unwrap(), [3, 0, 2]);
        // Scalar maps in the small types' fill-value encodings.
        let mapped = cv(
            json!({"data_type": "float4_e2m1fn", "scalar_map": {"encode": [["NaN", "0x0f"]], "decode": [["0x0f", "NaN"]]}}),
            "<f4",
        );
        let stored = mapped.encode(&f4(&[f32::NAN, 0.5])).unwrap();
        assert_eq!(stored, [0x0f, 0x01]);
        assert!(as_f4(&mapped.decode(&stored, 8).unwrap())[0].is_nan());
        // Integers beyond 2^53 round once to bfloat16: 2^60 + 2^52 + 1 is just above the
        // tie between 2^60 and its next value (0x5d80, 0x5d81).
        let from_i8 = cv(json!({"data_type": "bfloat16"}), "<i8");
        let i = (1i64 << 60) + (1 << 52) + 1;
        assert_eq!(from_i8.encode(&i8s(&[i])).unwrap(), 0x5d81u16.to_ne_bytes());
    }
}
