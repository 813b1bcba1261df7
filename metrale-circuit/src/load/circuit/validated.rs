//! The validated circuit ([`Circuit`]): what the loader produces and every front end reads.
//! Its parts have private fields and accessors: only the loader builds them, so a `Circuit`
//! exists only valid.
//! Block templates with their state templates and shapes, the layout, the checkpoints; their
//! instantiation into [`StateDecl`](crate::model::StateDecl)s is `instances`'.
//!
//! Owner: metrale-circuit.
//! Invariants (established by [`crate::load`], relied on here):
//! - Every block named by the prologue, the layout, the epilogue or the draft is defined; every
//!   layer kind has at least one block; every checkpoint gives every declared dim exactly once.
//! - Every shape evaluates without overflow or division by zero under every checkpoint, so
//!   [`Circuit::instantiate`] (in `instances`) fails only on an unknown checkpoint name.
//! - A copy's (`of`) source is a sibling state with a shape.
//! - A reader's (`shares`) owner is a `paged_kv` state with a shape that shares nothing, and
//!   under every checkpoint every layer holding the reader's block has an owner layer
//!   ([`super::sharing::owner_layer`]); a reader sits only in layers.
//! - Lists keep file order (blocks, states, dims, checkpoints), so everything derived from a
//!   circuit is deterministic.

use std::path::PathBuf;

use super::config_map::ConfigMap;
use super::shape::Shape;
use super::sharing::Shares;
use crate::load::text::diag::{Diagnostic, Source};
use crate::load::text::walk::Origin;
use crate::model::{Lifetime, Reach, StateDtype, StateFormat, StateKind, VerifySteps};

/// A validated circuit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Circuit {
    /// Every file read, the circuit first, then its includes in the order read.
    pub(crate) files: Vec<Source>,
    /// The real path of every file read from disk (the circuit, unless it was given as text,
    /// then its includes), in the order read: for build scripts' `rerun-if-changed` and the
    /// macro's `include_str!`.
    pub(crate) read: Vec<PathBuf>,
    /// The folder its includes' `blocks/` is in, as given: a checkpoint added at run time
    /// (`Circuit::with_config`) reloads the circuit from there.
    pub(crate) dir: PathBuf,
    /// The architecture (the generated module's name).
    pub(crate) arch: String,
    /// Free text.
    pub(crate) description: Option<String>,
    /// The dim names a checkpoint gives, in declaration order.
    pub(crate) dims: Vec<String>,
    /// The derived dims (`[derive]`, schema 2): each one's name and expression, every one after
    /// the derived dims it reads.
    pub(crate) derived: Vec<(String, Shape)>,
    /// `tensor_parallel` (schema 2): the declared dims a tensor-parallel rank holds a share of.
    pub(crate) tensor_parallel: Vec<String>,
    /// Blocks before the layers.
    pub(crate) prologue: Vec<String>,
    /// Blocks after the layers.
    pub(crate) epilogue: Vec<String>,
    /// Blocks of the draft head.
    pub(crate) draft: Vec<String>,
    /// Which blocks each layer has.
    pub(crate) layout: LayerLayout,
    /// Every block template, in definition order.
    pub(crate) blocks: Vec<BlockTemplate>,
    /// Every checkpoint, in file order; the first is the default.
    pub(crate) checkpoints: Vec<CheckpointSpec>,
    /// `[config]` (schema 2): where `import` reads checkpoint figures in a `config.json`.
    pub(crate) config: Option<ConfigMap>,
}

/// How layers get their layer kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LayerRule {
    /// Layer `i` is `full_attention` when `(i + 1) % period == 0`, else `linear_attention`.
    Interval {
        /// At least 1.
        period: u64,
    },
    /// Each checkpoint lists its layers' kinds.
    List,
    /// Schema 2: a string of one character per layer, each standing for a layer kind. A
    /// checkpoint gives `layers` and its own `pattern` (exactly `layers` characters), or takes
    /// the layout's `pattern`, repeated to cover its layers.
    Pattern {
        /// `[layout.symbols]` in file order: a character, the layer kind it stands for.
        symbols: Vec<(char, String)>,
        /// The layout's `pattern` (non-empty, every character a symbol), when given: what a
        /// checkpoint without its own pattern repeats.
        pattern: Option<String>,
    },
}

