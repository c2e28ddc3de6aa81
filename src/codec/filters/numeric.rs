//! The NumPy semantics the numeric filters depend on, in one place: element types parsed from
//! type strings, element reads and writes in either byte order, `ndarray.astype` casts, the
//! NEP 50 treatment of Python scalars (`arr - 1.5`), type promotion, and arithmetic rounded
//! to the precision NumPy computes in (float16 operations go through float32, as NumPy's
//! loops do).
//!
//! Values travel as [`Num`]: integers as `i64`/`u64`, floats of every width as the `f64`
//! holding them exactly (NaN payloads included), complex values as two such floats. A value
//! is "of" a [`NumType`] once a cast or an operation of that type produced it.
//!
//! Where NumPy's result is left to the C compiler, this follows what NumPy 2.4 gives on
//! x86-64, as measured against it: float to integer casts of NaN and out-of-range values
//! (including the different answers of its vectorised float to uint32 loop), which NaN an
//! operation on two NaNs returns, and which conversions quiet signalling NaNs. In-range
//! values never depend on any of this.

use crate::dtype::{ByteOrder, DataType, DataTypeKind, SmallType};

/// Whether the machine stores numbers big-endian (what NumPy's `=` and unmarked types mean).
const NATIVE_BIG: bool = cfg!(target_endian = "big");

/// The kind of a numeric element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Bool,
    Int,
    UInt,
    Float,
    Complex,
}

/// A numeric NumPy type: kind, size in bytes and byte order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NumType {
    pub kind: Kind,
    pub size: usize,
    /// Stored big-endian (meaningless for one-byte types, kept `false` for them).
    pub big: bool,
}

/// The element type a filter sees (its input or output), as far as the filters care.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ElemType {
    Num(NumType),
    /// `U`: fixed-width text of `chars` UTF-32 code units.
    Unicode {
        chars: usize,
        big: bool,
    },
    /// `|O`: Python objects.
    Object,
    /// A zarr-extensions small float or narrow integer: filters that compute refuse it,
    /// `packbits` packs its bits.
    Small(SmallType),
    /// Any other type (byte strings, datetimes, records): only its size matters.
    Other {
        size: usize,
    },
}

/// A Python number from a filter's JSON configuration (NumPy treats them as "weak" scalars:
/// they take the array's type instead of promoting it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum PyScalar {
    Int(i128),
    Float(f64),
}

impl PyScalar {
    /// Reads a JSON number, keeping Python's distinction between `2` and `2.0`.
    pub(crate) fn from_json(v: &serde_json::Value) -> Option<PyScalar> {
        let n = v.as_number()?;
        if let Some(i) = n.as_i64() {
            Some(PyScalar::Int(i.into()))
        } else if let Some(u) = n.as_u64() {
            Some(PyScalar::Int(u.into()))
        } else {
            n.as_f64().map(PyScalar::Float)
        }
    }
}

/// One element's value. A boolean keeps its byte: NumPy copies a boolean array's bytes as
/// they are (a view of other data as `bool` may hold bytes other than 0 and 1) and only
/// casts and arithmetic make them 0 or 1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Num {
    B(u8),
    I(i64),
    U(u64),
    F(f64),
    C(f64, f64),
}

impl Num {
    #[inline]
    fn truthy(self) -> bool {
        match self {
            Num::B(b) => b != 0,
            Num::I(i) => i != 0,
            Num::U(u) => u != 0,
            // NaN is true, as in C.
            Num::F(x) => x != 0.0,
            Num::C(re, im) => re != 0.0 || im != 0.0,
        }
    }

    #[inline]
    fn as_i64(self) -> i64 {
        match self {
            Num::B(b) => (b != 0).into(),
            Num::I(i) => i,
            Num::U(u) => u as i64,
            Num::F(x) | Num::C(x, _) => x as i64,
        }
    }

    #[inline]
    fn as_f64(self) -> f64 {
        match self {
            Num::B(b) => f64::from(u8::from(b != 0)),
            Num::I(i) => i as f64,
            Num::U(u) => u as f64,
            Num::F(x) | Num::C(x, _) => x,
        }
    }
}

impl ElemType {
    /// Parses a NumPy type string as numcodecs configurations hold them (`"<i4"`, `"|b1"`,
    /// `">U10"`, `"|O"`; `=`, `|` or no order character mean the machine's order). `None`
    /// when the string is malformed or names a type the filters do not handle.
    pub(crate) fn parse(text: &str) -> Option<ElemType> {
        let (order, rest) = match text.chars().next()? {
            c @ ('<' | '>' | '|' | '=') => (Some(c), &text[1..]),
            _ => (None, text),
        };
        let mut chars = rest.chars();
        let kind_char = chars.next()?;
        let digits = chars.as_str();
        if kind_char == 'O' {
            return matches!(digits, "" | "8").then_some(ElemType::Object);
        }
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let count: usize = digits.parse().ok()?;
        let big = match order {
            Some('<') => false,
            Some('>') => true,
            _ => NATIVE_BIG,
        };
        if kind_char == 'U' {
            count.checked_mul(4)?;
            return Some(ElemType::Unicode { chars: count, big });
        }
        let kind = match kind_char {
            'b' => Kind::Bool,
            'i' => Kind::Int,
            'u' => Kind::UInt,
            'f' => Kind::Float,
            'c' => Kind::Complex,
            _ => return None,
        };
        let valid = match kind {
            Kind::Bool => count == 1,
            Kind::Int | Kind::UInt => matches!(count, 1 | 2 | 4 | 8),
            Kind::Float => matches!(count, 2 | 4 | 8),
            Kind::Complex => matches!(count, 8 | 16),
        };
        valid.then(|| ElemType::Num(NumType::with_order(kind, count, big)))
    }

