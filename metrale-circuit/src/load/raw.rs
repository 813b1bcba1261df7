//! The loader's raw model: what each file says, as written, with the span of every name.
//! Every stage after reading walks files into these types ([`FileSyntax`] and its parts) and
//! [`super::resolve`] turns them into the validated [`crate::Circuit`].
//!
//! Owner: metrale-circuit (feature `load`).
//! Invariants:
//! - A raw item keeps every part that was valid (the others are `None`, already reported), so
//!   the checks between items still run when one part of an item was refused.
//! - Conversion into the validated model (`template`, `checkpoint`) succeeds only when every
//!   part is valid; it is called only when the whole load found no error.

use std::ops::Range;
use std::path::PathBuf;

use crate::load::circuit::shape::Shape;
use crate::load::circuit::{
    BlockTemplate, CheckpointSpec, LayerRule, PackingTemplate, PartTemplate, Shares, StateTemplate,
    config_map::ConfigMap,
};
use crate::load::text::walk::{Loc, Sink, StrAt, Text};
use crate::model::{Lifetime, Reach, StateDtype, StateFormat, StateKind, VerifySteps};

/// The layer kind of an interval layout's layer `i` when `(i + 1) % period != 0`.
pub(crate) const LINEAR: &str = "linear_attention";
/// The layer kind of an interval layout's layer `i` when `(i + 1) % period == 0`.
pub(crate) const FULL: &str = "full_attention";
/// What one file declares.
#[derive(Debug)]
pub(crate) struct FileSyntax {
    /// Its `include` names (valid strings, duplicates dropped).
    pub includes: Vec<Text>,
    /// Its block templates, in the order they first appear.
    pub blocks: Vec<RawBlock>,
    /// The circuit-only parts; `None` for a library.
    pub top: Option<Top>,
}

/// The circuit-only parts of a circuit file.
#[derive(Debug, Default)]
pub(crate) struct Top {
    /// `schema`, when valid (1 or 2).
    pub schema: Option<u64>,
    /// `arch`, when valid.
    pub arch: Option<String>,
    /// `description`.
    pub description: Option<String>,
    /// `dims`: the valid names, each once; `None` when missing or not an array.
    pub dims: Option<Vec<Text>>,
    /// The `dims` entries refused (reported): checkpoints may give them without a new error.
    pub refused_dims: Vec<String>,
    /// `prologue`.
    pub prologue: Vec<Text>,
    /// `epilogue`.
    pub epilogue: Vec<Text>,
    /// `draft`.
    pub draft: Vec<Text>,
    /// `[derive]`: the derived dims (schema 2), in file order.
    pub derived: Vec<RawDerived>,
    /// `tensor_parallel`: the declared dims a tensor-parallel rank holds a share of.
    pub tensor_parallel: Vec<String>,
    /// `[layout]`, when present and a table.
    pub layout: Option<RawLayout>,
    /// The checkpoints, in file order.
    pub checkpoints: Vec<RawCheckpoint>,
    /// `[config]` (schema 2), when present and valid.
    pub config: Option<ConfigMap>,
}

/// `[layout]` as written.
#[derive(Debug)]
pub(crate) struct RawLayout {
    /// The rule, when `kind` (and `period` for an interval) are valid.
    pub rule: Option<LayerRule>,
    /// `[layout.blocks]`: layer kind, its blocks.
    pub blocks: Vec<(Text, Vec<Text>)>,
    /// Where a missing layer kind is reported: `[layout.blocks]`, else `[layout]`.
    pub blocks_at: Range<usize>,
}

/// Every file read, walked.
#[derive(Debug, Default)]
pub(crate) struct Loaded {
    /// What each file that parsed declares, in the order read (the circuit first).
    pub files: Vec<FileSyntax>,
    /// The real path of every file read from disk, in the order read.
    pub read: Vec<PathBuf>,
    /// The folder holding the circuit's `blocks/` (as given, not resolved).
    pub dir: PathBuf,
    /// Every file was read and parsed without TOML syntax errors.
    pub complete: bool,
}

