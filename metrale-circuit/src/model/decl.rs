//! One declared state of one block instance ([`StateDecl`]) and the small vocabularies a
//! declaration uses: [`Section`], [`VerifySteps`], [`StateAccess`].
//!
//! Owner: metrale-circuit.
//! Invariants:
//! - A declaration says what ONE unit holds (`elements` of its format); how many units exist is
//!   decided by the plan inputs, never here.
//! - `elements` was evaluated, checked, from the checkpoint's dims when the circuit was
//!   instantiated; a copy (`of`) has the element count of the state it copies.

use super::dtype::StateFormat;
use super::kinds::{Lifetime, StateKind};
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
    /// The layer index for a layer's block; `None` for prologue, epilogue and draft blocks.
    pub layer: Option<usize>,
    /// Main model or draft head.
    pub section: Section,
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
    /// For a KV side with a sliding window, the window in tokens.
    pub window: Option<u64>,
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
            layer: None,
            section: Section::Main,
            kind,
            format,
            elements,
            verify: None,
            lifetime: Lifetime::of_kind(kind),
            of: None,
            window: None,
        }
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
        self.window = Some(tokens);
        self
    }

    /// The same declaration, in `section`.
    #[must_use]
    pub fn in_section(mut self, section: Section) -> Self {
        self.section = section;
        self
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
        let d = StateDecl::new(
            "h",
            StateKind::Recurrent,
            StateFormat::Fixed(StateDtype::F32),
            1,
        );
        assert_eq!((d.local.as_str(), d.block.as_str()), ("h", ""));
    }
}