/// Which blocks each layer has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayerLayout {
    /// How a layer's kind is decided.
    pub(crate) rule: LayerRule,
    /// Layer kind -> its blocks, in file order.
    pub(crate) blocks: Vec<(String, Vec<String>)>,
}

impl LayerLayout {
    /// How a layer's kind is decided.
    #[must_use]
    pub fn rule(&self) -> &LayerRule {
        &self.rule
    }

    /// Layer kind -> its blocks, in file order.
    #[must_use]
    pub fn blocks(&self) -> &[(String, Vec<String>)] {
        &self.blocks
    }

    /// The blocks of a layer of `layer_kind`.
    #[must_use]
    pub fn blocks_of(&self, layer_kind: &str) -> &[String] {
        self.blocks
            .iter()
            .find(|(kind, _)| kind == layer_kind)
            .map_or(&[], |(_, blocks)| blocks.as_slice())
    }
}

/// One block template (`[block.<name>]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockTemplate {
    /// Its name.
    pub(crate) name: String,
    /// Where it was defined.
    pub(crate) origin: Origin,
    /// Its states, in file order.
    pub(crate) states: Vec<StateTemplate>,
}

impl BlockTemplate {
    /// Its name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Where it was defined.
    #[must_use]
    pub fn origin(&self) -> &Origin {
        &self.origin
    }

    /// Its states, in file order.
    #[must_use]
    pub fn states(&self) -> &[StateTemplate] {
        &self.states
    }

    /// The state whose local id is `local`.
    #[must_use]
    pub fn state(&self, local: &str) -> Option<&StateTemplate> {
        self.states.iter().find(|s| s.local == local)
    }

    /// The shape a state's unit has: its own, or for a copy the copied state's.
    #[must_use]
    pub fn shape_of<'a>(&'a self, state: &'a StateTemplate) -> Option<&'a Shape> {
        match (&state.shape, &state.of) {
            (Some(shape), _) => Some(shape),
            (None, Some(of)) => self.state(of).and_then(|s| s.shape.as_ref()),
            (None, None) => None,
        }
    }
}

/// One declared state of a block template (`[[block.<name>.state]]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateTemplate {
    /// Its id inside the block.
    pub(crate) local: String,
    /// What it is.
    pub(crate) kind: StateKind,
    /// How long a unit lives (the kind's one lifetime).
    pub(crate) lifetime: Lifetime,
    /// Its storage format (a reader's, `shares`: its owner's).
    pub(crate) format: StateFormat,
    /// What one unit holds; `None` for a copy (`of`) and a reader (`shares`).
    pub(crate) shape: Option<Shape>,
    /// The verify intermediates it keeps (recurrent states only).
    pub(crate) verify: Option<VerifySteps>,
    /// For a copy, the local id of the sibling state it copies.
    pub(crate) of: Option<String>,
    /// For a KV side with a sliding window (schema 2) or an attention chunk (schema 3), its
    /// tokens.
    pub(crate) reach: Option<Reach<Shape>>,
    /// For a KV side that reads another layer's KV instead of keeping its own (schema 3), whose.
    pub(crate) shares: Option<Shares>,
    /// Its packings (schema 3): the units made of parts its format may name.
    pub(crate) packings: Vec<PackingTemplate>,
    /// Where it was declared.
    pub(crate) origin: Origin,
}

/// One packing of a state (`packings.<name>`, schema 3): a unit made of parts, in unit order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackingTemplate {
    /// Its name (`fp8_ds_mla`).
    pub(crate) name: String,
    /// Its parts, in unit order.
    pub(crate) parts: Vec<PartTemplate>,
}

impl PackingTemplate {
    /// Its name (`fp8_ds_mla`).
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its parts, in unit order.
    #[must_use]
    pub fn parts(&self) -> &[PartTemplate] {
        &self.parts
    }
}

/// One part of a packing: its name, dtype and elements per unit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartTemplate {
    /// Its name in the layout (`scales`).
    pub(crate) name: String,
    /// Its element type.
    pub(crate) dtype: StateDtype,
    /// Its elements per unit (one axis or several, multiplied).
    pub(crate) shape: Shape,
}

impl PartTemplate {
    /// Its name in the layout (`scales`).
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its element type.
    #[must_use]
    pub fn dtype(&self) -> StateDtype {
        self.dtype
    }

    /// Its elements per unit.
    #[must_use]
    pub fn shape(&self) -> &Shape {
        &self.shape
    }
}