/// One block as written.
#[derive(Debug)]
pub(crate) struct RawBlock {
    /// Its name, at its key.
    pub name: Text,
    /// Where it first appears (its origin).
    pub first: Loc,
    /// Its states, in file order.
    pub states: Vec<RawState>,
}

/// One derived dim as written (`[derive]`): its name and its one-axis expression.
#[derive(Debug)]
pub(crate) struct RawDerived {
    /// Its name, at its key.
    pub name: Text,
    /// Its expression.
    pub expr: ShapeValue,
}

/// A parsed shape and where its string is.
#[derive(Debug)]
pub(crate) struct ShapeValue {
    /// The parsed shape.
    pub shape: Shape,
    /// Its string value in the file.
    pub at: StrAt,
}

/// One state table as written: every field that was valid.
#[derive(Debug)]
pub(crate) struct RawState {
    /// The `[[block.<name>.state]]` header.
    pub header: Loc,
    /// `id`.
    pub id: Option<Text>,
    /// `kind`.
    pub kind: Option<StateKind>,
    /// The kind's lifetime, when `kind` is valid and `lifetime` (if given) agrees.
    pub lifetime: Option<Lifetime>,
    /// `format`.
    pub format: Option<StateFormat>,
    /// `shape`, parsed.
    pub shape: Option<ShapeValue>,
    /// Whether a `shape` key is written (valid or not).
    pub has_shape_key: bool,
    /// `verify`.
    pub verify: Option<VerifySteps>,
    /// `of`.
    pub of: Option<Text>,
    /// `window` (schema 2) or `chunk` (schema 3), parsed.
    pub reach: Option<Reach<ShapeValue>>,
    /// `shares` (schema 3), when valid.
    pub shares: Option<RawShares>,
    /// Whether a `shares` key is written (valid or not): the state then keeps no unit of its
    /// own, so its missing `format` and `shape` are no error.
    pub has_shares_key: bool,
    /// `packings` (schema 3): every packing whose name is valid.
    pub packings: Vec<RawUnitPacking>,
    /// The `packings` key, when written.
    pub packings_key: Option<Loc>,
}

/// One packing of a state as written (`packings.<name> = [...]`, schema 3).
#[derive(Debug)]
pub(crate) struct RawUnitPacking {
    /// Its name, at its key.
    pub name: Text,
    /// Its parts, in unit order.
    pub parts: Vec<RawPart>,
}

/// One part of a packing as written: every field that was valid.
#[derive(Debug)]
pub(crate) struct RawPart {
    /// `part`.
    pub name: Option<Text>,
    /// `format`: a dtype.
    pub dtype: Option<StateDtype>,
    /// `shape`, parsed.
    pub shape: Option<ShapeValue>,
}

impl RawUnitPacking {
    /// The IR packing, when every part is valid.
    fn template(&self) -> Option<PackingTemplate> {
        Some(PackingTemplate {
            name: self.name.text.clone(),
            parts: self
                .parts
                .iter()
                .map(|p| {
                    Some(PartTemplate {
                        name: p.name.as_ref()?.text.clone(),
                        dtype: p.dtype?,
                        shape: p.shape.as_ref()?.shape.clone(),
                    })
                })
                .collect::<Option<Vec<_>>>()?,
        })
    }
}

/// `shares` as written (schema 3): the state an earlier layer keeps that this KV side reads,
/// `"<block>.<state>"`, and in the table form the owner's layer.
#[derive(Debug)]
pub(crate) struct RawShares {
    /// The `shares` key.
    pub key: Loc,
    /// The `"<block>.<state>"` string.
    pub owner: StrAt,
    /// The owner's block (a valid identifier).
    pub block: String,
    /// The owner's id inside its block (a valid identifier).
    pub state: String,
    /// `layer`, parsed: the owner's layer as a one-axis expression.
    pub layer: Option<ShapeValue>,
}

