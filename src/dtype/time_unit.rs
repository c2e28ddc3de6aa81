//! The unit of NumPy `datetime64` / `timedelta64` values: a base unit and a multiple (`[10s]`).

use crate::error::{Error, Result};
use std::ffi::CStr;

/// A NumPy time base unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// No unit (`M8` without brackets): NumPy's generic unit, used for NaT-only values.
    Generic,
    /// `Y`
    Year,
    /// `M`
    Month,
    /// `W`
    Week,
    /// `D`
    Day,
    /// `h`
    Hour,
    /// `m`
    Minute,
    /// `s`
    Second,
    /// `ms`
    Millisecond,
    /// `us` (also written `μs`)
    Microsecond,
    /// `ns`
    Nanosecond,
    /// `ps`
    Picosecond,
    /// `fs`
    Femtosecond,
    /// `as`
    Attosecond,
}

/// Each base unit's NumPy name, NUL-terminated for the C API.
const UNITS: [(Unit, &CStr); 13] = [
    (Unit::Year, c"Y"),
    (Unit::Month, c"M"),
    (Unit::Week, c"W"),
    (Unit::Day, c"D"),
    (Unit::Hour, c"h"),
    (Unit::Minute, c"m"),
    (Unit::Second, c"s"),
    (Unit::Millisecond, c"ms"),
    (Unit::Microsecond, c"us"),
    (Unit::Nanosecond, c"ns"),
    (Unit::Picosecond, c"ps"),
    (Unit::Femtosecond, c"fs"),
    (Unit::Attosecond, c"as"),
];

/// A time unit: `count` × `unit` (`[10s]` is ten seconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeUnit {
    /// The base unit.
    pub unit: Unit,
    /// How many base units one step is (at least 1).
    pub count: u64,
}

impl TimeUnit {
    /// NumPy's generic unit (no brackets).
    pub const GENERIC: TimeUnit = TimeUnit {
        unit: Unit::Generic,
        count: 1,
    };

    /// Parses the text between the brackets of `M8[...]`, e.g. `"ns"` or `"10s"`; `typestr`
    /// names the whole type in errors.
    pub fn parse(text: &str, typestr: &str) -> Result<TimeUnit> {
        let invalid = || {
            Error::InvalidMetadata(format!(
                "dtype {typestr:?} has an unknown time unit {text:?}"
            ))
        };
        let digits = text
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(text.len());
        let count = if digits == 0 {
            1
        } else {
            text[..digits].parse::<u64>().map_err(|_| invalid())?
        };
        let name = match &text[digits..] {
            "μs" => "us",
            other => other,
        };
        let unit = UNITS
            .iter()
            .find(|(_, n)| n.to_bytes() == name.as_bytes())
            .map(|(u, _)| *u)
            .ok_or_else(invalid)?;
        if count == 0 {
            return Err(invalid());
        }
        Ok(TimeUnit { unit, count })
    }

    /// The base unit's NumPy name (`""` for the generic unit).
    pub fn name(&self) -> &'static str {
        self.c_name().to_str().expect("unit names are ASCII")
    }

    /// [`TimeUnit::name`] as a NUL-terminated string, for the C API.
    pub fn c_name(&self) -> &'static CStr {
        UNITS
            .iter()
            .find(|(u, _)| *u == self.unit)
            .map_or(c"", |(_, n)| n)
    }

    /// The bracketed suffix of the type string: `"[ns]"`, `"[10s]"`, or `""` for generic.
    pub fn suffix(&self) -> String {
        match (self.unit, self.count) {
            (Unit::Generic, _) => String::new(),
            (_, 1) => format!("[{}]", self.name()),
            (_, n) => format!("[{n}{}]", self.name()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units_and_multiples() {
        let t = TimeUnit::parse("10s", "x").unwrap();
        assert_eq!(
            (t.unit, t.count, t.suffix()),
            (Unit::Second, 10, "[10s]".to_string())
        );
        assert_eq!(TimeUnit::parse("μs", "x").unwrap().suffix(), "[us]");
        assert_eq!(TimeUnit::parse("M", "x").unwrap().unit, Unit::Month);
        assert_eq!(TimeUnit::parse("m", "x").unwrap().unit, Unit::Minute);
        for (_, c_name) in UNITS {
            let name = c_name.to_str().unwrap();
            let unit = TimeUnit::parse(name, "x").unwrap();
            assert_eq!((unit.name(), unit.c_name()), (name, c_name));
        }
        assert_eq!(TimeUnit::GENERIC.c_name(), c"");
        for bad in ["", "0s", "10", "sec", "-1s", "99999999999999999999s"] {
            assert!(TimeUnit::parse(bad, "x").is_err(), "{bad}");
        }
    }
}