impl StateTemplate {
    /// Its id inside the block.
    #[must_use]
    pub fn local(&self) -> &str {
        &self.local
    }

    /// What it is.
    #[must_use]
    pub fn kind(&self) -> StateKind {
        self.kind
    }

    /// How long a unit lives (the kind's one lifetime).
    #[must_use]
    pub fn lifetime(&self) -> Lifetime {
        self.lifetime
    }

    /// Its storage format (a reader's, [`StateTemplate::shares`]: its owner's).
    #[must_use]
    pub fn format(&self) -> &StateFormat {
        &self.format
    }

    /// What one unit holds; `None` for a copy (`of`) and a reader (`shares`).
    #[must_use]
    pub fn shape(&self) -> Option<&Shape> {
        self.shape.as_ref()
    }

    /// The verify intermediates it keeps (recurrent states only).
    #[must_use]
    pub fn verify(&self) -> Option<VerifySteps> {
        self.verify
    }

    /// For a copy, the local id of the sibling state it copies.
    #[must_use]
    pub fn of(&self) -> Option<&str> {
        self.of.as_deref()
    }

    /// For a KV side with a sliding window (schema 2) or an attention chunk (schema 3), its
    /// tokens.
    #[must_use]
    pub fn reach(&self) -> Option<Reach<&Shape>> {
        self.reach.as_ref().map(Reach::as_ref)
    }

    /// For a KV side that reads another layer's KV instead of keeping its own (`shares`,
    /// schema 3), whose: it has no unit, term or region of its own, and a plan gives it its
    /// owner's regions.
    #[must_use]
    pub fn shares(&self) -> Option<&Shares> {
        self.shares.as_ref()
    }

    /// Its packings (schema 3): what its format may name instead of `shape`'s elements of a
    /// dtype (all of them, when a `{key}` chooses; the one `format` names otherwise).
    #[must_use]
    pub fn packings(&self) -> &[PackingTemplate] {
        &self.packings
    }

    /// Where it was declared.
    #[must_use]
    pub fn origin(&self) -> &Origin {
        &self.origin
    }
}

/// One checkpoint (`[checkpoint.<name>]`): a set of weights of the architecture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointSpec {
    /// Its name.
    pub(crate) name: String,
    /// The source checkpoint (`Qwen/Qwen3.5-27B`).
    pub(crate) hf: Option<String>,
    /// Each layer's kind, one per layer.
    pub(crate) layer_kinds: Vec<String>,
    /// Every declared dim's value, in the circuit's `dims` order.
    pub(crate) dims: Vec<(String, u64)>,
    /// Every derived dim's value under this checkpoint, in the circuit's `derived` order.
    pub(crate) derived: Vec<(String, u64)>,
    /// Where it was defined.
    pub(crate) origin: Origin,
}

impl CheckpointSpec {
    /// Its name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The source checkpoint (`Qwen/Qwen3.5-27B`).
    #[must_use]
    pub fn hf(&self) -> Option<&str> {
        self.hf.as_deref()
    }

    /// Each layer's kind, one per layer.
    #[must_use]
    pub fn layer_kinds(&self) -> &[String] {
        &self.layer_kinds
    }

    /// Every declared dim's value, in the circuit's `dims` order.
    #[must_use]
    pub fn dims(&self) -> &[(String, u64)] {
        &self.dims
    }

    /// Where it was defined.
    #[must_use]
    pub fn origin(&self) -> &Origin {
        &self.origin
    }

    /// The value of dim `name`, given or derived.
    #[must_use]
    pub fn dim(&self, name: &str) -> Option<u64> {
        self.dims
            .iter()
            .chain(&self.derived)
            .find(|(n, _)| n == name)
            .map(|(_, v)| *v)
    }

    /// Every derived dim's value under this checkpoint, in the circuit's `derived` order.
    #[must_use]
    pub fn derived(&self) -> &[(String, u64)] {
        &self.derived
    }
}

impl Circuit {
    /// Every file read, the circuit first, then its includes in the order read.
    #[must_use]
    pub fn files(&self) -> &[Source] {
        &self.files
    }

    /// The real path of every file read from disk (the circuit, unless it was given as text, then its includes), in the order read: for `rerun-if-changed` and `include_str!` tracking.
    #[must_use]
    pub fn read(&self) -> &[PathBuf] {
        &self.read
    }

    /// The architecture: the generated module's name.
    #[must_use]
    pub fn arch(&self) -> &str {
        &self.arch
    }

