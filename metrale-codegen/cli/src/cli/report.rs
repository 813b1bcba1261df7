//! What the renderers read ([`super::table`], [`super::json`], [`super::svg`]): one plan made
//! ([`Report`]: the plan, each term carrying its state's model [`Position`], what it was made
//! from, and the totals the outputs show per lifetime, kind, layer kind and layer), every
//! rank's ([`EveryRankReport`]: each rank's plan and their sums), and what `fit` found
//! ([`FitReport`]); and [`human_bytes`].
//!
//! Invariants:
//! - `layers` holds one layer kind per layer of the checkpoint, so every term at
//!   `Position::Layer(i)` has a kind.
//! - Bytes per (space, lifetime) are the plan's own ([`DynamicPlan::lifetime_bytes`], the layout
//!   law's figures), never summed a second time; the other totals are sums of term bytes. A sum
//!   is at most the two arenas together, so it saturates rather than wraps in the one case
//!   (both arenas near `u64::MAX`) where it could not fit.
//! - Every list of totals is in a fixed order: kinds in [`StateKind::ALL`] order, lifetimes in
//!   [`Lifetime::LAYOUT_ORDER`], places and layer kinds in plan order (prologue, the layout's
//!   kinds in file order, epilogue, draft).

use metrale_circuit::dynamic::{DynamicPlan, Position, StateTerm};
use metrale_circuit::load::Circuit;
use metrale_circuit::serving::{Capacity, Fit, pages::PoolCapacity};
use metrale_circuit::{Lifetime, Space, StateKind};

use super::planned::RankPlan;
use super::prepared::{ParallelRank, Prepared};
use super::request::Request;

/// A plan made, with what it was made from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The circuit file, as given.
    pub circuit: String,
    /// The checkpoint sized.
    pub checkpoint: String,
    /// The inputs file, as given, or the name of the built-in default inputs.
    pub inputs: String,
    /// The inputs file as given, `None` for the built-in default inputs.
    pub inputs_file: Option<String>,
    /// The plan.
    pub plan: DynamicPlan,
    /// The kind of each layer of the checkpoint, by layer index.
    pub layers: Vec<String>,
    /// The layer kinds of the circuit's layout, in file order.
    pub layer_kinds: Vec<String>,
    /// The tensor- and pipeline-parallel rank planned, when one was asked for.
    pub parallel_rank: Option<ParallelRank>,
}

impl Report {
    /// The report of `plan`, made for `request` from `prepared` (of the rank at `parallel_rank`,
    /// when one was asked for).
    pub fn new(
        request: &Request,
        prepared: &Prepared,
        parallel_rank: Option<ParallelRank>,
        plan: DynamicPlan,
    ) -> Self {
        Self {
            circuit: request.circuit.clone(),
            checkpoint: prepared.checkpoint().to_owned(),
            inputs: prepared.inputs_name().to_owned(),
            inputs_file: request.inputs_file().map(str::to_owned),
            plan,
            layers: prepared.layer_kinds().to_vec(),
            layer_kinds: layer_kinds(prepared.circuit()),
            parallel_rank,
        }
    }
}

/// Every rank's plan, with what they were made from.
pub struct EveryRankReport {
    /// The circuit file, as given.
    pub circuit: String,
    /// The checkpoint sized.
    pub checkpoint: String,
    /// The inputs file, as given, or the name of the built-in inputs.
    pub inputs: String,
    /// The alignment of every region.
    pub align: u64,
    /// Tensor-parallel ranks.
    pub tp: u64,
    /// Pipeline-parallel ranks.
    pub pp: u64,
    /// Each pipeline stage's plan, in pipeline order: each of its `tp` ranks holds it.
    pub ranks: Vec<RankPlan>,
}

impl EveryRankReport {
    /// The report of `ranks`, every rank's plan, made for `request` from `prepared`.
    pub fn new(request: &Request, prepared: &Prepared, ranks: Vec<RankPlan>) -> Self {
        let counts = &prepared.ranks().counts;
        Self {
            circuit: request.circuit.clone(),
            checkpoint: prepared.checkpoint().to_owned(),
            inputs: prepared.inputs_name().to_owned(),
            align: request.align,
            tp: counts.tp,
            pp: counts.pp,
            ranks,
        }
    }

    /// The device bytes of every rank together (saturating: each is at most `u64::MAX`).
    pub fn device_bytes(&self) -> u64 {
        self.ranks.iter().fold(0u64, |s, r| {
            s.saturating_add(r.plan.device_bytes().saturating_mul(self.tp))
        })
    }

    /// The host bytes of every rank together (saturating).
    pub fn host_bytes(&self) -> u64 {
        self.ranks.iter().fold(0u64, |s, r| {
            s.saturating_add(r.plan.host_bytes().saturating_mul(self.tp))
        })
    }
}

