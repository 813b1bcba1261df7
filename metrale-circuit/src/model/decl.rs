//! One declared state of one block instance ([`StateDecl`]) and the small vocabularies a
//! declaration uses: [`Position`] (where its block instance sits in the model), [`Section`],
//! [`VerifySteps`], [`StateAccess`].
//!
//! Owner: metrale-circuit.
//! Invariants:
//! - A declaration says what ONE unit holds (`elements` of its format); how many units exist is
//!   decided by the plan inputs, never here.
//! - `elements` was evaluated, checked, from the checkpoint's dims when the circuit was
//!   instantiated; a copy (`of`) has the element count of the state it copies, and a KV side
//!   that reads another layer's KV (`shares`) the element count, format and reach of its owner
//!   (it has no unit of its own: a plan gives it the owner's regions and sizes no term for it).
//! - A state stored in a packing (`format` naming one, or a key that holds one) has its unit
//!   from that packing's parts; `elements` then counts the plain unit a dtype would give (0 when
//!   `format` names a packing and the state has no `shape`).

use super::dtype::StateFormat;
use super::kinds::{Lifetime, StateKind};
use super::packing::{PackingDecl, PartDecl};
use super::spelled::spelled_enum;

spelled_enum! {
    /// Which part of the model an instance belongs to: the main model, or the draft head (whose
    /// KV sides take their blocks from `draft_kv`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum Section {
        /// Prologue, layers and epilogue.
        Main = "main",
        /// The draft head (`draft = [...]`, ids `draft.<block>.<state>`).
        Draft = "draft",
    }
}

/// Where a block instance sits in the model: its layer, or the prologue, epilogue or draft
/// head. It decides which pipeline rank holds the instance (`parallel::Stage::holds`) and its
/// section. (Where a term sits in an arena is its region's offset, the layout's "place".)
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Position {
    /// A prologue block (held by pipeline rank 0).
    Prologue,
    /// A block of layer `n` (held by the rank whose stage has the layer).
    Layer(u64),
    /// An epilogue block (held by the last pipeline rank).
    Epilogue,
    /// A draft-head block (held by the last pipeline rank).
    Draft,
}

impl Position {
    /// Main model or draft head: the draft head's blocks are the draft section.
    #[must_use]
    pub const fn section(self) -> Section {
        match self {
            Position::Draft => Section::Draft,
            Position::Prologue | Position::Layer(_) | Position::Epilogue => Section::Main,
        }
    }

    /// The layer of a layer's block.
    #[must_use]
    pub const fn layer(self) -> Option<u64> {
        match self {
            Position::Layer(layer) => Some(layer),
            Position::Prologue | Position::Epilogue | Position::Draft => None,
        }
    }

    /// The position an instance prefix names, as `Circuit::instances` writes them: `l<n>` is
    /// layer `n`, `draft` the draft head, anything else the prologue (an epilogue block is
    /// named by its block alone, like a prologue block: set it with [`StateDecl::at`]).
    #[must_use]
    pub fn of_prefix(prefix: &str) -> Self {
        let first = prefix.split('.').next().unwrap_or("");
        if first == "draft" {
            return Position::Draft;
        }
        match first.strip_prefix('l').map(str::parse::<u64>) {
            Some(Ok(layer)) => Position::Layer(layer),
            _ => Position::Prologue,
        }
    }
}

spelled_enum! {
    /// Which verify intermediate count a recurrent state keeps per verify slot.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum VerifySteps {
        /// One intermediate per verified row: the per-slot counts of `h_steps`.
        HSteps = "h_steps",
        /// A fixed count per verify slot: `conv_steps`.
        ConvSteps = "conv_steps",
    }
}

spelled_enum! {
    /// How a node touches a state of its block (`state = { h = "update" }`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum StateAccess {
        /// Reads the state (an attention node reading its KV sides).
        Read = "read",
        /// Writes the state without reading it (appending KV).
        Write = "write",
        /// Reads and writes it in place (a recurrence step).
        Update = "update",
        /// Copies it to a verify intermediate or checkpoint.
        Snapshot = "snapshot",
    }
}