impl RawShares {
    /// The `<block>` part of the owner string.
    pub fn block_at(&self) -> Loc {
        self.owner.inner(0, self.block.len())
    }

    /// The `<state>` part of the owner string.
    pub fn state_at(&self) -> Loc {
        self.owner
            .inner(self.block.len().saturating_add(1), self.state.len())
    }

    /// The validated rule.
    pub fn shares(&self) -> Shares {
        Shares {
            block: self.block.clone(),
            state: self.state.clone(),
            layer: self.layer.as_ref().map(|l| l.shape.clone()),
        }
    }
}

impl RawState {
    /// The local id, if valid.
    pub fn local(&self) -> Option<&str> {
        self.id.as_ref().map(|t| t.text.as_str())
    }

    /// The IR state, when every field is valid; a reader (`shares`) takes `owner_format`, its
    /// owner's format.
    pub fn template(
        &self,
        sink: &Sink,
        owner_format: impl Fn(&RawShares) -> Option<StateFormat>,
    ) -> Option<StateTemplate> {
        let format = match &self.shares {
            Some(shares) => owner_format(shares)?,
            None => self.format.clone()?,
        };
        Some(StateTemplate {
            local: self.id.as_ref()?.text.clone(),
            kind: self.kind?,
            lifetime: self.lifetime?,
            format,
            shape: self.shape.as_ref().map(|s| s.shape.clone()),
            verify: self.verify,
            of: self.of.as_ref().map(|t| t.text.clone()),
            reach: self
                .reach
                .as_ref()
                .map(|r| r.as_ref().map(|s| s.shape.clone())),
            shares: self.shares.as_ref().map(RawShares::shares),
            packings: self
                .packings
                .iter()
                .map(RawUnitPacking::template)
                .collect::<Option<Vec<_>>>()?,
            origin: sink.origin(&self.header),
        })
    }
}

impl RawBlock {
    /// The IR block, when every state is valid; a reader (`shares`) takes `owner_format`, its
    /// owner's format.
    pub fn template(
        &self,
        sink: &Sink,
        owner_format: impl Fn(&RawShares) -> Option<StateFormat>,
    ) -> Option<BlockTemplate> {
        Some(BlockTemplate {
            name: self.name.text.clone(),
            origin: sink.origin(&self.first),
            states: self
                .states
                .iter()
                .map(|s| s.template(sink, &owner_format))
                .collect::<Option<Vec<_>>>()?,
        })
    }
}

/// One checkpoint as written.
#[derive(Debug)]
pub(crate) struct RawCheckpoint {
    /// Its name, at its key.
    pub name: Text,
    /// Its table (the `[checkpoint.<name>]` header).
    pub header: Loc,
    /// `hf`.
    pub hf: Option<String>,
    /// Each layer's kind, when valid.
    pub layer_kinds: Option<Vec<String>>,
    /// Every declared dim's value in declaration order, when all are given and valid.
    pub dims: Option<Vec<(String, u64)>>,
}

impl RawCheckpoint {
    /// The IR checkpoint, with the values of the derived dims under it, when every part is
    /// valid.
    pub fn checkpoint(&self, sink: &Sink, derived: Vec<(String, u64)>) -> Option<CheckpointSpec> {
        Some(CheckpointSpec {
            name: self.name.text.clone(),
            hf: self.hf.clone(),
            layer_kinds: self.layer_kinds.clone()?,
            dims: self.dims.clone()?,
            derived,
            origin: sink.origin(&self.header),
        })
    }

    /// The value of dim `name`.
    pub fn dim(&self, name: &str) -> Option<u64> {
        self.dims
            .as_ref()?
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| *v)
    }
}

/// A layer kind a checkpoint produces, at its first layer.
#[derive(Debug)]
pub(crate) struct Produced {
    /// The layer kind.
    pub kind: String,
    /// The checkpoint.
    pub checkpoint: String,
    /// The first layer of that kind.
    pub layer: usize,
}