/// What `fit` found, with what it was asked and made from.
pub struct FitReport {
    /// The circuit file, as given.
    pub circuit: String,
    /// The checkpoint sized.
    pub checkpoint: String,
    /// The inputs file, as given, or the name of the built-in inputs.
    pub inputs: String,
    /// The alignment of every region.
    pub align: u64,
    /// The device byte budget of the state: `--budget`, or what `--gpu` leaves.
    pub budget: u64,
    /// With `--gpu`: the GPU and what else it holds.
    pub gpu: Option<GpuReport>,
    /// The free input, as spelled on the command line (`kv-blocks`, `sequences`).
    pub free: &'static str,
    /// KV tokens per sequence, for `--for sequences`.
    pub context: Option<u64>,
    /// The answer: of the one GPU, or of the rank that binds first.
    pub answer: FitAnswer,
    /// The serving profile the answer was found under (`None` without `[serving]`).
    pub profile: Option<ProfileReport>,
}

/// The serving profile a fit varied, as the outputs state it: where it was read and what each
/// sequence carries besides its KV.
pub struct ProfileReport {
    /// The inputs file it was read from, or the name of the built-in profile.
    pub source: String,
    /// Rows a speculative step verifies.
    pub verify_rows: u64,
    /// Depth of the rollback ring of recurrent snapshots.
    pub ring_depth: u64,
    /// Prefix-cache snapshot slots.
    pub prefix_snapshots: u64,
    /// Whether the draft KV blocks grow with the main ones.
    pub draft_kv: bool,
    /// Speculative tree nodes a sequence.
    pub tree_nodes: u64,
    /// Tokens a KV block holds (`None` without KV).
    pub kv_block_size: Option<u64>,
    /// Every format key and the dtype or layout it names, in the file's order.
    pub formats: Vec<(String, String)>,
}

/// `fit --gpu`: the GPU, what else it holds, and the state's budget it leaves.
pub struct GpuReport {
    /// The GPU, its usable share, the weights a GPU holds and the reserve.
    pub memory: metrale_circuit::serving::GpuMemory,
    /// The GPUs the weights are split over (`tp x pp`).
    pub ranks: u64,
    /// The whole checkpoint's weights.
    pub weights_total: u64,
    /// Where they were read (`given`, a file, a folder).
    pub weights_source: String,
    /// The state's budget: `memory.state_budget()`.
    pub budget: u64,
}

/// One fit's answer and the per-unit figures printed beside it.
pub struct FitAnswer {
    /// The rank it is of, over several ranks (or the one asked for).
    pub parallel_rank: Option<ParallelRank>,
    /// The largest value that fits, and the device bytes at it and at one more.
    pub fit: Fit,
    /// What the plan at the answer holds per unit and what one more costs.
    pub capacity: Capacity,
    /// Under vLLM's page pool: the pool the budget's rest makes.
    pub pool: Option<PoolCapacity>,
}

/// How many terms, and their bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Total {
    /// Terms counted (empty ones included).
    pub terms: usize,
    /// Their bytes, alignment padding excluded.
    pub bytes: u64,
}

impl Total {
    /// Counts `term` in.
    pub fn add(&mut self, term: &StateTerm) {
        self.terms += 1;
        self.bytes = self.bytes.saturating_add(term.bytes);
    }

    /// The total of `terms`.
    pub fn of<'a>(terms: impl IntoIterator<Item = &'a StateTerm>) -> Self {
        let mut total = Self::default();
        for term in terms {
            total.add(term);
        }
        total
    }
}

/// One row of the totals per layer kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayerKindTotal {
    /// `prologue`, a layer kind of the layout, `epilogue` or `draft`.
    pub name: String,
    /// The layers of this kind; `None` for the prologue, epilogue and draft rows.
    pub layers: Option<usize>,
    /// Their terms.
    pub total: Total,
}

/// The layer kinds of `circuit`'s layout, in file order.
fn layer_kinds(circuit: &Circuit) -> Vec<String> {
    circuit
        .layout()
        .blocks()
        .iter()
        .map(|(kind, _)| kind.clone())
        .collect()
}