    /// The element type of an array's data type.
    pub(crate) fn of_array(dtype: &DataType) -> ElemType {
        let big = match dtype.order {
            ByteOrder::Big => true,
            ByteOrder::Little => false,
            ByteOrder::NotApplicable => NATIVE_BIG,
        };
        let kind = match dtype.kind {
            DataTypeKind::Bool => Kind::Bool,
            DataTypeKind::Int => Kind::Int,
            DataTypeKind::UInt => Kind::UInt,
            // Long doubles: no filter computes with them.
            DataTypeKind::Float if dtype.size == 16 => return ElemType::Other { size: 16 },
            DataTypeKind::Complex if dtype.size == 32 => return ElemType::Other { size: 32 },
            DataTypeKind::Float => Kind::Float,
            DataTypeKind::Complex => Kind::Complex,
            DataTypeKind::Small(t) => return ElemType::Small(t),
            #[allow(unreachable_patterns)]
            _ => {
                return match ElemType::parse(&dtype.typestr()) {
                    Some(t @ (ElemType::Unicode { .. } | ElemType::Object)) => t,
                    _ => ElemType::Other { size: dtype.size },
                };
            }
        };
        ElemType::Num(NumType::with_order(kind, dtype.size, big))
    }

    /// Size of one element in bytes (a pointer's, for objects).
    pub(crate) fn size(&self) -> usize {
        match self {
            ElemType::Num(t) => t.size,
            ElemType::Unicode { chars, .. } => chars * 4,
            ElemType::Object => 8,
            ElemType::Small(t) => t.size(),
            ElemType::Other { size } => *size,
        }
    }

    /// NumPy's `dtype.str` for the type, as numcodecs writes it in configurations.
    pub(crate) fn typestr(&self) -> String {
        match self {
            ElemType::Num(t) => t.typestr(),
            ElemType::Unicode { chars, big } => format!("{}U{chars}", if *big { '>' } else { '<' }),
            ElemType::Object => "|O".into(),
            ElemType::Small(t) => t.name().into(),
            ElemType::Other { size } => format!("|V{size}"),
        }
    }
}

impl NumType {
    /// A type in the machine's byte order (the type of NumPy's intermediate results).
    pub(crate) const fn native(kind: Kind, size: usize) -> NumType {
        NumType::with_order(kind, size, NATIVE_BIG)
    }

    const fn with_order(kind: Kind, size: usize, big: bool) -> NumType {
        NumType {
            kind,
            size,
            big: big && size > 1,
        }
    }

    /// NumPy's `float64`.
    pub(crate) const F8: NumType = NumType::native(Kind::Float, 8);
    /// NumPy's `int64`, the default integer.
    pub(crate) const I8: NumType = NumType::native(Kind::Int, 8);
    /// NumPy's `uint8` (what byte-level filters return).
    pub(crate) const U1: NumType = NumType::native(Kind::UInt, 1);

    /// NumPy's `dtype.str`: `"<i4"`, `"|u1"`, `">c16"`.
    pub(crate) fn typestr(&self) -> String {
        let order = if self.size == 1 {
            '|'
        } else if self.big {
            '>'
        } else {
            '<'
        };
        let kind = match self.kind {
            Kind::Bool => 'b',
            Kind::Int => 'i',
            Kind::UInt => 'u',
            Kind::Float => 'f',
            Kind::Complex => 'c',
        };
        format!("{order}{kind}{}", self.size)
    }

    /// The same type in the machine's byte order.
    pub(crate) fn to_native(self) -> NumType {
        NumType::native(self.kind, self.size)
    }

    /// Reads one element from `b` (exactly `self.size` bytes).
    #[inline]
    pub(crate) fn read(&self, b: &[u8]) -> Num {
        match self.kind {
            Kind::Bool => Num::B(b[0]),
            Kind::Int => {
                let shift = 64 - 8 * self.size as u32;
                Num::I(((load(b, self.big) << shift) as i64) >> shift)
            }
            Kind::UInt => Num::U(load(b, self.big)),
            Kind::Float => Num::F(float_from_bits(load(b, self.big), self.size)),
            Kind::Complex => {
                let half = self.size / 2;
                Num::C(
                    float_from_bits(load(&b[..half], self.big), half),
                    float_from_bits(load(&b[half..], self.big), half),
                )
            }
        }
    }

    /// Casts `v` to this type and writes it into `out` (exactly `self.size` bytes).
    #[inline]
    pub(crate) fn write(&self, v: Num, out: &mut [u8]) {
        match self.cast(v) {
            Num::B(b) => out[0] = b,
            Num::I(i) => store(i as u64, out, self.big),
            Num::U(u) => store(u, out, self.big),
            Num::F(x) => store(float_to_bits(x, self.size), out, self.big),
            Num::C(re, im) => {
                let half = self.size / 2;
                let (a, b) = out.split_at_mut(half);
                store(float_to_bits(re, half), a, self.big);
                store(float_to_bits(im, half), b, self.big);
            }
        }
    }

    /// `ndarray.astype(self)`: NumPy's unsafe cast of one element.
    #[inline]
    pub(crate) fn cast(&self, v: Num) -> Num {
        match self.kind {
            // Booleans copy as they are; anything else becomes 0 or 1.
            Kind::Bool => match v {
                Num::B(b) => Num::B(b),
                other => Num::B(other.truthy().into()),
            },
            Kind::Int | Kind::UInt => {
                let bits = match v {
                    Num::F(x) | Num::C(x, _) => float_to_int_bits(x, self.kind, self.size),
                    other => other.as_i64() as u64,
                };
                self.wrap(bits)
            }
            Kind::Float => Num::F(self.real_to_float(v)),
            Kind::Complex => {
                let part = NumType::native(Kind::Float, self.size / 2);
                match v {
                    Num::C(re, im) => Num::C(part.round(re), part.round(im)),
                    other => Num::C(part.real_to_float(other), 0.0),
                }
            }
        }
    }

    /// [`cast`](Self::cast) of a value of type `from`, as NumPy's cast loop converts it:
    /// conversions between float32 and float64 (complex parts included) go through the
    /// FPU, which quiets signalling NaNs; all other conversions keep NaN payloads as they are.
    #[inline]
    pub(crate) fn convert(&self, v: Num, from: NumType) -> Num {
        let part = |t: NumType| match t.kind {
            Kind::Float => t.size,
            Kind::Complex => t.size / 2,
            _ => 0,
        };
        let (a, b) = (part(from), part(*self));
        let quiet_nan = |x: f64| if x.is_nan() { quiet(x) } else { x };
        match self.cast(v) {
            Num::F(x) if a >= 4 && b >= 4 && a != b => Num::F(quiet_nan(x)),
            Num::C(re, im) if a >= 4 && b >= 4 && a != b => Num::C(quiet_nan(re), quiet_nan(im)),
            other => other,
        }
    }