/// One declared state of one block instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateDecl {
    /// `<prefix>.<local>`: `l0.gdn.h`, `draft.attn.k`, `head.prefix_hidden`.
    pub id: String,
    /// The id inside its block: `h`.
    pub local: String,
    /// The block template: `gdn`.
    pub block: String,
    /// Where its block instance sits: its layer, or the prologue, epilogue or draft head.
    pub position: Position,
    /// What the state is.
    pub kind: StateKind,
    /// Its storage format.
    pub format: StateFormat,
    /// Elements per unit.
    pub elements: u64,
    /// The verify intermediates it keeps (recurrent states only).
    pub verify: Option<VerifySteps>,
    /// How long a unit lives (the kind's one lifetime).
    pub lifetime: Lifetime,
    /// For a copy, the full id of the state it copies (`l0.gdn.h`).
    pub of: Option<String>,
    /// For a KV side that keeps only some of a sequence's tokens: its sliding window or its
    /// attention chunk, in tokens.
    pub reach: Option<Reach>,
    /// For a KV side that reads another layer's KV instead of keeping its own (`shares`,
    /// schema 3), the full id of the state it reads (`l14.attn.k`): a plan sizes no term for
    /// it and gives it that state's regions.
    pub shares: Option<String>,
    /// Its packings (schema 3): the units its format may name instead of `elements` of a dtype.
    pub packings: Vec<PackingDecl>,
    /// Its unit's tensor shape: one axis per ` x `-joined axis of its `shape` (a copy's, the
    /// copied state's), whose extents multiply to `elements`; empty for a state built by hand
    /// without one, or stored in one packing with no `shape`.
    pub axes: Vec<UnitAxis>,
}

/// One axis of a unit's tensor shape: its expression in the circuit (`lin_v_heads`) and its
/// extent under the checkpoint's (or a rank's) dims.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UnitAxis {
    /// The axis as the circuit writes it.
    pub name: String,
    /// Its extent.
    pub extent: u64,
}

/// Writes the row-major element strides of a tensor of `extents` into `out` (as long as
/// `extents`): the last axis 1, each other the product of the extents after it. Returns the
/// product of them all (the elements: a unit's stride when a region is viewed as
/// `[units, axes...]`), `None` on overflow. The one stride rule, of the dynamic plan's terms
/// and of a generated `Axes`.
#[must_use]
pub const fn strides_into(extents: &[u64], out: &mut [u64]) -> Option<u64> {
    let mut stride: u64 = 1;
    let mut i = extents.len();
    while i > 0 {
        i -= 1;
        if i < out.len() {
            out[i] = stride;
        }
        stride = match stride.checked_mul(extents[i]) {
            Some(next) => next,
            None => return None,
        };
    }
    Some(stride)
}

/// What a KV side keeps of a sequence's tokens, when not every one it decodes: `T` is the
/// tokens (or, in a generated table, the index of the state's token count).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reach<T = u64> {
    /// A sliding window: the last `T` tokens, its own included (`window`, schema 2).
    Window(T),
    /// Chunked local attention: the tokens of the current `T`-token chunk (`chunk`, schema 3).
    Chunk(T),
    /// A fixed `T` tokens a request holds whatever it decodes, written once at prefill and
    /// never grown (`tokens`, schema 4): cross-attention over an encoder's `T` positions.
    Fixed(T),
}

impl<T: Copy> Reach<T> {
    /// The tokens (or index) either reach holds.
    #[must_use]
    pub const fn tokens(&self) -> T {
        match *self {
            Reach::Window(tokens) | Reach::Chunk(tokens) | Reach::Fixed(tokens) => tokens,
        }
    }
}

impl<T> Reach<T> {
    /// The same reach of `f(tokens)`.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Reach<U> {
        match self {
            Reach::Window(tokens) => Reach::Window(f(tokens)),
            Reach::Chunk(tokens) => Reach::Chunk(f(tokens)),
            Reach::Fixed(tokens) => Reach::Fixed(f(tokens)),
        }
    }

    /// The reach of a borrowed count.
    pub fn as_ref(&self) -> Reach<&T> {
        match self {
            Reach::Window(tokens) => Reach::Window(tokens),
            Reach::Chunk(tokens) => Reach::Chunk(tokens),
            Reach::Fixed(tokens) => Reach::Fixed(tokens),
        }
    }

    /// Its key in a circuit: `window`, `chunk` or `tokens`.
    #[must_use]
    pub fn key(&self) -> &'static str {
        match self {
            Reach::Window(_) => "window",
            Reach::Chunk(_) => "chunk",
            Reach::Fixed(_) => "tokens",
        }
    }
}

