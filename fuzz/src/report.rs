//! What a run counts per target ([`Stats`]) and how it is printed: a paragraph per target
//! (executions, accepted and refused, distinct errors with the most frequent ones, the slowest
//! execution, executions per second, findings) and a Markdown table row per target, ready for
//! the README.
//!
//! Invariants: merging the stats of the jobs of one target is order-independent except for
//! which of two equally slow executions is named.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

/// The most distinct error lines a target keeps (the rest are counted, not stored).
const MAX_DISTINCT: usize = 100_000;

/// The counts of one target over a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    /// Executions.
    pub execs: u64,
    /// Inputs accepted.
    pub accepted: u64,
    /// Inputs refused (with errors).
    pub refused: u64,
    /// Each distinct first line of an error, with how often it was seen.
    pub errors: BTreeMap<String, u64>,
    /// The slowest execution and the seed it was mutated from.
    pub slowest: (Duration, String),
    /// Wall time of the target (its jobs in parallel).
    pub elapsed: Duration,
    /// Findings, known defects included.
    pub findings: u64,
    /// Findings that are known defects.
    pub known: u64,
}

impl Stats {
    /// Counts an error line.
    pub fn error(&mut self, line: &str) {
        if let Some(count) = self.errors.get_mut(line) {
            *count += 1;
        } else if self.errors.len() < MAX_DISTINCT {
            self.errors.insert(line.to_owned(), 1);
        }
    }

    /// Counts an execution's time.
    pub fn timed(&mut self, took: Duration, seed: &str) {
        if took > self.slowest.0 {
            self.slowest = (took, seed.to_owned());
        }
    }

    /// Adds the counts of another job of the same target.
    pub fn merge(&mut self, other: Stats) {
        self.execs += other.execs;
        self.accepted += other.accepted;
        self.refused += other.refused;
        for (line, count) in other.errors {
            *self.errors.entry(line).or_insert(0) += count;
        }
        if other.slowest.0 > self.slowest.0 {
            self.slowest = other.slowest;
        }
        self.findings += other.findings;
        self.known += other.known;
    }

    /// Executions per second of wall time.
    #[must_use]
    pub fn rate(&self) -> f64 {
        let seconds = self.elapsed.as_secs_f64();
        if seconds > 0.0 {
            to_f64(self.execs) / seconds
        } else {
            0.0
        }
    }

    /// The paragraph printed for the target.
    #[must_use]
    pub fn paragraph(&self, target: &str) -> String {
        let mut text = format!(
            "{target}: {} execs, {} accepted, {} refused, {} distinct errors, slowest {} ({}), \
             {:.0} execs/s, {} findings ({} known)\n",
            self.execs,
            self.accepted,
            self.refused,
            self.errors.len(),
            millis(self.slowest.0),
            if self.slowest.1.is_empty() {
                "-"
            } else {
                &self.slowest.1
            },
            self.rate(),
            self.findings,
            self.known
        );
        let mut frequent: Vec<(&String, &u64)> = self.errors.iter().collect();
        frequent.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        for (line, count) in frequent.into_iter().take(5) {
            let _ = writeln!(text, "  {count:>8} x {line}");
        }
        text
    }

    /// The Markdown table row of the target.
    #[must_use]
    pub fn row(&self, target: &str, jobs: usize) -> String {
        format!(
            "| {target} | {} | {} | {} | {} | {} | {:.0} | {jobs} | {} |",
            self.execs,
            self.accepted,
            self.refused,
            self.errors.len(),
            millis(self.slowest.0),
            self.rate(),
            self.findings
        )
    }
}

/// The Markdown table's header.
pub const TABLE_HEADER: &str = "| target | execs | accepted | refused | distinct errors | slowest | execs/s | jobs | findings |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |";

/// A duration in milliseconds, for people.
fn millis(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

/// A count as a float, for rates (exact below 2^53, which any run stays under).
fn to_f64(n: u64) -> f64 {
    let low = u32::try_from(n & 0xFFFF_FFFF).unwrap_or(0);
    let high = u32::try_from(n >> 32).unwrap_or(0);
    f64::from(high) * 4_294_967_296.0 + f64::from(low)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_merge_and_print() {
        let mut a = Stats {
            execs: 2,
            elapsed: Duration::from_secs(1),
            ..Stats::default()
        };
        a.error("e");
        let mut b = Stats {
            execs: 3,
            ..Stats::default()
        };
        b.error("e");
        b.timed(Duration::from_millis(5), "s");
        a.merge(b);
        assert_eq!((a.execs, a.errors["e"]), (5, 2));
        assert!(a.paragraph("t").contains("5 execs"));
        assert_eq!(a.row("t", 1), "| t | 5 | 0 | 0 | 1 | 5.0 ms | 5 | 1 | 0 |");
    }
}
