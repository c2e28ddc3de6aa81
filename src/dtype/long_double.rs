//! NumPy's `float128` (`<f16`) and `complex256` (`<c32`) where they are the C `long double`
//! of x86-64 Linux: x87 extended precision (a sign, a 15-bit exponent and a 64-bit significand
//! with an explicit integer bit) in the low 10 of 16 bytes. Chunks are copied as they are;
//! fill values travel as JSON numbers, so they pass through `f64` (exact one way).

/// Whether this platform's `long double` is x87 extended precision in 16 bytes, as NumPy's
/// `float128` is there: the only place such arrays mean what they meant where written.
pub const SUPPORTED: bool = cfg!(all(target_arch = "x86_64", target_os = "linux"));

/// The 16 native bytes of the long double equal to `v` (exact: every `f64` is one).
pub fn from_f64(v: f64) -> [u8; 16] {
    let bits = v.to_bits();
    let sign = (bits >> 63) as u16;
    let exponent = ((bits >> 52) & 0x7ff) as i32;
    let mantissa = bits & ((1 << 52) - 1);
    let (biased, significand): (u16, u64) = match (exponent, mantissa) {
        (0, 0) => (0, 0),
        // Subnormal: normalise, the integer bit explicit.
        (0, m) => {
            let shift = m.leading_zeros();
            ((-1011 - shift as i32 + 16383) as u16, m << shift)
        }
        (0x7ff, 0) => (0x7fff, 1 << 63),
        (0x7ff, m) => (0x7fff, (0b11 << 62) | (m << 11)),
        (e, m) => ((e - 1023 + 16383) as u16, (1 << 63) | (m << 11)),
    };
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&significand.to_le_bytes());
    out[8..10].copy_from_slice(&((sign << 15) | biased).to_le_bytes());
    out
}

/// The long double in `bytes` (16 native bytes) as the nearest `f64` (infinite beyond its
/// range, NaN for NaN).
pub fn to_f64(bytes: &[u8]) -> f64 {
    let significand = u64::from_le_bytes(bytes[..8].try_into().expect("16 bytes"));
    let top = u16::from_le_bytes([bytes[8], bytes[9]]);
    let negative = top >> 15 == 1;
    let exponent = i32::from(top & 0x7fff);
    let magnitude = match exponent {
        0x7fff if significand << 1 == 0 => f64::INFINITY,
        0x7fff => f64::NAN,
        _ if significand == 0 => 0.0,
        // value = significand × 2^(exponent − 16383 − 63); denormals have exponent 1's scale
        _ => scale(significand as f64, exponent.max(1) - 16383 - 63),
    };
    if negative {
        -magnitude
    } else {
        magnitude
    }
}

/// `x` × 2^`k`, in steps that neither overflow nor underflow on the way.
fn scale(mut x: f64, mut k: i32) -> f64 {
    while k > 1000 {
        x *= 2f64.powi(1000);
        k -= 1000;
    }
    while k < -1000 {
        x *= 2f64.powi(-1000);
        k += 1000;
    }
    x * 2f64.powi(k)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes x87 `fld` would store for these `f64` values (as NumPy's float128 holds them),
    /// and back.
    #[test]
    fn converts_as_x87_stores() {
        for (v, hex) in [
            (1.0, "0000000000000080ff3f000000000000"),
            (-2.5, "00000000000000a000c0000000000000"),
            (0.0, "00000000000000000000000000000000"),
            (f64::INFINITY, "0000000000000080ff7f000000000000"),
            (f64::MIN_POSITIVE / 4.0, "0000000000000080ff3b000000000000"),
        ] {
            let bytes = from_f64(v);
            let text: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            assert_eq!(text, hex, "{v}");
            assert_eq!(to_f64(&bytes), v);
        }
        for v in [1e300, -1e-300, 5e-324, f64::MAX, 0.1, -123.456] {
            assert_eq!(to_f64(&from_f64(v)), v);
        }
        assert!(to_f64(&from_f64(f64::NAN)).is_nan());
        assert_eq!(to_f64(&from_f64(-0.0)).to_bits(), (-0.0f64).to_bits());
        // Beyond f64's range: infinite; below it: zero.
        let mut huge = from_f64(1.0);
        huge[8..10].copy_from_slice(&0x7ffeu16.to_le_bytes());
        assert_eq!(to_f64(&huge), f64::INFINITY);
        let mut tiny = from_f64(1.0);
        tiny[8..10].copy_from_slice(&1u16.to_le_bytes());
        assert_eq!(to_f64(&tiny), 0.0);
    }
}
