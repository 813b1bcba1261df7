//! What a run prints ([`Report`]): the fit, the arena sizes, the unit shapes kernels see, the
//! operations run, and the outcome of the tag check, which ends the report: `every tag
//! intact: N units checked`, or the units that broke.
//!
//! Invariants: the report is data (every figure a field) and its text a function of it, the
//! same on a terminal and in tests.

use std::fmt;

use metrale_circuit::StateDtype;
use metrale_circuit::serving::{Capacity, Fit};

use crate::engine::Operations;
use crate::tags::TagCheck;

/// What a run did and found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The circuit file, as given.
    pub circuit: String,
    /// The checkpoint.
    pub checkpoint: String,
    /// Where the serving profile came from.
    pub source: String,
    /// The device budget.
    pub budget: u64,
    /// KV tokens per sequence the fit sized.
    pub context: u64,
    /// The fit.
    pub fit: Fit,
    /// What the plan at the fit holds per unit and what one more costs.
    pub costs: Capacity,
    /// Sequence slots, the padding dummy included.
    pub slots: u64,
    /// Rows per verify (K).
    pub verify_rows: u64,
    /// Terms of the plan.
    pub terms: usize,
    /// Paged KV sides.
    pub kv_sides: usize,
    /// Of them, the sliding-window sides, kept as rings.
    pub windows: Vec<WindowSide>,
    /// The most tokens the run gave a sequence.
    pub capacity: u64,
    /// The unit shape of the recurrent and KV states, each distinct one once.
    pub shapes: Vec<UnitShape>,
    /// Terms whose units were each checked, when written, against their shape's strides.
    pub shaped_terms: usize,
    /// The alignment of every region and buffer.
    pub align: u64,
    /// The device arena's bytes (its buffer's).
    pub device_bytes: u64,
    /// The host arena's bytes (its buffer's).
    pub host_bytes: u64,
    /// The operations run.
    pub operations: Operations,
    /// The final check of every unit.
    pub tags: TagCheck,
}

/// A sliding-window KV side, kept as a ring per sequence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowSide {
    /// Its state (`l0.swa.k`).
    pub state: String,
    /// The window, in tokens.
    pub window: u64,
    /// The window law's blocks per sequence.
    pub per_sequence: u64,
    /// The most blocks one sequence held at once.
    pub most_held: u64,
}

/// A state's unit as a kernel views it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitShape {
    /// The state's id in its block (`h`).
    pub state: String,
    /// Its axes' extents.
    pub extents: Vec<u64>,
    /// Its element type.
    pub dtype: StateDtype,
}

impl fmt::Display for UnitShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {:?} {}", self.state, self.extents, self.dtype.name())
    }
}

impl Report {
    /// Every unit read back its tag.
    #[must_use]
    pub fn intact(&self) -> bool {
        self.tags.intact()
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_setup(f)?;
        self.write_operations(f)?;
        self.write_tags(f)
    }
}

impl Report {
    /// The fit, the arenas, the plan.
    fn write_setup(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "engine: {}, checkpoint `{}`, profile from {}",
            self.circuit, self.checkpoint, self.source
        )?;
        let next = self.fit.next_device_bytes.map_or_else(
            || "one more cannot be planned".to_owned(),
            |bytes| format!("{} would need {bytes} B", self.fit.value + 1),
        );
        writeln!(
            f,
            "fit:        {} sequences of {} tokens in a budget of {} B: {} device B ({next})",
            self.fit.value, self.context, self.budget, self.fit.device_bytes
        )?;
        let bytes = |b: Option<u64>| b.map_or_else(|| "none".to_owned(), |b| format!("{b} B"));
        writeln!(
            f,
            "costs:      one more sequence {}, one more KV block {}; a sequence slot {} B, a KV \
             token {} B",
            bytes(self.fit.marginal_bytes()),
            bytes(self.costs.block_bytes),
            self.costs.per_slot,
            self.costs.per_token
        )?;
        writeln!(
            f,
            "arenas:     device {} B, host {} B: one buffer each, its first byte aligned to {}",
            self.device_bytes, self.host_bytes, self.align
        )?;
        writeln!(
            f,
            "plan:       {} terms; {} slots (the padding dummy last); {} KV sides ({} windowed); \
             K = {}; up to {} tokens a sequence",
            self.terms,
            self.slots,
            self.kv_sides,
            self.windows.len(),
            self.verify_rows,
            self.capacity
        )?;
        let shapes: Vec<String> = self.shapes.iter().map(ToString::to_string).collect();
        writeln!(
            f,
            "shapes:     {}; {} of {} terms' units checked against their strides",
            shapes.join(", "),
            self.shaped_terms,
            self.terms
        )
    }

    /// The operations run.
    fn write_operations(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ops = &self.operations;
        writeln!(f, "operations:")?;
        writeln!(
            f,
            "  format    {} units stamped, every unit of every term",
            ops.formatted
        )?;
        writeln!(
            f,
            "  slots     {} claimed, {} released; the pool refused {} claim(s) with only the \
             dummy left; {} padding writes to the dummy",
            ops.claimed, ops.released, ops.refused, ops.padding_writes
        )?;
        writeln!(
            f,
            "  tokens    {} prefills, {} decode steps, {} tokens; {} ring copies",
            ops.prefills, ops.decode_steps, ops.tokens, ops.ring_copies
        )?;
        writeln!(
            f,
            "  KV blocks {} allocated, {} reused by windowed rings, {} freed",
            ops.blocks_allocated, ops.blocks_reused, ops.blocks_freed
        )?;
        let mut laws: Vec<(u64, u64)> = self
            .windows
            .iter()
            .map(|side| (side.window, side.per_sequence))
            .collect();
        laws.dedup();
        for (window, per_sequence) in laws {
            let sides = self
                .windows
                .iter()
                .filter(|side| (side.window, side.per_sequence) == (window, per_sequence));
            let (count, most) =
                sides.fold((0, 0), |(n, most), side| (n + 1, side.most_held.max(most)));
            writeln!(
                f,
                "  windows   {count} side(s) of a {window}-token window: the law gives a \
                 sequence {per_sequence} blocks, a sequence held at most {most}"
            )?;
        }
        writeln!(
            f,
            "  prefix    {} snapshots taken, {} restored",
            ops.prefix_snapshots, ops.prefix_restores
        )?;
        writeln!(
            f,
            "  verify    {} verifies, {} rows accepted; rolled back {} times to the checkpoint, \
             {} to an accepted row",
            ops.verifies, ops.accepted_rows, ops.rollbacks_to_checkpoint, ops.rollbacks_to_row
        )?;
        writeln!(
            f,
            "  units     {} writes, {} copies after the format",
            ops.writes, ops.copies
        )
    }

    /// The outcome of the tag check.
    fn write_tags(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.tags.intact() {
            return writeln!(f, "every tag intact: {} units checked", self.tags.checked);
        }
        writeln!(
            f,
            "TAGS BROKEN: {} of {} units checked do not hold their tag (units alias):",
            self.tags.broken, self.tags.checked
        )?;
        for mismatch in &self.tags.first {
            writeln!(f, "  {mismatch}")?;
        }
        let more = self.tags.broken - self.tags.first.len() as u64;
        if more > 0 {
            writeln!(f, "  ... and {more} more")?;
        }
        Ok(())
    }
}