    /// Assigning a NumPy scalar into an array of this type (`enc[0] = arr[0]`): like
    /// [`cast`](Self::cast), except that NumPy 2 goes through a Python integer for signed
    /// integer targets and refuses values that do not fit (OverflowError, or ValueError for
    /// NaN).
    pub(crate) fn assign(&self, v: Num, from: NumType) -> Result<Num, String> {
        match self.kind {
            Kind::Int => {}
            // The scalar goes through a Python bool.
            Kind::Bool => return Ok(Num::B(v.truthy().into())),
            _ => return Ok(self.convert(v, from)),
        }
        let value: i128 = match v {
            Num::B(b) => (b != 0).into(),
            Num::I(i) => i.into(),
            Num::U(u) => u.into(),
            Num::F(x) | Num::C(x, _) => {
                if !x.is_finite() {
                    return Err(format!("cannot convert {x} to an integer"));
                }
                let t = x.trunc();
                if t.abs() >= 1.8e19 {
                    return Err(format!(
                        "Python integer {t} out of bounds for {}",
                        self.typestr()
                    ));
                }
                t as i128
            }
        };
        self.weak(PyScalar::Int(value))
    }

    /// A Python scalar converted to this type, as NumPy 2 does for weak scalars: integers
    /// must fit an integer type (else NumPy raises OverflowError), numbers convert to floats
    /// through a C double.
    pub(crate) fn weak(&self, s: PyScalar) -> Result<Num, String> {
        match (self.kind, s) {
            (Kind::Bool, PyScalar::Int(i)) => Ok(Num::B((i != 0).into())),
            (Kind::Bool, PyScalar::Float(x)) => Ok(Num::B((x != 0.0).into())),
            (Kind::Int | Kind::UInt, PyScalar::Int(i)) => {
                let (lo, hi) = self.int_range();
                if i < lo || i > hi {
                    return Err(format!(
                        "Python integer {i} out of bounds for {}",
                        self.typestr()
                    ));
                }
                Ok(self.wrap(i as u64))
            }
            (Kind::Int | Kind::UInt, PyScalar::Float(x)) => Ok(self.cast(Num::F(x))),
            (_, PyScalar::Int(i)) => Ok(self.cast(Num::F(i as f64))),
            (_, PyScalar::Float(x)) => Ok(self.cast(Num::F(x))),
        }
    }

    /// The smallest and largest value of an integer type.
    pub(crate) fn int_range(&self) -> (i128, i128) {
        let bits = 8 * self.size as u32;
        match self.kind {
            Kind::Int => (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1),
            _ => (0, (1i128 << bits) - 1),
        }
    }

    /// Keeps the low `size` bytes of `bits` (sign-extending for signed types).
    #[inline]
    fn wrap(&self, bits: u64) -> Num {
        let shift = 64 - 8 * self.size as u32;
        match self.kind {
            Kind::Int => Num::I(((bits << shift) as i64) >> shift),
            _ => Num::U((bits << shift) >> shift),
        }
    }

    /// A real value (of any kind) converted to this float type's precision, rounding once.
    #[inline]
    fn real_to_float(&self, v: Num) -> f64 {
        match v {
            Num::I(i) if self.size == 4 => f64::from(i as f32),
            Num::U(u) if self.size == 4 => f64::from(u as f32),
            other => self.round(other.as_f64()),
        }
    }

    /// Rounds an `f64` to this float type's precision (round half to even; NaN payloads
    /// are cut to the type's width).
    #[inline]
    fn round(&self, x: f64) -> f64 {
        match self.size {
            2 => f16_to_f64(f64_to_f16(x)),
            4 => f32_bits_to_f64(f64_to_f32_bits(x)),
            _ => x,
        }
    }

    /// `a op b` for two values of this float type, as NumPy's loop computes it: float16
    /// values in float32, rounded back. A NaN operand gives that NaN, quieted; when both are
    /// NaN, x86 returns the first operand of the instruction, which is `a` unless the
    /// compiled loop swapped the operands (`b_first`).
    #[inline]
    fn float_op_nan(&self, op: Op, a: f64, b: f64, b_first: bool) -> f64 {
        let (x, y) = if b_first { (b, a) } else { (a, b) };
        if x.is_nan() {
            return quiet(x);
        }
        if y.is_nan() {
            return quiet(y);
        }
        match self.size {
            8 => op.apply(a, b),
            4 => f32_bits_to_f64(op.apply32(a as f32, b as f32).to_bits()),
            _ => self.round(f32_bits_to_f64(op.apply32(a as f32, b as f32).to_bits())),
        }
    }

    /// [`float_op_nan`](Self::float_op_nan) with `a`'s NaN first.
    fn float_op(&self, op: Op, a: f64, b: f64) -> f64 {
        self.float_op_nan(op, a, b, false)
    }

    /// Whether NumPy's `cumsum` over `len` elements of this type returns the element's NaN
    /// rather than the running sum's when both are NaN, as measured on x86-64 (the loops
    /// differ in operand order: float16 always, complex64 from three elements on, complex128
    /// only for two).
    pub(crate) fn cumsum_prefers_element_nan(&self, len: usize) -> bool {
        match (self.kind, self.size) {
            (Kind::Float, 2) => true,
            (Kind::Complex, 8) => len >= 3,
            (Kind::Complex, 16) => len < 3,
            _ => false,
        }
    }

    /// `a op b` for two values of this type. Integers wrap; booleans support what NumPy
    /// does with them here (`!=` for `diff`, `or` for `cumsum`); complex values follow
    /// NumPy's loops (Smith's method for division).
    #[inline]
    pub(crate) fn op(&self, op: Op, a: Num, b: Num) -> Num {
        match (a, b) {
            (Num::I(x), Num::I(y)) => self.wrap(op.apply_int(x as u64, y as u64)),
            (Num::U(x), Num::U(y)) => self.wrap(op.apply_int(x, y)),
            (Num::C(ar, ai), Num::C(br, bi)) => {
                let (re, im) = self.complex_op(op, (ar, ai), (br, bi));
                Num::C(re, im)
            }
            (Num::B(x), Num::B(y)) => {
                let (x, y) = (x != 0, y != 0);
                Num::B(
                    match op {
                        Op::Sub => x != y,
                        Op::Add => x || y,
                        _ => x && y,
                    }
                    .into(),
                )
            }
            (a, b) => {
                let second = op == Op::Add && self.kind == Kind::Float && self.size == 2;
                Num::F(self.float_op_nan(op, a.as_f64(), b.as_f64(), second))
            }
        }
    }

