//! Text in NumPy's `U` type: one UTF-32 code unit per character, in native byte order, padded
//! with zero units to the type's length.

use crate::error::{Error, Result};

/// The text of `units` up to the first zero unit; a unit that is no Unicode scalar value is
/// [`Error::InvalidArgument`] naming it.
pub fn decode(units: &[u32]) -> Result<String> {
    units
        .iter()
        .take_while(|&&u| u != 0)
        .map(|&u| {
            char::from_u32(u).ok_or_else(|| {
                Error::InvalidArgument(format!("{u:#x} is not a Unicode scalar value"))
            })
        })
        .collect()
}

/// Writes `text` into `out` as code units, zero units after it; text of more characters than
/// `out` holds is [`Error::BufferSize`].
pub fn encode(text: &str, out: &mut [u32]) -> Result<()> {
    let count = text.chars().count();
    if count > out.len() {
        return Err(Error::BufferSize(format!(
            "{count} characters do not fit in {}",
            out.len()
        )));
    }
    out.fill(0);
    out.iter_mut()
        .zip(text.chars())
        .for_each(|(unit, c)| *unit = c as u32);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_refuses_what_does_not_fit() {
        let mut units = [7u32; 5];
        encode("a€😀", &mut units).unwrap();
        assert_eq!(units, [0x61, 0x20ac, 0x1f600, 0, 0]);
        assert_eq!(decode(&units).unwrap(), "a€😀");
        assert!(matches!(
            encode("abcdef", &mut units),
            Err(Error::BufferSize(_))
        ));
        assert!(
            matches!(decode(&[0xd800]), Err(Error::InvalidArgument(m)) if m.contains("0xd800"))
        );
    }
}
