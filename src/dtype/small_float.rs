//! The small float formats of zarr-extensions (`data-types/<name>/README.md`): `bfloat16` and
//! the float8, float6 and float4 formats of machine learning (ml_dtypes' names). An element is
//! its format's bits as stored: two bytes for `bfloat16`, one byte for the others (float6 and
//! float4 in its low bits). Conversion from `f64` is exact rounding of the real value, once,
//! in any of the five rounding directions `cast_value` names.

use std::fmt;

/// One of the small float formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SmallFloat {
    /// `bfloat16`: an IEEE binary32 cut to 16 bits (8 exponent bits, 7 mantissa bits).
    BFloat16,
    /// `float8_e3m4`: IEEE-like, bias 3.
    Float8E3M4,
    /// `float8_e4m3`: IEEE-like, bias 7.
    Float8E4M3,
    /// `float8_e4m3b11fnuz`: bias 11, no infinity, NaN `0x80`, no negative zero.
    Float8E4M3B11Fnuz,
    /// `float8_e4m3fnuz`: bias 8, no infinity, NaN `0x80`, no negative zero.
    Float8E4M3Fnuz,
    /// `float8_e5m2`: IEEE-like, bias 15.
    Float8E5M2,
    /// `float8_e5m2fnuz`: bias 16, no infinity, NaN `0x80`, no negative zero.
    Float8E5M2Fnuz,
    /// `float8_e8m0fnu`: powers of two 2^-127 to 2^127, NaN `0xff`; no sign, no zero.
    Float8E8M0Fnu,
    /// `float6_e2m3fn`: bias 1, finite only.
    Float6E2M3Fn,
    /// `float6_e3m2fn`: bias 3, finite only.
    Float6E3M2Fn,
    /// `float4_e2m1fn`: bias 1, finite only.
    Float4E2M1Fn,
}

/// Which values besides the finite ones a format has, and how it encodes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Specials {
    /// IEEE 754: the largest exponent holds ±infinity (mantissa 0) and NaNs.
    Ieee,
    /// `fnuz`: no infinity; the sign bit alone is NaN, so zero has no sign.
    Fnuz,
    /// `fn`: neither infinity nor NaN; every code is a finite number.
    Fn,
    /// `fnu` (`e8m0`): unsigned, no zero and no subnormals; all ones is NaN.
    Fnu,
}

/// A format's bit layout.
#[derive(Debug, Clone, Copy)]
struct Layout {
    name: &'static str,
    exponent_bits: u32,
    mantissa_bits: u32,
    bias: i32,
    specials: Specials,
}

/// Where rounding goes when a value falls between two of the format's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// To the nearer, ties to the even code.
    NearestEven,
    /// To the nearer, ties away from zero.
    NearestAway,
    /// Towards zero.
    TowardsZero,
    /// Towards +infinity.
    TowardsPositive,
    /// Towards -infinity.
    TowardsNegative,
}

/// A value rounded to a format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rounded {
    /// The code.
    pub code: u16,
    /// The value is beyond the format's finite range (or below an unsigned format's): `code`
    /// is infinity for IEEE formats, else the nearest finite value.
    pub out_of_range: bool,
}

impl SmallFloat {
    /// Every format, in zarr-extensions' order.
    pub const ALL: [SmallFloat; 11] = [
        SmallFloat::BFloat16,
        SmallFloat::Float8E3M4,
        SmallFloat::Float8E4M3,
        SmallFloat::Float8E4M3B11Fnuz,
        SmallFloat::Float8E4M3Fnuz,
        SmallFloat::Float8E5M2,
        SmallFloat::Float8E5M2Fnuz,
        SmallFloat::Float8E8M0Fnu,
        SmallFloat::Float6E2M3Fn,
        SmallFloat::Float6E3M2Fn,
        SmallFloat::Float4E2M1Fn,
    ];

