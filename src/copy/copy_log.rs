//! What the copies with options report, in zarr-python 2's words: a line per key or node
//! (`copy KEY`, `skip KEY -> DEST`, `copy /g/a (10, 3) int32`), a closing summary, and the
//! counts they return (`n_copied, n_skipped, n_bytes_copied`).

/// A caller's log: one line per action, without a line end.
pub type LogFn<'a> = dyn FnMut(&str) + 'a;

/// What a copy did: zarr-python 2's `(n_copied, n_skipped, n_bytes_copied)`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CopyCounts {
    /// Keys (key copies) or nodes (node copies) copied, or that a dry run would copy.
    pub copied: u64,
    /// Keys or nodes left as they were.
    pub skipped: u64,
    /// Bytes copied: the values' (key copies) or the arrays' elements, at their item size (node
    /// copies); 0 in a dry run.
    pub bytes_copied: u64,
}

impl CopyCounts {
    /// The closing line: `dry run: 4 copied, 0 skipped` or
    /// `all done: 6 copied, 0 skipped, 1,566 bytes copied` (Python's `{:,}` thousands).
    pub fn summary(&self, dry_run: bool) -> String {
        let counts = format!(
            "{} copied, {} skipped",
            thousands(self.copied),
            thousands(self.skipped)
        );
        match dry_run {
            true => format!("dry run: {counts}"),
            false => format!(
                "all done: {counts}, {} bytes copied",
                thousands(self.bytes_copied)
            ),
        }
    }
}

/// `n` with a comma every three digits, as Python's `f"{n:,}"`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_in_zarr_pythons_words() {
        let counts = CopyCounts {
            copied: 1234,
            skipped: 0,
            bytes_copied: 1_234_567,
        };
        assert_eq!(
            counts.summary(false),
            "all done: 1,234 copied, 0 skipped, 1,234,567 bytes copied"
        );
        assert_eq!(counts.summary(true), "dry run: 1,234 copied, 0 skipped");
        for (n, text) in [(0, "0"), (999, "999"), (1000, "1,000"), (100000, "100,000")] {
            assert_eq!(thousands(n), text);
        }
        assert_eq!(thousands(u64::MAX), "18,446,744,073,709,551,615");
    }
}