    /// Free text.
    #[must_use]
    pub fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }

    /// The dim names a checkpoint gives, in declaration order.
    #[must_use]
    pub fn dims(&self) -> &[String] {
        &self.dims
    }

    /// The derived dims (`[derive]`): each one's name and expression, every one after the
    /// derived dims it reads (so they can be computed in this order).
    #[must_use]
    pub fn derived(&self) -> &[(String, Shape)] {
        &self.derived
    }

    /// The declared dims a tensor-parallel rank holds a share of (`tensor_parallel`), in the
    /// order written.
    #[must_use]
    pub fn tensor_parallel(&self) -> &[String] {
        &self.tensor_parallel
    }

    /// Blocks before the layers.
    #[must_use]
    pub fn prologue(&self) -> &[String] {
        &self.prologue
    }

    /// Blocks after the layers.
    #[must_use]
    pub fn epilogue(&self) -> &[String] {
        &self.epilogue
    }

    /// Blocks of the draft head.
    #[must_use]
    pub fn draft(&self) -> &[String] {
        &self.draft
    }

    /// Which blocks each layer has.
    #[must_use]
    pub fn layout(&self) -> &LayerLayout {
        &self.layout
    }

    /// Every block template, in definition order.
    #[must_use]
    pub fn blocks(&self) -> &[BlockTemplate] {
        &self.blocks
    }

    /// Every checkpoint, in file order; the first is the default.
    #[must_use]
    pub fn checkpoints(&self) -> &[CheckpointSpec] {
        &self.checkpoints
    }

    /// The checkpoint named `name`.
    #[must_use]
    pub fn checkpoint(&self, name: &str) -> Option<&CheckpointSpec> {
        self.checkpoints.iter().find(|c| c.name == name)
    }

    /// The checkpoint named `name`, or a diagnostic listing the valid names.
    ///
    /// # Errors
    /// A [`Diagnostic`] naming the circuit file, the valid checkpoints and the nearest one.
    #[allow(
        clippy::result_large_err,
        reason = "a Diagnostic is the crate's one located error; called once per build, not in a loop"
    )]
    pub fn checkpoint_or_error(&self, name: &str) -> Result<&CheckpointSpec, Diagnostic> {
        self.checkpoint(name).ok_or_else(|| {
            let names: Vec<&str> = self.checkpoints.iter().map(|c| c.name.as_str()).collect();
            Diagnostic::error(format!("unknown checkpoint `{name}`"))
                .in_file(self.path())
                .expected_one_of("checkpoints", name, &names)
        })
    }

    /// The first checkpoint, the default one.
    #[must_use]
    pub fn default_checkpoint(&self) -> Option<&CheckpointSpec> {
        self.checkpoints.first()
    }

    /// `[config]` (schema 2), if the circuit has one: where `metrale-codegen import` reads
    /// each checkpoint figure in a Hugging Face `config.json`.
    #[must_use]
    pub fn config(&self) -> Option<&ConfigMap> {
        self.config.as_ref()
    }

    /// The circuit file's path, as given.
    #[must_use]
    pub fn path(&self) -> &str {
        self.files.first().map_or("", Source::name)
    }

    /// The block template named `name`.
    #[must_use]
    pub fn block(&self, name: &str) -> Option<&BlockTemplate> {
        self.blocks.iter().find(|b| b.name == name)
    }

    /// Every format key the circuit names, in first-use order.
    #[must_use]
    pub fn format_keys(&self) -> Vec<&str> {
        let mut keys: Vec<&str> = Vec::new();
        // A reader (`shares`) carries its owner's format: the owner names the key.
        for state in self.blocks.iter().flat_map(|b| &b.states) {
            if state.shares.is_none()
                && let Some(key) = state.format.key()
                && !keys.contains(&key)
            {
                keys.push(key);
            }
        }
        keys
    }

    /// The packings format key `key` may hold besides a dtype (schema 3): its first state's,
    /// which every state of the key declares by the same names (the loader checked). Empty
    /// for a key of dtypes only.
    #[must_use]
    pub fn key_packings(&self, key: &str) -> &[PackingTemplate] {
        self.blocks
            .iter()
            .flat_map(|b| &b.states)
            .find(|state| state.shares.is_none() && state.format.key() == Some(key))
            .map_or(&[], |state| state.packings.as_slice())
    }
}
