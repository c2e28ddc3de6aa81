//! Progress reports and cancellation, shared by the copies.

use crate::error::{Error, Result};
use std::ops::ControlFlow;

/// How far a long operation is: bytes and items (keys, elements) done out of the totals.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Progress {
    /// Bytes done so far.
    pub bytes_done: u64,
    /// Bytes to do in all.
    pub bytes_total: u64,
    /// Items (keys, elements) done so far.
    pub items_done: u64,
    /// Items to do in all.
    pub items_total: u64,
}

/// A caller's progress callback: `Break` cancels the operation.
pub type ProgressFn<'a> = dyn FnMut(&Progress) -> ControlFlow<()> + 'a;

/// Calls the caller's callback from the calling thread: once before any work, then after
/// each unit of work. A request to stop becomes [`Error::Cancelled`], except on the last
/// call, when everything is done already.
pub(super) struct Reporter<'a, 'f> {
    progress: Progress,
    callback: &'a mut ProgressFn<'f>,
    what: String,
}

impl<'a, 'f> Reporter<'a, 'f> {
    /// Reports the start (nothing done) of `what`; the caller may cancel it right away.
    pub fn start(
        what: String,
        bytes_total: u64,
        items_total: u64,
        callback: &'a mut ProgressFn<'f>,
    ) -> Result<Self> {
        let progress = Progress {
            bytes_total,
            items_total,
            ..Progress::default()
        };
        let reporter = Reporter {
            progress,
            callback,
            what,
        };
        match (reporter.callback)(&reporter.progress) {
            ControlFlow::Continue(()) => Ok(reporter),
            ControlFlow::Break(()) => Err(reporter.cancelled()),
        }
    }

    /// Records a finished unit of `items` items and `bytes` bytes and reports it.
    pub fn advance(&mut self, items: u64, bytes: u64) -> Result<()> {
        let p = &mut self.progress;
        p.items_done += items;
        p.bytes_done += bytes;
        let finished = p.items_done >= p.items_total && p.bytes_done >= p.bytes_total;
        match (self.callback)(&self.progress) {
            ControlFlow::Break(()) if !finished => Err(self.cancelled()),
            _ => Ok(()),
        }
    }

    /// Raises the byte total to at least the bytes done, for work whose size is learnt on
    /// the way (object arrays).
    pub fn grow_bytes_total(&mut self, bytes: u64) {
        self.progress.bytes_total += bytes;
    }

    fn cancelled(&self) -> Error {
        let p = &self.progress;
        Error::Cancelled(format!(
            "{} stopped by the progress callback after {} of {} items ({} of {} bytes)",
            self.what, p.items_done, p.items_total, p.bytes_done, p.bytes_total
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_start_and_units_and_cancels_before_the_end_only() {
        let mut seen = Vec::new();
        let mut record = |p: &Progress| {
            seen.push(*p);
            ControlFlow::Break(())
        };
        let err = Reporter::start("copy".into(), 10, 2, &mut record).err();
        assert!(matches!(err, Some(Error::Cancelled(m)) if m.contains("after 0 of 2 items")));
        let mut calls = 0;
        let mut stop_at_end = |p: &Progress| {
            calls += 1;
            match p.items_done {
                0 => ControlFlow::Continue(()),
                _ => ControlFlow::Break(()),
            }
        };
        let mut r = Reporter::start("copy".into(), 10, 2, &mut stop_at_end).unwrap();
        assert!(matches!(r.advance(1, 5), Err(Error::Cancelled(_))));
        r.advance(1, 5).unwrap();
        assert_eq!(calls, 3);
        assert_eq!(
            seen,
            vec![Progress {
                bytes_total: 10,
                items_total: 2,
                ..Default::default()
            }]
        );
    }
}