impl Report {
    /// Every term with its model position, in plan order.
    pub fn terms(&self) -> impl Iterator<Item = (&StateTerm, Position)> + '_ {
        self.plan.terms().iter().map(|t| (t, t.position))
    }

    /// How `place` is named: `prologue`, `l3`, `epilogue`, `draft`.
    pub fn place_name(place: Position) -> String {
        match place {
            Position::Prologue => "prologue".to_owned(),
            Position::Layer(i) => format!("l{i}"),
            Position::Epilogue => "epilogue".to_owned(),
            Position::Draft => "draft".to_owned(),
        }
    }

    /// `place` with its layer kind: `l3 (full_attention)`, `epilogue`.
    pub fn place_label(&self, place: Position) -> String {
        match place {
            Position::Layer(i) => format!("l{i} ({})", self.layer_kind(i)),
            _ => Self::place_name(place),
        }
    }

    /// The kind of layer `i` (empty past the last layer, which no position names).
    pub fn layer_kind(&self, i: u64) -> &str {
        usize::try_from(i)
            .ok()
            .and_then(|i| self.layers.get(i))
            .map_or("", String::as_str)
    }

    /// The terms of `space` with `lifetime`: their count, and their bytes as the plan's layout
    /// summed them.
    pub fn by_lifetime(&self, space: Space, lifetime: Lifetime) -> Total {
        let terms = self
            .plan
            .terms()
            .iter()
            .filter(|t| t.space == space && t.lifetime == lifetime)
            .count();
        Total {
            terms,
            bytes: self.plan.lifetime_bytes(space, lifetime),
        }
    }

    /// Every kind, in [`StateKind::ALL`] order, with the total of its terms (zero for a kind
    /// the plan has no term of).
    pub fn by_kind(&self) -> Vec<(StateKind, Total)> {
        StateKind::ALL
            .iter()
            .map(|&kind| {
                let total = Total::of(self.plan.terms().iter().filter(|t| t.kind == kind));
                (kind, total)
            })
            .collect()
    }

    /// The prologue, each layer kind of the layout (in file order), the epilogue and the draft,
    /// each with its terms' total.
    pub fn by_layer_kind(&self) -> Vec<LayerKindTotal> {
        let section = |name: &str, place: Position| LayerKindTotal {
            name: name.to_owned(),
            layers: None,
            total: Total::of(self.terms().filter(|&(_, p)| p == place).map(|(t, _)| t)),
        };
        let mut rows = vec![section("prologue", Position::Prologue)];
        for kind in &self.layer_kinds {
            let of_kind =
                |place: Position| matches!(place, Position::Layer(i) if self.layer_kind(i) == kind);
            rows.push(LayerKindTotal {
                name: kind.clone(),
                layers: Some(self.layers.iter().filter(|k| *k == kind).count()),
                total: Total::of(self.terms().filter(|&(_, p)| of_kind(p)).map(|(t, _)| t)),
            });
        }
        rows.push(section("epilogue", Position::Epilogue));
        rows.push(section("draft", Position::Draft));
        rows
    }

    /// Every layer of the checkpoint, by index, with the total of its terms.
    pub fn by_layer(&self) -> Vec<Total> {
        let mut totals = vec![Total::default(); self.layers.len()];
        for (term, place) in self.terms() {
            if let Position::Layer(i) = place
                && let Some(total) = usize::try_from(i).ok().and_then(|i| totals.get_mut(i))
            {
                total.add(term);
            }
        }
        totals
    }
}

/// Binary units above bytes.
const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];

/// `bytes` for a human: `512 B` below 1 KiB, else two decimals of the largest binary unit it
/// reaches (`1.50 MiB`), rounded half up.
pub fn human_bytes(bytes: u64) -> String {
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let bytes = u128::from(bytes);
    let mut unit = 0;
    let mut scale: u128 = 1024;
    while unit + 1 < UNITS.len() && bytes >= scale * 1024 {
        scale *= 1024;
        unit += 1;
    }
    let mut hundredths = (bytes * 100 + scale / 2) / scale;
    // 1023.999 KiB rounds to 1024.00 KiB: say 1.00 MiB instead.
    if hundredths >= 1024 * 100 && unit + 1 < UNITS.len() {
        scale *= 1024;
        unit += 1;
        hundredths = (bytes * 100 + scale / 2) / scale;
    }
    format!(
        "{}.{:02} {}",
        hundredths / 100,
        hundredths % 100,
        UNITS[unit]
    )
}

#[cfg(test)]
mod tests {
    use super::human_bytes;

    #[test]
    fn human_bytes_by_hand() {
        assert_eq!(human_bytes(0), "0 B");
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(1023), "1023 B");
        assert_eq!(human_bytes(1024), "1.00 KiB");
        assert_eq!(human_bytes(1536), "1.50 KiB");
        assert_eq!(human_bytes(3 << 19), "1.50 MiB");
        // 1048575 B = 1023.999 KiB, rounded: 1.00 MiB, not 1024.00 KiB.
        assert_eq!(human_bytes((1 << 20) - 1), "1.00 MiB");
        // 28311552 = 27 MiB exactly.
        assert_eq!(human_bytes(28_311_552), "27.00 MiB");
        assert_eq!(human_bytes(u64::MAX), "16.00 EiB");
    }
}