    /// A complex operation, step by step as NumPy's C loops write it.
    fn complex_op(&self, op: Op, (ar, ai): (f64, f64), (br, bi): (f64, f64)) -> (f64, f64) {
        let p = self.part();
        let f = |o, x, y| p.float_op(o, x, y);
        match op {
            Op::Add | Op::Sub => (f(op, ar, br), f(op, ai, bi)),
            Op::Mul => (
                f(Op::Sub, f(Op::Mul, ar, br), f(Op::Mul, ai, bi)),
                f(Op::Add, f(Op::Mul, ar, bi), f(Op::Mul, ai, br)),
            ),
            Op::Div => {
                let (br_abs, bi_abs) = (br.abs(), bi.abs());
                if br_abs >= bi_abs {
                    if br_abs == 0.0 && bi_abs == 0.0 {
                        (f(Op::Div, ar, br_abs), f(Op::Div, ai, br_abs))
                    } else {
                        let rat = f(Op::Div, bi, br);
                        let scl = f(Op::Div, 1.0, f(Op::Add, br, f(Op::Mul, bi, rat)));
                        (
                            // NumPy's compiled loop adds these with the operands swapped.
                            f(
                                Op::Mul,
                                p.float_op_nan(Op::Add, ar, f(Op::Mul, ai, rat), true),
                                scl,
                            ),
                            f(Op::Mul, f(Op::Sub, ai, f(Op::Mul, ar, rat)), scl),
                        )
                    }
                } else {
                    let rat = f(Op::Div, br, bi);
                    let scl = f(Op::Div, 1.0, f(Op::Add, bi, f(Op::Mul, br, rat)));
                    (
                        f(Op::Mul, f(Op::Add, f(Op::Mul, ar, rat), ai), scl),
                        f(Op::Mul, f(Op::Sub, f(Op::Mul, ai, rat), ar), scl),
                    )
                }
            }
        }
    }

    /// `a - b` (see [`op`](Self::op)).
    #[inline]
    pub(crate) fn sub(&self, a: Num, b: Num) -> Num {
        self.op(Op::Sub, a, b)
    }

    /// `a + b` (see [`op`](Self::op)).
    #[inline]
    pub(crate) fn add(&self, a: Num, b: Num) -> Num {
        self.op(Op::Add, a, b)
    }

    /// `acc + b` as one step of NumPy's `cumsum` (see
    /// [`cumsum_prefers_element_nan`](Self::cumsum_prefers_element_nan)).
    #[inline]
    pub(crate) fn cumsum_step(&self, acc: Num, b: Num, element_nan_first: bool) -> Num {
        match (acc, b) {
            (Num::F(x), Num::F(y)) => Num::F(self.float_op_nan(Op::Add, x, y, element_nan_first)),
            (Num::C(ar, ai), Num::C(br, bi)) => {
                let p = self.part();
                Num::C(
                    p.float_op_nan(Op::Add, ar, br, element_nan_first),
                    p.float_op_nan(Op::Add, ai, bi, element_nan_first),
                )
            }
            (a, b) => self.add(a, b),
        }
    }

    /// `a * b` (see [`op`](Self::op)).
    #[inline]
    pub(crate) fn mul(&self, a: Num, b: Num) -> Num {
        self.op(Op::Mul, a, b)
    }

    /// `a / b` for float and complex types (see [`op`](Self::op)).
    #[inline]
    pub(crate) fn div(&self, a: Num, b: Num) -> Num {
        self.op(Op::Div, a, b)
    }

    /// `np.around(v)` (zero decimals): round half to even; integers are unchanged.
    #[inline]
    pub(crate) fn rint(&self, v: Num) -> Num {
        let r = |x: f64| {
            if x.is_nan() {
                quiet(x)
            } else {
                x.round_ties_even()
            }
        };
        match v {
            Num::F(x) => Num::F(r(x)),
            Num::C(re, im) => Num::C(r(re), r(im)),
            other => other,
        }
    }

    /// The float type of each half of a complex type.
    fn part(&self) -> NumType {
        NumType::native(Kind::Float, self.size / 2)
    }
}

/// An arithmetic operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Add,
    Sub,
    Mul,
    Div,
}

impl Op {
    #[inline]
    fn apply(self, a: f64, b: f64) -> f64 {
        match self {
            Op::Add => a + b,
            Op::Sub => a - b,
            Op::Mul => a * b,
            Op::Div => a / b,
        }
    }

    #[inline]
    fn apply32(self, a: f32, b: f32) -> f32 {
        match self {
            Op::Add => a + b,
            Op::Sub => a - b,
            Op::Mul => a * b,
            Op::Div => a / b,
        }
    }

    /// Wrapping integer arithmetic (division is never done on integers here).
    #[inline]
    fn apply_int(self, a: u64, b: u64) -> u64 {
        match self {
            Op::Add => a.wrapping_add(b),
            Op::Sub => a.wrapping_sub(b),
            _ => a.wrapping_mul(b),
        }
    }
}

/// A NaN with its quiet bit set (as x86 arithmetic returns a NaN operand).
fn quiet(x: f64) -> f64 {
    f64::from_bits(x.to_bits() | (1 << 51))
}

/// A float32 (as bits) widened exactly, NaN payloads kept as they are.
fn f32_bits_to_f64(b: u32) -> f64 {
    let x = f32::from_bits(b);
    if x.is_nan() {
        let sign = u64::from(b >> 31) << 63;
        f64::from_bits(sign | 0x7ff0_0000_0000_0000 | (u64::from(b & 0x007f_ffff) << 29))
    } else {
        f64::from(x)
    }
}

/// A double rounded to float32 bits (round half to even). NaNs keep the top of their
/// payload and become quiet only when nothing of it would remain, so float32 NaNs read by
/// [`f32_bits_to_f64`] are written back unchanged.
fn f64_to_f32_bits(x: f64) -> u32 {
    if x.is_nan() {
        let d = x.to_bits();
        let sign = ((d >> 63) as u32) << 31;
        let payload = ((d >> 29) & 0x007f_ffff) as u32;
        let payload = if payload == 0 { 0x0040_0000 } else { payload };
        sign | 0x7f80_0000 | payload
    } else {
        (x as f32).to_bits()
    }
}

