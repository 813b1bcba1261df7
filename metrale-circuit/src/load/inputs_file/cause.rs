//! What in an inputs file made a plan overflow ([`InputsFile::overflow_cause`]): the counts it
//! writes, each set to 1 in turn, then together. A count is any key a plan reads a number
//! from: the plan counts (`slots`, `[verify]`, `[kv]`, `[draft_kv]`, `[caches]`), the
//! `[serving]` profile's (the plan counts then derived from it again), and `[pool]`'s.
//!
//! Owner: metrale-circuit (feature `load`).
//! Invariants:
//! - Only keys the file writes are blamed, so every cause can be located at its value; with
//!   `[serving]`, the plan counts follow from the profile, so its keys are blamed, not theirs.
//! - The counts are tried in the order the file writes them: the first that alone stops the
//!   overflow is the cause. When none alone does, the cause is the fewest keys found that do
//!   together (each needed: with any one of them back the plan overflows again), the earliest
//!   kept; when not even every count at 1 does, the inputs are not the cause (`None`).
//! - A [`serving`](super::agree) count is set to 1 by the one rule its own overflow search uses
//!   (`agree::count_to_one`).

use toml::de::DeTable;

use super::InputsFile;
use crate::load::text::walk::{Table, field};
use crate::model::StateInputs;
use crate::model::{PoolPages, PoolPolicy, StepCounts};

/// A count of an inputs file, by its key path (`["kv", "blocks"]`,
/// `["serving", "kv", "tokens_per_sequence"]`, `["pool", "context"]`).
pub type KeyPath = &'static [&'static str];

/// What made a plan overflow, among the counts an inputs file writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OverflowCause {
    /// This count alone: with it at 1 the plan fits.
    Alone(KeyPath),
    /// No count alone; these together (at least two, in file order): with all of them at 1
    /// the plan fits, with any one of them back it does not.
    Together(Vec<KeyPath>),
}

/// Every count an inputs file may write, by its key path.
const COUNTS: &[KeyPath] = &[
    &["slots"],
    &["verify", "h_steps"],
    &["verify", "conv_steps"],
    &["kv", "blocks"],
    &["kv", "block_size"],
    &["kv", "sequences"],
    &["kv", "chunk_tokens"],
    &["kv", "max_tokens"],
    &["draft_kv", "blocks"],
    &["draft_kv", "block_size"],
    &["draft_kv", "sequences"],
    &["draft_kv", "chunk_tokens"],
    &["draft_kv", "max_tokens"],
    &["caches", "prefix_snapshot_slots"],
    &["caches", "ring", "ring_slots"],
    &["caches", "ring", "seq_slots"],
    &["caches", "carry", "slots"],
    &["caches", "carry", "table_rows"],
    &["caches", "verify_table_rows"],
    &["caches", "capture_rows"],
    &["caches", "lookup", "sequences"],
    &["caches", "lookup", "history_tokens"],
    &["caches", "tree", "slots"],
    &["caches", "tree", "nodes"],
    &["caches", "drafts", "slots"],
    &["caches", "drafts", "positions"],
    &["serving", "sequences"],
    &["serving", "verify_rows"],
    &["serving", "verify_batch"],
    &["serving", "h_steps"],
    &["serving", "table_rows"],
    &["serving", "kv", "block_size"],
    &["serving", "kv", "tokens_per_sequence"],
    &["serving", "kv", "blocks"],
    &["serving", "kv", "chunk_tokens"],
    &["serving", "prefix_snapshots"],
    &["serving", "ring_depth"],
    &["serving", "tree_nodes"],
    &["serving", "capture_rows"],
    &["serving", "lookup_history"],
    &["pool", "context"],
    &["pool", "pages"],
    &["pool", "requests"],
    &["pool", "kernel_block"],
    &["pool", "batched_tokens"],
    &["pool", "batches_in_flight"],
    &["pool", "checkpoint_alignment"],
    &["pool", "checkpoint_pages"],
    &["pool", "speculative_tokens"],
];

