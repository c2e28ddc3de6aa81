//! How zarr-extensions' `zfp` codec hands zfp the integers it has no type for: 8- and 16-bit
//! integers promoted to int32 as zfp's `zfp_promote_*` functions do (`v << (31 - N)`, an
//! unsigned value first centred on zero) and demoted with `zfp_demote_*`'s clamping; uint32 and
//! uint64 as int32 and int64, which hold them up to the signed maximum. A larger value is
//! refused rather than stored as that maximum (which zarrs does), and a negative decoded value
//! (a lossy mode's undershoot of 0) reads as 0, as in zarrs.

use crate::error::{Error, Result};

/// How an array's integers become zfp's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Promotion {
    /// Signed integers of 8 or 16 bits, as int32.
    Signed(u32),
    /// Unsigned integers of 8 or 16 bits, as int32.
    Unsigned(u32),
    /// Unsigned integers of 32 or 64 bits, as int32 or int64.
    NonNegative(u32),
}

impl Promotion {
    /// The promotion of integers of `size` bytes (`signed` or not), if zfp needs one.
    pub fn of(signed: bool, size: usize) -> Option<Promotion> {
        let bits = u32::try_from(size * 8).ok()?;
        match (signed, size) {
            (true, 1 | 2) => Some(Promotion::Signed(bits)),
            (false, 1 | 2) => Some(Promotion::Unsigned(bits)),
            (false, 4 | 8) => Some(Promotion::NonNegative(bits)),
            _ => None,
        }
    }

    /// Bytes of one of the array's integers.
    pub fn element_size(self) -> usize {
        match self {
            Promotion::Signed(bits) | Promotion::Unsigned(bits) | Promotion::NonNegative(bits) => {
                bits as usize / 8
            }
        }
    }

    /// Bytes of one of zfp's integers (int32 or int64).
    pub fn zfp_size(self) -> usize {
        match self {
            Promotion::NonNegative(64) => 8,
            _ => 4,
        }
    }

    /// zfp's integers for the array's `elements` (both in the machine's byte order);
    /// [`Error::InvalidArgument`] for a uint32 or uint64 above the signed maximum.
    pub fn promote(self, elements: &[u8]) -> Result<Vec<u8>> {
        let size = self.element_size();
        let mut out = Vec::with_capacity(elements.len() / size * self.zfp_size());
        let too_large = |value: u64, most: u64| {
            Error::InvalidArgument(format!(
                "zfp: the uint{} value {value} is above {most}, the most zarr-extensions' zfp stores (zarrs would store {most} instead)",
                size * 8
            ))
        };
        for element in elements.chunks_exact(size) {
            match self {
                Promotion::Signed(bits) | Promotion::Unsigned(bits) => {
                    let value = match (self, element) {
                        (Promotion::Signed(_), [b]) => i32::from(*b as i8),
                        (Promotion::Signed(_), [a, b]) => i32::from(i16::from_ne_bytes([*a, *b])),
                        (_, [b]) => i32::from(*b) - 0x80,
                        (_, [a, b]) => i32::from(u16::from_ne_bytes([*a, *b])) - 0x8000,
                        _ => unreachable!("elements of 1 or 2 bytes"),
                    };
                    out.extend((value << (31 - bits)).to_ne_bytes());
                }
                Promotion::NonNegative(32) => {
                    let value = u32::from_ne_bytes(element.try_into().expect("4 bytes"));
                    let value = i32::try_from(value)
                        .map_err(|_| too_large(value.into(), i32::MAX as u64))?;
                    out.extend(value.to_ne_bytes());
                }
                Promotion::NonNegative(_) => {
                    let value = u64::from_ne_bytes(element.try_into().expect("8 bytes"));
                    let value =
                        i64::try_from(value).map_err(|_| too_large(value, i64::MAX as u64))?;
                    out.extend(value.to_ne_bytes());
                }
            }
        }
        Ok(out)
    }