/// NumPy's `promote_types` for two numeric types (in the machine's byte order).
pub(crate) fn promote(a: NumType, b: NumType) -> NumType {
    use Kind::*;
    let (a, b) = (a.to_native(), b.to_native());
    let rank = |t: NumType| match t.kind {
        Bool => 0,
        Int | UInt => 1,
        Float => 2,
        Complex => 3,
    };
    let (lo, hi) = if rank(a) <= rank(b) { (a, b) } else { (b, a) };
    // The smallest float able to hold every value of an integer type "safely".
    let float_for = |t: NumType| match t.size {
        1 => 2,
        2 => 4,
        _ => 8,
    };
    match (lo.kind, hi.kind) {
        (Bool, _) => hi,
        (Int, Int) | (UInt, UInt) | (Float, Float) | (Complex, Complex) => {
            NumType::native(hi.kind, lo.size.max(hi.size))
        }
        (Int, UInt) | (UInt, Int) => {
            let (s, u) = if lo.kind == Int { (lo, hi) } else { (hi, lo) };
            if s.size > u.size {
                s
            } else if u.size < 8 {
                NumType::native(Int, 2 * u.size)
            } else {
                NumType::F8
            }
        }
        (Int | UInt, Float) => NumType::native(Float, float_for(lo).max(hi.size)),
        (Int | UInt, Complex) => NumType::native(Complex, (2 * float_for(lo)).max(8).max(hi.size)),
        (Float, Complex) => NumType::native(Complex, (2 * lo.size).max(8).max(hi.size)),
        _ => unreachable!("promote: kinds ordered by rank"),
    }
}

/// The type of `arr OP scalar` under NEP 50 (NumPy 2): a Python scalar takes the array's type,
/// except that a float scalar makes integer and boolean arrays float64 and an integer scalar
/// makes boolean arrays int64.
pub(crate) fn weak_result(arr: NumType, s: PyScalar) -> NumType {
    match (arr.kind, s) {
        (Kind::Bool, PyScalar::Int(_)) => NumType::I8,
        (Kind::Bool | Kind::Int | Kind::UInt, PyScalar::Float(_)) => NumType::F8,
        _ => arr.to_native(),
    }
}

/// The type NumPy's true division `arr / scalar` computes in: float64 for booleans and
/// integers, else the array's type.
pub(crate) fn true_divide_type(arr: NumType) -> NumType {
    match arr.kind {
        Kind::Bool | Kind::Int | Kind::UInt => NumType::F8,
        _ => arr.to_native(),
    }
}

/// Reads an unsigned integer of `b.len()` (1, 2, 4 or 8) bytes in the given order.
#[inline]
pub(crate) fn load(b: &[u8], big: bool) -> u64 {
    macro_rules! int {
        ($t:ty, $n:literal) => {{
            let a: [u8; $n] = b[..$n].try_into().expect("element bytes");
            u64::from(if big {
                <$t>::from_be_bytes(a)
            } else {
                <$t>::from_le_bytes(a)
            })
        }};
    }
    match b.len() {
        1 => b[0].into(),
        2 => int!(u16, 2),
        4 => int!(u32, 4),
        _ => int!(u64, 8),
    }
}

/// Writes the low `out.len()` (1, 2, 4 or 8) bytes of `v` in the given order.
#[inline]
pub(crate) fn store(v: u64, out: &mut [u8], big: bool) {
    macro_rules! int {
        ($t:ty) => {{
            let x = v as $t;
            out.copy_from_slice(&if big {
                x.to_be_bytes()
            } else {
                x.to_le_bytes()
            });
        }};
    }
    match out.len() {
        1 => out[0] = v as u8,
        2 => int!(u16),
        4 => int!(u32),
        _ => int!(u64),
    }
}

#[inline]
fn float_from_bits(bits: u64, size: usize) -> f64 {
    match size {
        2 => f16_to_f64(bits as u16),
        4 => f32_bits_to_f64(bits as u32),
        _ => f64::from_bits(bits),
    }
}

#[inline]
fn float_to_bits(x: f64, size: usize) -> u64 {
    match size {
        2 => f64_to_f16(x).into(),
        4 => f64_to_f32_bits(x).into(),
        _ => x.to_bits(),
    }
}

/// C's `(int32_t)x` on x86-64 (`cvttsd2si`): truncation, and `INT32_MIN` for NaN and values
/// out of range.
#[inline]
fn cvtt32(x: f64) -> i32 {
    let t = x.trunc();
    if (-2147483648.0..=2147483647.0).contains(&t) {
        t as i32
    } else {
        i32::MIN
    }
}

/// C's `(int64_t)x` on x86-64.
#[inline]
fn cvtt64(x: f64) -> i64 {
    let t = x.trunc();
    if (-9223372036854775808.0..9223372036854775808.0).contains(&t) {
        t as i64
    } else {
        i64::MIN
    }
}

/// The bits of C's cast of a float to an integer type as NumPy's scalar cast loops compile
/// on x86-64: types narrower than 32 bits go through `int32_t`, `uint32_t` through `int64_t`,
/// and `uint64_t` subtracts 2^63 from large values first.
#[inline]
fn float_to_int_bits(x: f64, kind: Kind, size: usize) -> u64 {
    const TWO63: f64 = 9223372036854775808.0;
    match (kind, size) {
        (_, 1 | 2) | (Kind::Int, 4) => cvtt32(x) as i64 as u64,
        (Kind::UInt, 4) | (Kind::Int, _) => cvtt64(x) as u64,
        _ if x >= TWO63 => (cvtt64(x - TWO63) as u64) ^ (1 << 63),
        _ => cvtt64(x) as u64,
    }
}

/// A float16 (as bits) widened exactly, NaN payloads included (NumPy's
/// `npy_halfbits_to_doublebits`).
pub(crate) fn f16_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = (h >> 10) & 0x1f;
    let sig = u64::from(h & 0x3ff);
    match exp {
        0 => sign * sig as f64 * f64::powi(2.0, -24),
        0x1f => f64::from_bits((u64::from(h & 0x8000) << 48) | 0x7ff0_0000_0000_0000 | (sig << 42)),
        _ => sign * (1024 + sig) as f64 * f64::powi(2.0, i32::from(exp) - 25),
    }
}