impl StateDecl {
    /// A declaration with the kind's own lifetime and no verify or copy, for building plans by
    /// hand (tests, engines without a circuit file).
    #[must_use]
    pub fn new(id: &str, kind: StateKind, format: StateFormat, elements: u64) -> Self {
        let (prefix, local) = id.rsplit_once('.').unwrap_or(("", id));
        let block = prefix.rsplit('.').next().unwrap_or("").to_owned();
        Self {
            id: id.to_owned(),
            local: local.to_owned(),
            block,
            position: Position::of_prefix(prefix),
            kind,
            format,
            elements,
            verify: None,
            lifetime: Lifetime::of_kind(kind),
            of: None,
            reach: None,
            shares: None,
            packings: Vec::new(),
            axes: Vec::new(),
        }
    }

    /// The same declaration, able to store its unit as the packing `name` of `parts` (chosen by
    /// its `{key}`, or its `format` when that is `StateFormat::Packing(name)`).
    #[must_use]
    pub fn with_packing(mut self, name: &str, parts: Vec<PartDecl>) -> Self {
        self.packings.push(PackingDecl {
            name: name.to_owned(),
            parts,
        });
        self
    }

    /// Its packing named `name`.
    #[must_use]
    pub fn packing(&self, name: &str) -> Option<&PackingDecl> {
        self.packings.iter().find(|packing| packing.name == name)
    }

    /// The same declaration, keeping `verify` intermediates.
    #[must_use]
    pub fn with_verify(mut self, verify: VerifySteps) -> Self {
        self.verify = Some(verify);
        self
    }

    /// The same declaration, keeping only the last `tokens` tokens of each sequence (a KV side
    /// with a sliding window).
    #[must_use]
    pub fn with_window(mut self, tokens: u64) -> Self {
        self.reach = Some(Reach::Window(tokens));
        self
    }

    /// The same declaration, keeping only the current `tokens`-token chunk of each sequence (a
    /// KV side of chunked local attention).
    #[must_use]
    pub fn with_chunk(mut self, tokens: u64) -> Self {
        self.reach = Some(Reach::Chunk(tokens));
        self
    }

    /// The same declaration, holding a fixed `tokens` tokens of each request whatever it
    /// decodes (a cross-attention KV side over an encoder's `tokens` positions).
    #[must_use]
    pub fn with_fixed_tokens(mut self, tokens: u64) -> Self {
        self.reach = Some(Reach::Fixed(tokens));
        self
    }

    /// The same declaration, reading the KV of the state whose full id is `owner` instead of
    /// keeping its own (a KV side that `shares`): a plan sizes no term for it and gives it the
    /// owner's regions.
    #[must_use]
    pub fn sharing(mut self, owner: &str) -> Self {
        self.shares = Some(owner.to_owned());
        self
    }

    /// The same declaration, its block instance at `position`.
    #[must_use]
    pub fn at(mut self, position: Position) -> Self {
        self.position = position;
        self
    }

    /// Main model or draft head (from its position).
    #[must_use]
    pub fn section(&self) -> Section {
        self.position.section()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::StateDtype;

    #[test]
    fn spellings_round_trip() {
        assert_eq!(VerifySteps::parse("h_steps"), Some(VerifySteps::HSteps));
        assert_eq!(VerifySteps::ConvSteps.name(), "conv_steps");
        assert_eq!(
            StateAccess::SPELLINGS,
            ["read", "write", "update", "snapshot"]
        );
        assert_eq!(StateAccess::parse("updte"), None);
        assert_eq!(VerifySteps::parse("steps"), None);
    }

    #[test]
    fn new_splits_the_id() {
        let d = StateDecl::new(
            "l3.attn.k",
            StateKind::PagedKv,
            StateFormat::Fixed(StateDtype::Fp8),
            8,
        );
        assert_eq!(d.local, "k");
        assert_eq!(d.block, "attn");
        assert_eq!(d.lifetime, Lifetime::Model);
        assert_eq!(d.position, Position::Layer(3));
        let draft = StateDecl::new("draft.attn.k", StateKind::PagedKv, d.format.clone(), 8);
        assert_eq!(
            (draft.position, draft.section()),
            (Position::Draft, Section::Draft)
        );
        let head = StateDecl::new("head.x", StateKind::PagedKv, d.format.clone(), 8);
        assert_eq!(head.position, Position::Prologue);
        assert_eq!(head.at(Position::Epilogue).position, Position::Epilogue);
        assert_eq!(Position::of_prefix("layer.x"), Position::Prologue);
        let d = StateDecl::new(
            "h",
            StateKind::Recurrent,
            StateFormat::Fixed(StateDtype::F32),
            1,
        );
        assert_eq!((d.local.as_str(), d.block.as_str()), ("h", ""));
    }
}