impl InputsFile {
    /// The counts this file writes that made its plan overflow: `overflows` plans the inputs
    /// given and says whether the plan still overflows. See the module docs for the order.
    /// `None` when the file is not read from text or no counts of it stop the overflow.
    #[must_use]
    pub fn overflow_cause(
        &self,
        overflows: impl Fn(&StateInputs<'_>) -> bool,
    ) -> Option<OverflowCause> {
        let written = self.written_counts();
        let fits_with = |keys: &[KeyPath]| {
            let mut file = self.clone();
            keys.iter().all(|key| file.count_to_one(key))
                && file.derive_again()
                && !overflows(&file.view().inputs())
        };
        if let Some(key) = written.iter().find(|key| fits_with(&[key])) {
            return Some(OverflowCause::Alone(key));
        }
        if written.len() < 2 || !fits_with(&written) {
            return None;
        }
        // Keep the earliest: try putting the latest back first.
        let mut together = written.clone();
        for key in written.iter().rev() {
            let without: Vec<KeyPath> = together.iter().copied().filter(|k| k != key).collect();
            if fits_with(&without) {
                together = without;
            }
        }
        Some(OverflowCause::Together(together))
    }

    /// The counts of [`COUNTS`] the file writes, in the order it writes them; with `[serving]`,
    /// not the plan counts it derives.
    fn written_counts(&self) -> Vec<KeyPath> {
        let Some(source) = self.source() else {
            return Vec::new();
        };
        let (root, _) = DeTable::parse_recoverable(source.text());
        let serving = field(root.get_ref(), "serving").is_some();
        let mut written: Vec<(usize, KeyPath)> = COUNTS
            .iter()
            .copied()
            .filter(|path| !serving || matches!(path.first(), Some(&("serving" | "pool"))))
            .filter_map(|path| Some((value_start(root.get_ref(), path)?, path)))
            .collect();
        written.sort_by_key(|(at, _)| *at);
        written.into_iter().map(|(_, path)| path).collect()
    }

    /// Sets the count at `path` to 1 (`h_steps`: one verify slot of one row); `false` when the
    /// file has no such count.
    fn count_to_one(&mut self, path: &[&str]) -> bool {
        let count: Option<&mut u64> = match path {
            ["slots"] => Some(&mut self.slots),
            ["verify", "h_steps"] => {
                let Some(verify) = &mut self.verify else {
                    return false;
                };
                verify.h_steps = StepCounts::Uniform { slots: 1, rows: 1 };
                return true;
            }
            ["verify", "conv_steps"] => self.verify.as_mut().map(|v| &mut v.conv_steps),
            [pool @ ("kv" | "draft_kv"), key] => {
                let kv = if *pool == "kv" {
                    self.kv.as_mut()
                } else {
                    self.draft_kv.as_mut()
                };
                kv.and_then(|kv| match *key {
                    "blocks" => Some(&mut kv.blocks),
                    "block_size" => Some(&mut kv.block_size),
                    _ => kv.window.as_mut().and_then(|w| match *key {
                        "sequences" => Some(&mut w.sequences),
                        "chunk_tokens" => Some(&mut w.chunk_tokens),
                        "max_tokens" => Some(&mut w.max_tokens),
                        _ => None,
                    }),
                })
            }
            ["caches", rest @ ..] => {
                let c = &mut self.caches;
                match rest {
                    ["prefix_snapshot_slots"] => Some(&mut c.prefix_snapshot_slots),
                    ["verify_table_rows"] => Some(&mut c.verify_table_rows),
                    ["capture_rows"] => Some(&mut c.capture_rows),
                    ["ring", "ring_slots"] => c.ring.as_mut().map(|r| &mut r.ring_slots),
                    ["ring", "seq_slots"] => c.ring.as_mut().map(|r| &mut r.seq_slots),
                    ["carry", "slots"] => c.carry.as_mut().map(|r| &mut r.slots),
                    ["carry", "table_rows"] => c.carry.as_mut().map(|r| &mut r.table_rows),
                    ["lookup", "sequences"] => c.lookup.as_mut().map(|r| &mut r.sequences),
                    ["lookup", "history_tokens"] => {
                        c.lookup.as_mut().map(|r| &mut r.history_tokens)
                    }
                    ["tree", "slots"] => c.tree.as_mut().map(|r| &mut r.slots),
                    ["tree", "nodes"] => c.tree.as_mut().map(|r| &mut r.nodes),
                    ["drafts", "slots"] => c.drafts.as_mut().map(|r| &mut r.slots),
                    ["drafts", "positions"] => c.drafts.as_mut().map(|r| &mut r.positions),
                    _ => None,
                }
            }
            ["serving", rest @ ..] => {
                let key = rest.join(".");
                return self
                    .serving_counts_mut()
                    .is_some_and(|serving| serving.count_to_one(&key));
            }
            ["pool", key] => {
                let PoolPolicy::Vllm(pool) = &mut self.pool else {
                    return false;
                };
                match (*key, &mut pool.pages) {
                    ("context", _) => Some(&mut pool.context),
                    ("pages", PoolPages::Pages(n)) | ("requests", PoolPages::Requests(n)) => {
                        Some(n)
                    }
                    ("kernel_block", _) => Some(&mut pool.kernel_block),
                    ("batched_tokens", _) => Some(&mut pool.batched_tokens),
                    ("batches_in_flight", _) => Some(&mut pool.batches_in_flight),
                    ("checkpoint_alignment", _) => Some(&mut pool.checkpoint_alignment),
                    ("checkpoint_pages", _) => Some(&mut pool.checkpoint_pages),
                    ("speculative_tokens", _) => Some(&mut pool.speculative_tokens),
                    _ => None,
                }
            }
            _ => None,
        };
        match count {
            Some(count) => {
                *count = 1;
                true
            }
            None => false,
        }
    }
}

/// Where the value of the key at `path` starts in the file whose root is `table`; `None` when
/// it is not written.
fn value_start(table: &Table<'_>, path: &[&str]) -> Option<usize> {
    let (last, tables) = path.split_last()?;
    let mut table = table;
    for key in tables {
        table = field(table, key)?.1.get_ref().as_table()?;
    }
    Some(field(table, last)?.1.span().start)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_count_path_names_a_count_of_a_file_that_writes_them_all() {
        let text = "slots = 9\n[verify]\nh_steps = [4, 4]\nconv_steps = 4\n\
                    [kv]\nblocks = 8\nblock_size = 16\nsequences = 2\nchunk_tokens = 8\nmax_tokens = 64\n\
                    [draft_kv]\nblocks = 8\nblock_size = 16\nsequences = 2\nchunk_tokens = 8\nmax_tokens = 64\n\
                    [caches]\nprefix_snapshot_slots = 2\n\
                    ring = { ring_slots = 4, seq_slots = 2 }\ncarry = { slots = 2, table_rows = 8 }\n\
                    verify_table_rows = 8\ncapture_rows = 8\n\
                    lookup = { sequences = 2, history_tokens = 64 }\ntree = { slots = 2, nodes = 4 }\n\
                    drafts = { slots = 2, positions = 4 }\n\
                    [pool]\npolicy = \"vllm\"\ncontext = 64\nrequests = 2\nkernel_block = 16\n\
                    batched_tokens = 64\nbatches_in_flight = 2\ncheckpoint_alignment = 2\n\
                    checkpoint_pages = 2\nspeculative_tokens = 2\n";
        let file = InputsFile::parse("all.toml", text).unwrap();
        let written = file.written_counts();
        let plain: Vec<KeyPath> = COUNTS
            .iter()
            .copied()
            .filter(|p| !matches!(p.first(), Some(&"serving")) && *p != ["pool", "pages"])
            .collect();
        assert_eq!(written, plain);
        for path in written {
            let mut one = file.clone();
            assert!(one.count_to_one(path), "{path:?}");
            assert_ne!(one, file, "{path:?} changed nothing");
        }
        // The order is the file's, not the table's.
        let file = InputsFile::parse("two.toml", "slots = 1\n[kv]\nblock_size = 16\nblocks = 8\n");
        let written = file.map(|f| f.written_counts());
        let order: &[KeyPath] = &[&["slots"], &["kv", "block_size"], &["kv", "blocks"]];
        assert_eq!(written.as_deref().ok(), Some(order));
    }
}