/// A double rounded to float16 bits, round half to even, as NumPy's
/// `npy_doublebits_to_halfbits` does (directly, with no intermediate float32 rounding; NaN
/// keeps the top of its payload).
pub(crate) fn f64_to_f16(x: f64) -> u16 {
    let d = x.to_bits();
    let sign = ((d >> 48) & 0x8000) as u16;
    let exp = d & 0x7ff0_0000_0000_0000;
    let sig = d & 0x000f_ffff_ffff_ffff;
    if exp == 0x7ff0_0000_0000_0000 {
        if sig == 0 {
            return sign | 0x7c00;
        }
        let nan = 0x7c00 | (sig >> 42) as u16;
        return sign | if nan == 0x7c00 { 0x7c01 } else { nan };
    }
    if exp >= 0x40f0_0000_0000_0000 {
        // |x| >= 65536: overflow.
        return sign | 0x7c00;
    }
    if exp <= 0x3f00_0000_0000_0000 {
        // Subnormal half or zero.
        if exp < 0x3e60_0000_0000_0000 {
            return sign;
        }
        let e = exp >> 52;
        let mut s = (0x0010_0000_0000_0000 + sig) << (e - 998);
        if s & 0x003f_ffff_ffff_ffff != 0x0010_0000_0000_0000 {
            s += 0x0010_0000_0000_0000;
        }
        return sign + (s >> 53) as u16;
    }
    let h_exp = ((exp - 0x3f00_0000_0000_0000) >> 42) as u16;
    let mut s = sig;
    if s & 0x0000_07ff_ffff_ffff != 0x0000_0200_0000_0000 {
        s += 0x0000_0200_0000_0000;
    }
    // A carry out of the significand bumps the exponent (up to infinity): still right.
    sign + h_exp + (s >> 42) as u16
}

/// Applies `f` to every element of `input` read as `from` and casts the results, which are
/// of type `computed`, to `to` as one NumPy `astype` of the whole array would. The caller has
/// checked that `input.len()` is a multiple of `from.size`.
pub(crate) fn map_elements(
    input: &[u8],
    from: NumType,
    computed: NumType,
    to: NumType,
    mut f: impl FnMut(Num) -> Num,
) -> crate::error::Result<Vec<u8>> {
    let n = input.len() / from.size;
    let mut out = super::alloc(n * to.size)?;
    let mut cast = ArrayCast::new(computed, to, n);
    for (src, dst) in input
        .chunks_exact(from.size)
        .zip(out.chunks_exact_mut(to.size))
    {
        cast.write(f(from.read(src)), dst);
    }
    Ok(out)
}

/// NumPy's cast of the elements of `input` (of type `from`) to `to` in a loop compiled for the
/// pair, where it is one machine conversion per element, as [`map_elements`] would give it:
/// float32 and float64 to each other (the FPU's rounding and NaN quieting) and to integers
/// (truncating as `float_to_int_bits`; not to uint32, whose vectorised NumPy loop differs out
/// of range), and integers to integers (wrapping). `None` for other pairs, float16, and types
/// not in the machine's byte order: [`map_elements`] casts those.
pub(crate) fn cast_directly(
    input: &[u8],
    from: NumType,
    to: NumType,
) -> Option<crate::error::Result<Vec<u8>>> {
    let native = |t: NumType| t.size == 1 || t.big == NATIVE_BIG;
    if !native(from) || !native(to) {
        return None;
    }
    let n = input.len() / from.size;
    let int = |k: Kind| matches!(k, Kind::Int | Kind::UInt);
    let supported = match (from.kind, to.kind) {
        (Kind::Float, Kind::Float) => from.size >= 4 && to.size >= 4,
        (Kind::Float, k) if int(k) => from.size >= 4 && !(k == Kind::UInt && to.size == 4),
        (a, b) => int(a) && int(b),
    };
    if !supported {
        return None;
    }
    let mut out = match super::alloc(n * to.size) {
        Ok(out) => out,
        Err(e) => return Some(Err(e)),
    };
    macro_rules! to_each_size {
        ($f:ident, $s:literal, $($arg:expr),*) => {
            match to.size {
                1 => $f::<$s, 1>(input, &mut out, $($arg),*),
                2 => $f::<$s, 2>(input, &mut out, $($arg),*),
                4 => $f::<$s, 4>(input, &mut out, $($arg),*),
                _ => $f::<$s, 8>(input, &mut out, $($arg),*),
            }
        };
    }
    match (from.kind, from.size) {
        (Kind::Float, 4) => to_each_size!(float_to, 4, to.kind),
        (Kind::Float, _) => to_each_size!(float_to, 8, to.kind),
        (kind, 1) => to_each_size!(int_to_int, 1, kind == Kind::Int),
        (kind, 2) => to_each_size!(int_to_int, 2, kind == Kind::Int),
        (kind, 4) => to_each_size!(int_to_int, 4, kind == Kind::Int),
        (kind, _) => to_each_size!(int_to_int, 8, kind == Kind::Int),
    }
    Some(Ok(out))
}

/// Applies `f` to each `S`-byte element of `input`, writing the `D`-byte results to `out`.
#[inline(always)]
fn convert_each<const S: usize, const D: usize>(
    input: &[u8],
    out: &mut [u8],
    f: impl Fn([u8; S]) -> [u8; D],
) {
    for (src, dst) in input.chunks_exact(S).zip(out.chunks_exact_mut(D)) {
        dst.copy_from_slice(&f(src.try_into().expect("S bytes")));
    }
}

/// The low `D` bytes of `v` in the machine's order.
#[inline(always)]
fn low_bytes<const D: usize>(v: u64) -> [u8; D] {
    let mut out = [0; D];
    store(v, &mut out, NATIVE_BIG);
    out
}