    fn layout(self) -> Layout {
        let l = |name, exponent_bits, mantissa_bits, bias, specials| Layout {
            name,
            exponent_bits,
            mantissa_bits,
            bias,
            specials,
        };
        use Specials::*;
        match self {
            SmallFloat::BFloat16 => l("bfloat16", 8, 7, 127, Ieee),
            SmallFloat::Float8E3M4 => l("float8_e3m4", 3, 4, 3, Ieee),
            SmallFloat::Float8E4M3 => l("float8_e4m3", 4, 3, 7, Ieee),
            SmallFloat::Float8E4M3B11Fnuz => l("float8_e4m3b11fnuz", 4, 3, 11, Fnuz),
            SmallFloat::Float8E4M3Fnuz => l("float8_e4m3fnuz", 4, 3, 8, Fnuz),
            SmallFloat::Float8E5M2 => l("float8_e5m2", 5, 2, 15, Ieee),
            SmallFloat::Float8E5M2Fnuz => l("float8_e5m2fnuz", 5, 2, 16, Fnuz),
            SmallFloat::Float8E8M0Fnu => l("float8_e8m0fnu", 8, 0, 127, Fnu),
            SmallFloat::Float6E2M3Fn => l("float6_e2m3fn", 2, 3, 1, Fn),
            SmallFloat::Float6E3M2Fn => l("float6_e3m2fn", 3, 2, 3, Fn),
            SmallFloat::Float4E2M1Fn => l("float4_e2m1fn", 2, 1, 1, Fn),
        }
    }

    /// The format of a zarr-extensions data type name.
    pub fn from_name(name: &str) -> Option<SmallFloat> {
        Self::ALL.into_iter().find(|f| f.name() == name)
    }

    /// The zarr-extensions data type name (`"float8_e4m3"`).
    pub fn name(self) -> &'static str {
        self.layout().name
    }

    /// The bits of a value: 16, 8, 6 or 4.
    pub fn bits(self) -> u32 {
        let l = self.layout();
        l.exponent_bits + l.mantissa_bits + u32::from(l.specials != Specials::Fnu)
    }

    /// Bytes per element: 2 for `bfloat16`, else 1.
    pub fn size(self) -> usize {
        self.bits().div_ceil(8) as usize
    }

    fn sign_bit(self) -> Option<u16> {
        (self.layout().specials != Specials::Fnu).then(|| 1 << (self.bits() - 1))
    }

    /// The code of `"NaN"` in fill values, if the format has NaN.
    pub fn canonical_nan(self) -> Option<u16> {
        let l = self.layout();
        match l.specials {
            Specials::Ieee => Some(
                (((1u16 << l.exponent_bits) - 1) << l.mantissa_bits) | 1 << (l.mantissa_bits - 1),
            ),
            Specials::Fnuz => self.sign_bit(),
            Specials::Fnu => Some(0xff),
            Specials::Fn => None,
        }
    }

    /// The code of +infinity, if the format has it.
    pub fn infinity(self) -> Option<u16> {
        let l = self.layout();
        (l.specials == Specials::Ieee).then(|| ((1u16 << l.exponent_bits) - 1) << l.mantissa_bits)
    }

    /// The largest positive finite code (values grow with codes from 0 to it).
    fn max_code(self) -> u16 {
        match self.layout().specials {
            Specials::Ieee => self.infinity().expect("IEEE") - 1,
            Specials::Fnuz | Specials::Fn => self.sign_bit().expect("signed") - 1,
            Specials::Fnu => 0xfe,
        }
    }

    /// The largest finite value.
    pub fn max_value(self) -> f64 {
        self.magnitude(self.max_code())
    }

    /// The value of positive code `code` by the exponent and mantissa fields alone (past
    /// the largest finite code this is where the exponent range would continue).
    fn magnitude(self, code: u16) -> f64 {
        let l = self.layout();
        let exponent = i32::from(code >> l.mantissa_bits);
        let mantissa = f64::from(code & ((1 << l.mantissa_bits) - 1));
        let scale = f64::from(1u32 << l.mantissa_bits);
        if exponent == 0 && l.specials != Specials::Fnu {
            mantissa / scale * 2f64.powi(1 - l.bias)
        } else {
            (1.0 + mantissa / scale) * 2f64.powi(exponent - l.bias)
        }
    }

    /// Whether `code` (its low `bits` bits) is a NaN.
    pub fn is_nan(self, code: u16) -> bool {
        let code = code & self.mask();
        match self.layout().specials {
            // The largest exponent with a mantissa other than 0.
            Specials::Ieee => {
                code & !self.sign_bit().expect("signed") > self.infinity().expect("IEEE")
            }
            Specials::Fnuz | Specials::Fnu => Some(code) == self.canonical_nan(),
            Specials::Fn => false,
        }
    }

    /// The bits a code occupies.
    pub fn mask(self) -> u16 {
        (((1u32 << self.bits()) - 1) & 0xffff) as u16
    }

    /// The value of a code (its low `bits` bits; the others are ignored, as the specs say).
    pub fn to_f64(self, code: u16) -> f64 {
        let code = code & self.mask();
        if self.is_nan(code) {
            return f64::NAN;
        }
        let (negative, positive) = match self.sign_bit() {
            Some(sign) => (code & sign != 0, code & !sign),
            None => (false, code),
        };
        let magnitude = if Some(positive) == self.infinity() {
            f64::INFINITY
        } else {
            self.magnitude(positive)
        };
        if negative {
            -magnitude
        } else {
            magnitude
        }
    }

    /// `x` (not NaN) rounded to the format in `direction`. A value past the largest finite
    /// one, by the rounding of an unbounded exponent range, is out of range; so are
    /// infinities where the format has none, and zero and negative values in `e8m0`.
    pub fn round(self, x: f64, direction: Direction) -> Rounded {
        debug_assert!(!x.is_nan());
        let negative = x.is_sign_negative();
        let with_sign = |code: u16| match self.sign_bit() {
            // fnuz formats have no negative zero.
            Some(sign) if negative && !(code == 0 && self.layout().specials == Specials::Fnuz) => {
                code | sign
            }
            _ => code,
        };
        let saturated = |code: u16| Rounded {
            code,
            out_of_range: true,
        };
        if self.sign_bit().is_none() && (negative || x == 0.0) {
            return saturated(0);
        }
        let a = x.abs();
        let max = self.max_code();
        if a.is_infinite() {
            return match self.infinity() {
                Some(inf) => Rounded {
                    code: with_sign(inf),
                    out_of_range: false,
                },
                None => saturated(with_sign(max)),
            };
        }
        // The largest code not above `a` (none: below an unsigned format's smallest value).
        let (mut lo, mut hi) = (0u16, max);
        let below = if self.magnitude(0) > a {
            None
        } else {
            while lo < hi {
                let mid = lo + (hi - lo).div_ceil(2);
                if self.magnitude(mid) <= a {
                    lo = mid;
                } else {
                    hi = mid - 1;
                }
            }
            Some(lo)
        };
        if let Some(code) = below.filter(|&c| self.magnitude(c) == a) {
            return Rounded {
                code: with_sign(code),
                out_of_range: false,
            };
        }
        // The code above (`max + 1` past the largest finite value, at where the exponent
        // range would continue: infinity for IEEE formats).
        let above = below.map_or(0, |c| c + 1);
        let up = match (below, direction) {
            (None, _) => true,
            (Some(_), Direction::TowardsZero) => false,
            (Some(_), Direction::TowardsPositive) => !negative,
            (Some(_), Direction::TowardsNegative) => negative,
            (Some(b), nearest) => {
                let over = a - self.magnitude(b);
                let under = self.magnitude(above) - a;
                if over != under {
                    over > under
                } else if nearest == Direction::NearestAway {
                    true
                } else {
                    above % 2 == 0
                }
            }
        };
        match (up, above > max) {
            (true, true) => match self.infinity() {
                Some(inf) => Rounded {
                    code: with_sign(inf),
                    out_of_range: true,
                },
                None => saturated(with_sign(max)),
            },
            (true, false) => Rounded {
                code: with_sign(above),
                out_of_range: false,
            },
            (false, _) => Rounded {
                code: with_sign(below.expect("rounding down from a value with a code below")),
                out_of_range: false,
            },
        }
    }
}