    /// Demotes zfp's integers `wide` into the array's integers `out`.
    pub fn demote(self, wide: &[u8], out: &mut [u8]) {
        let elements = out.chunks_exact_mut(self.element_size());
        for (element, value) in elements.zip(wide.chunks_exact(self.zfp_size())) {
            match self {
                Promotion::Signed(bits) | Promotion::Unsigned(bits) => {
                    let value =
                        i32::from_ne_bytes(value.try_into().expect("4 bytes")) >> (31 - bits);
                    let half = 1i32 << (bits - 1);
                    let value = match self {
                        Promotion::Signed(_) => value.clamp(-half, half - 1),
                        _ => (value + half).clamp(0, 2 * half - 1),
                    };
                    match element {
                        [b] => *b = value as u8,
                        _ => element.copy_from_slice(&(value as u16).to_ne_bytes()),
                    }
                }
                Promotion::NonNegative(32) => {
                    let value = i32::from_ne_bytes(value.try_into().expect("4 bytes"));
                    element.copy_from_slice(&(value.max(0) as u32).to_ne_bytes());
                }
                Promotion::NonNegative(_) => {
                    let value = i64::from_ne_bytes(value.try_into().expect("8 bytes"));
                    element.copy_from_slice(&(value.max(0) as u64).to_ne_bytes());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(promotion: Promotion, elements: &[u8]) -> Vec<u8> {
        let wide = promotion.promote(elements).unwrap();
        assert_eq!(
            wide.len(),
            elements.len() / promotion.element_size() * promotion.zfp_size()
        );
        let mut back = vec![0; elements.len()];
        promotion.demote(&wide, &mut back);
        back
    }

    #[test]
    fn promotes_as_zfp_promote_does_and_demotes_back() {
        let int8 = Promotion::of(true, 1).unwrap();
        let wide = int8.promote(&[0x80, 0x7f, 0xff]).unwrap();
        let values: Vec<i32> = wide
            .chunks_exact(4)
            .map(|w| i32::from_ne_bytes(w.try_into().unwrap()))
            .collect();
        assert_eq!(values, [-128 << 23, 127 << 23, -1 << 23]);
        let uint16 = Promotion::of(false, 2).unwrap();
        let wide = uint16.promote(&0u16.to_ne_bytes()).unwrap();
        assert_eq!(i32::from_ne_bytes(wide.try_into().unwrap()), -0x8000 << 15);
        let all: Vec<u8> = (0..=255).collect();
        for promotion in [Promotion::of(true, 1), Promotion::of(false, 1)] {
            assert_eq!(round_trip(promotion.unwrap(), &all), all);
        }
        let words: Vec<u8> = [0u16, 1, 0x7fff, 0x8000, 0xffff]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        for promotion in [Promotion::of(true, 2), Promotion::of(false, 2)] {
            assert_eq!(round_trip(promotion.unwrap(), &words), words);
        }
        let big: Vec<u8> = [0u32, 7, i32::MAX as u32]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        assert_eq!(round_trip(Promotion::of(false, 4).unwrap(), &big), big);
        let big: Vec<u8> = [0u64, i64::MAX as u64]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        assert_eq!(round_trip(Promotion::of(false, 8).unwrap(), &big), big);
        assert_eq!(Promotion::of(true, 4), None);
    }

    #[test]
    fn demotion_clamps_and_values_above_the_signed_maximum_are_refused() {
        // A lossy decode may overshoot: int8's 127 << 23 plus a little stays 127.
        let mut out = [0u8; 2];
        let wide: Vec<u8> = [i32::MAX, i32::MIN]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        Promotion::of(true, 1).unwrap().demote(&wide, &mut out);
        assert_eq!(out, [127, 0x80]);
        let mut out = [0u8; 8];
        let wide: Vec<u8> = [-3i32, 5].iter().flat_map(|v| v.to_ne_bytes()).collect();
        Promotion::of(false, 4).unwrap().demote(&wide, &mut out);
        assert_eq!(out[..4], 0u32.to_ne_bytes());
        for (promotion, value) in [
            (
                Promotion::of(false, 4).unwrap(),
                (1u32 << 31).to_ne_bytes().to_vec(),
            ),
            (
                Promotion::of(false, 8).unwrap(),
                u64::MAX.to_ne_bytes().to_vec(),
            ),
        ] {
            let err = promotion.promote(&value).unwrap_err();
            assert!(
                matches!(&err, Error::InvalidArgument(m) if m.contains("zarrs would store")),
                "{err}"
            );
        }
    }
}