/// Native float32 (`S` = 4) or float64 elements to native floats or integers of `D` bytes.
fn float_to<const S: usize, const D: usize>(input: &[u8], out: &mut [u8], kind: Kind) {
    let read = |b: [u8; S]| match S {
        4 => f64::from(f32::from_ne_bytes(b[..4].try_into().expect("4 bytes"))),
        _ => f64::from_ne_bytes(b[..8].try_into().expect("8 bytes")),
    };
    match (kind, D) {
        (Kind::Float, 4) => convert_each::<S, D>(input, out, |b| {
            let bytes = (read(b) as f32).to_ne_bytes();
            bytes[..D].try_into().expect("D bytes")
        }),
        (Kind::Float, _) => convert_each::<S, D>(input, out, |b| {
            let bytes = read(b).to_ne_bytes();
            bytes[..D].try_into().expect("D bytes")
        }),
        _ => convert_each::<S, D>(input, out, |b| {
            low_bytes(float_to_int_bits(read(b), kind, D))
        }),
    }
}

/// Native integers of `S` bytes (signed or not) to native integers of `D` bytes, wrapping.
fn int_to_int<const S: usize, const D: usize>(input: &[u8], out: &mut [u8], signed: bool) {
    let shift = 64 - 8 * S as u32;
    convert_each::<S, D>(input, out, |b| {
        let v = load(&b, NATIVE_BIG);
        let v = match signed && S < 8 {
            true => (((v << shift) as i64) >> shift) as u64,
            false => v,
        };
        low_bytes(v)
    })
}

/// Writes the elements of one NumPy array cast (`arr.astype(to)` or `out[...] = arr`) in
/// order. NumPy's float to uint32 cast loop is vectorised (four elements at a time, with a
/// scalar loop for the rest), and the two compile differently for values out of range:
/// this reproduces both as measured on x86-64 (complex sources, cast through a buffer, keep
/// a whole last group of four for the scalar loop).
pub(crate) struct ArrayCast {
    from: NumType,
    to: NumType,
    /// Elements before this index go through the vectorised loop.
    vectorized: usize,
    index: usize,
}

impl ArrayCast {
    /// A cast of `len` elements of type `from` to `to`.
    pub(crate) fn new(from: NumType, to: NumType, len: usize) -> ArrayCast {
        let to_u4 = to.kind == Kind::UInt && to.size == 4;
        let vectorized = match from.kind {
            _ if !to_u4 => 0,
            Kind::Float if from.size >= 4 => len - len % 4,
            Kind::Complex => {
                len - if len.is_multiple_of(4) {
                    len.min(4)
                } else {
                    len % 4
                }
            }
            _ => 0,
        };
        ArrayCast {
            from,
            to,
            vectorized,
            index: 0,
        }
    }