impl fmt::Display for SmallFloat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nearest(format: SmallFloat, x: f64) -> u16 {
        format.round(x, Direction::NearestEven).code
    }

    #[test]
    fn decodes_the_specs_special_codes() {
        for (format, nan) in [
            (SmallFloat::BFloat16, 0x7fc0),
            (SmallFloat::Float8E3M4, 0x78),
            (SmallFloat::Float8E4M3, 0x7c),
            (SmallFloat::Float8E5M2, 0x7e),
            (SmallFloat::Float8E4M3Fnuz, 0x80),
            (SmallFloat::Float8E4M3B11Fnuz, 0x80),
            (SmallFloat::Float8E5M2Fnuz, 0x80),
            (SmallFloat::Float8E8M0Fnu, 0xff),
        ] {
            assert_eq!(format.canonical_nan(), Some(nan), "{format}");
            assert!(format.to_f64(nan).is_nan(), "{format}");
        }
        assert_eq!(SmallFloat::Float6E2M3Fn.canonical_nan(), None);
        assert_eq!(SmallFloat::BFloat16.to_f64(0x3f80), 1.0);
        assert_eq!(SmallFloat::BFloat16.to_f64(0xff80), f64::NEG_INFINITY);
        assert!(SmallFloat::BFloat16.to_f64(0xffc1).is_nan());
        assert_eq!(SmallFloat::Float8E4M3.max_value(), 240.0);
        assert_eq!(SmallFloat::Float8E4M3Fnuz.max_value(), 240.0);
        assert_eq!(SmallFloat::Float8E4M3B11Fnuz.max_value(), 30.0);
        assert_eq!(SmallFloat::Float8E5M2.max_value(), 57344.0);
        assert_eq!(SmallFloat::Float8E5M2Fnuz.max_value(), 57344.0);
        assert_eq!(SmallFloat::Float8E3M4.max_value(), 15.5);
        assert_eq!(SmallFloat::Float6E2M3Fn.max_value(), 7.5);
        assert_eq!(SmallFloat::Float6E3M2Fn.max_value(), 28.0);
        assert_eq!(SmallFloat::Float4E2M1Fn.max_value(), 6.0);
        assert_eq!(SmallFloat::Float8E8M0Fnu.to_f64(0), 2f64.powi(-127));
        assert_eq!(SmallFloat::Float8E8M0Fnu.to_f64(0x7f), 1.0);
        // Upper bits of float4/float6 bytes are ignored.
        assert_eq!(SmallFloat::Float4E2M1Fn.to_f64(0xf1), 0.5);
        assert_eq!(SmallFloat::Float4E2M1Fn.to_f64(0x09), -0.5);
        assert_eq!(SmallFloat::Float6E3M2Fn.to_f64(0x41), 0.0625);
    }

    #[test]
    fn every_code_rounds_back_to_itself() {
        for format in SmallFloat::ALL {
            for code in 0..=format.mask() {
                let x = format.to_f64(code);
                if x.is_nan() || (x == 0.0 && format == SmallFloat::Float8E8M0Fnu) {
                    continue;
                }
                let r = format.round(x, Direction::NearestEven);
                assert_eq!(
                    (r.code, r.out_of_range),
                    (code, false),
                    "{format} {code:#x}"
                );
            }
        }
    }

    #[test]
    fn rounds_once_in_each_direction() {
        let e4m3 = SmallFloat::Float8E4M3;
        // 1.0625 is halfway between 1.0 (0x38) and 1.125 (0x39): ties go to even.
        assert_eq!(nearest(e4m3, 1.0625), 0x38);
        assert_eq!(nearest(e4m3, 1.0625000000001), 0x39);
        assert_eq!(nearest(e4m3, -1.0625000000001), 0xb9);
        assert_eq!(e4m3.round(1.0625, Direction::NearestAway).code, 0x39);
        assert_eq!(e4m3.round(1.01, Direction::TowardsPositive).code, 0x39);
        assert_eq!(e4m3.round(-1.01, Direction::TowardsPositive).code, 0xb8);
        assert_eq!(e4m3.round(-1.01, Direction::TowardsNegative).code, 0xb9);
        assert_eq!(e4m3.round(1.12, Direction::TowardsZero).code, 0x38);
        assert_eq!(
            SmallFloat::BFloat16
                .round(1.00390625000001, Direction::NearestEven)
                .code,
            0x3f81
        );
        // Past the largest finite value: IEEE formats overflow to infinity at half a unit
        // beyond it; the others keep their largest value and say so.
        assert_eq!(nearest(e4m3, 247.0), 0x77);
        let over = e4m3.round(248.0, Direction::NearestEven);
        assert_eq!((over.code, over.out_of_range), (0x78, true));
        assert_eq!(e4m3.round(1e6, Direction::TowardsZero).code, 0x77);
        let fnuz = SmallFloat::Float8E4M3Fnuz.round(1e6, Direction::NearestEven);
        assert_eq!((fnuz.code, fnuz.out_of_range), (0x7f, true));
        assert_eq!(nearest(SmallFloat::Float8E4M3Fnuz, -0.0), 0x00);
        assert_eq!(nearest(SmallFloat::Float4E2M1Fn, -0.0), 0x08);
        assert_eq!(nearest(SmallFloat::Float4E2M1Fn, 5.0), 0x06);
        let e8m0 = SmallFloat::Float8E8M0Fnu;
        assert_eq!(nearest(e8m0, 3.0), 0x80);
        assert_eq!(nearest(e8m0, 0.75), 0x7e);
        assert!(e8m0.round(0.0, Direction::NearestEven).out_of_range);
        assert!(e8m0.round(-2.0, Direction::NearestEven).out_of_range);
        assert_eq!(nearest(e8m0, 1e-60), 0x00);
        assert!(
            SmallFloat::Float6E2M3Fn
                .round(f64::INFINITY, Direction::NearestEven)
                .out_of_range
        );
    }
}