    /// Casts the next element and writes it into `out`.
    #[inline]
    pub(crate) fn write(&mut self, v: Num, out: &mut [u8]) {
        let v = match v {
            Num::F(x) | Num::C(x, _) if self.index < self.vectorized => {
                const TWO31: f64 = 2147483648.0;
                let bits = if x >= TWO31 {
                    (cvtt32(x - TWO31) as u32) ^ 0x8000_0000
                } else {
                    cvtt32(x) as u32
                };
                Num::U(bits.into())
            }
            other => self.to.convert(other, self.from),
        };
        self.index += 1;
        self.to.write(v, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> NumType {
        match ElemType::parse(s) {
            Some(ElemType::Num(t)) => t,
            other => panic!("{s}: {other:?}"),
        }
    }

    #[test]
    fn direct_casts_equal_the_general_ones() {
        let floats = [
            0.0,
            -0.0,
            1.5,
            -1.5,
            2.5,
            127.9,
            128.0,
            -129.7,
            255.5,
            256.0,
            32767.5,
            -32769.0,
            65535.9,
            2147483647.0,
            2147483648.0,
            -2147483649.0,
            4294967296.5,
            1e19,
            -1e19,
            9.3e18,
            1.8446744073709552e19,
            3.4e38,
            1e39,
            1e-45,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            -f64::NAN,
            f64::from_bits(0x7ff0_0000_0000_0001),
        ];
        let ints: [i64; 12] = [
            0,
            1,
            -1,
            127,
            -128,
            255,
            256,
            32767,
            -32768,
            65535,
            i64::MAX,
            i64::MIN,
        ];
        let types = [
            "<f4", "<f8", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8",
        ];
        let mut checked = 0;
        for from in types.map(t) {
            let mut input = vec![0; (floats.len() + ints.len()) * from.size];
            let values = floats
                .iter()
                .map(|&x| Num::F(x))
                .chain(ints.iter().map(|&i| Num::I(i)));
            for (v, out) in values.zip(input.chunks_exact_mut(from.size)) {
                from.write(from.cast(v), out);
            }
            for to in types.map(t) {
                let Some(direct) = cast_directly(&input, from, to) else {
                    continue;
                };
                let general = map_elements(&input, from, from, to, |v| v).unwrap();
                assert_eq!(
                    direct.unwrap(),
                    general,
                    "{} -> {}",
                    from.typestr(),
                    to.typestr()
                );
                checked += 1;
            }
        }
        // Floats to floats and integers but uint32 (18), integers to integers (64).
        assert_eq!(checked, 18 + 64);
        assert!(cast_directly(&[0; 8], t(">f8"), t("<f4")).is_none());
        assert!(cast_directly(&[0; 8], t("<f8"), t("<f2")).is_none());
    }

    #[test]
    fn parses_and_writes_type_strings() {
        for (text, canonical) in [
            ("<i4", "<i4"),
            (">f8", ">f8"),
            ("|b1", "|b1"),
            ("<u1", "|u1"),
            ("i2", "<i2"),
            ("=c8", "<c8"),
            ("|i4", "<i4"),
            ("<U3", "<U3"),
            (">U10", ">U10"),
            ("|O", "|O"),
        ] {
            let ty = ElemType::parse(text).unwrap();
            if cfg!(target_endian = "little") {
                assert_eq!(ty.typestr(), canonical, "{text}");
            }
        }
        for bad in [
            "", "<", "<i3", "<f16", "<x4", "<U", "<i4x", "<S4", "<M8[s]", "|b2", "i",
        ] {
            assert_eq!(ElemType::parse(bad), None, "{bad}");
        }
        assert_eq!(ElemType::parse(">U2").unwrap().size(), 8);
    }

    #[test]
    fn reads_and_writes_both_orders() {
        for text in [
            "<i4", ">i4", "<u2", ">u8", "<f4", ">f8", ">f2", "<c8", ">c16",
        ] {
            let ty = t(text);
            let v = match ty.kind {
                Kind::Int => Num::I(-12345),
                Kind::UInt => Num::U(54321),
                Kind::Float => Num::F(-2.5),
                _ => Num::C(1.5, -0.25),
            };
            let mut out = vec![0u8; ty.size];
            ty.write(v, &mut out);
            assert_eq!(ty.read(&out), v, "{text}");
        }
        let mut out = [0u8; 4];
        t(">i4").write(Num::I(1), &mut out);
        assert_eq!(out, [0, 0, 0, 1]);
        t("<i4").write(Num::I(1), &mut out);
        assert_eq!(out, [1, 0, 0, 0]);
    }

    #[test]
    fn float16_conversions_round_half_even() {
        for (x, bits) in [
            (0.0, 0x0000),
            (-0.0, 0x8000),
            (1.0, 0x3c00),
            (65504.0, 0x7bff),
            (65519.99, 0x7bff),
            (65520.0, 0x7c00),
            (f64::INFINITY, 0x7c00),
            (f64::NAN, 0x7e00),
            (2049.0, 0x6800),              // tie: to even (2048)
            (2051.0, 0x6802),              // tie: to even (2052)
            (2049.0000001, 0x6801),        // just above the tie: up
            (f64::powi(2.0, -24), 0x0001), // smallest subnormal
            (f64::powi(2.0, -25), 0x0000), // tie with zero: to even
            (1.5 * f64::powi(2.0, -25), 0x0001),
            (f64::powi(2.0, -14), 0x0400), // smallest normal
        ] {
            assert_eq!(f64_to_f16(x), bits, "{x}");
        }
        for h in 0..=u16::MAX {
            let x = f16_to_f64(h);
            if x.is_nan() {
                assert_eq!(f64_to_f16(x), h, "{h:#x}");
            } else {
                assert_eq!(f64_to_f16(x), h, "{h:#x} {x}");
                assert_eq!(x, half::f16::from_bits(h).to_f64(), "{h:#x}");
            }
        }
    }

    #[test]
    fn casts_like_numpy() {
        // Values from `np.array(v).astype(dst)` (NumPy 2.4, x86-64, scalar loops).
        let f = |x| Num::F(x);
        assert_eq!(t("|i1").cast(f(300.7)), Num::I(44));
        assert_eq!(t("|i1").cast(f(-300.7)), Num::I(-44));
        assert_eq!(t("|u1").cast(f(-1.0)), Num::U(255));
        assert_eq!(t("|i1").cast(f(1e10)), Num::I(0));
        assert_eq!(t("<i4").cast(f(f64::NAN)), Num::I(i32::MIN.into()));
        assert_eq!(t("<u4").cast(f(1e10)), Num::U(1410065408));
        assert_eq!(t("<u8").cast(f(-1e10)), Num::U(18446744063709551616));
        assert_eq!(t("<u8").cast(f(f64::INFINITY)), Num::U(0));
        assert_eq!(t("<u8").cast(f(f64::NAN)), Num::U(1 << 63));
        assert_eq!(t("<u8").cast(f(1e19)), Num::U(10_000_000_000_000_000_000));
        assert_eq!(t("<i8").cast(f(1e19)), Num::I(i64::MIN));
        assert_eq!(t("|i1").cast(Num::I(200)), Num::I(-56));
        assert_eq!(t("<u2").cast(Num::I(-1)), Num::U(65535));
        assert_eq!(t("<f4").cast(Num::I(16777217)), Num::F(16777216.0));
        assert_eq!(t("<f2").cast(Num::F(65520.0)), Num::F(f64::INFINITY));
        assert_eq!(t("|b1").cast(Num::F(f64::NAN)), Num::B(1));
        assert_eq!(t("|b1").cast(Num::B(94)), Num::B(94));
        assert_eq!(t("|i1").cast(Num::B(94)), Num::I(1));
        assert_eq!(
            t("|b1")
                .assign(Num::B(94), NumType::native(Kind::Bool, 1))
                .unwrap(),
            Num::B(1)
        );
        assert_eq!(t("<i4").cast(Num::C(2.9, 5.0)), Num::I(2));
        assert_eq!(t("<c8").cast(Num::F(0.1)), Num::C(f64::from(0.1f32), 0.0));
        assert_eq!(
            t("<i2").assign(Num::F(1e10), NumType::F8).unwrap_err(),
            "Python integer 10000000000 out of bounds for <i2"
        );
        assert!(t("<i2").assign(Num::F(f64::NAN), NumType::F8).is_err());
        assert_eq!(
            t("|u1").assign(Num::F(300.7), NumType::F8).unwrap(),
            Num::U(44)
        );
    }

    #[test]
    fn promotes_like_numpy() {
        // `np.promote_types(a, b).str`.
        for (a, b, expect) in [
            ("|b1", "|i1", "|i1"),
            ("|u1", "|i1", "<i2"),
            ("<u4", "<i4", "<i8"),
            ("<u8", "<i8", "<f8"),
            ("<u8", "|i1", "<f8"),
            ("<u2", "<i4", "<i4"),
            ("|i1", "<f2", "<f2"),
            ("<i2", "<f2", "<f4"),
            ("<i4", "<f4", "<f8"),
            ("<i8", "<f2", "<f8"),
            ("<i2", "<c8", "<c8"),
            ("<i4", "<c8", "<c16"),
            ("<f2", "<c8", "<c8"),
            ("<f8", "<c8", "<c16"),
            (">f4", "<f2", "<f4"),
        ] {
            let got = promote(t(a), t(b));
            assert_eq!(got, promote(t(b), t(a)));
            if cfg!(target_endian = "little") {
                assert_eq!(got.typestr(), expect, "{a} {b}");
            }
        }
    }

    #[test]
    fn float16_arithmetic_rounds_each_step() {
        let h = t("<f2");
        // 2048 + 1 is a tie in float16, rounded to even: it stays 2048.
        assert_eq!(h.add(Num::F(2048.0), Num::F(1.0)), Num::F(2048.0));
        assert_eq!(h.div(Num::F(1.0), Num::F(3.0)), Num::F(f16_to_f64(0x3555)));
    }
}
