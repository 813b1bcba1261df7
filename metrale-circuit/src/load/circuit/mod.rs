//! The validated model of a circuit: what the loader produces and every front end reads. The
//! shape of one unit of a state (`shape`: its grammar, syntax tree and checked evaluation),
//! what `[config]` says (`config_map`) and
//! the one law of which layers a rule of `[config.layer_rules]` names (`layer_law`), the [`Circuit`] itself with its block templates,
//! layout and checkpoints (`validated`), where a KV side that reads another layer's KV finds
//! its owner (`sharing`), and a checkpoint placed in the model: its instances and their
//! declarations, for one GPU or one parallel rank (`instances`).
//!
//! Owner: metrale-circuit (feature `load`).
//! Invariants:
//! - A [`Circuit`] and its parts have private fields: only the loader (`load`) builds them,
//!   and only without an error, so every one that exists is valid.
//! - Lists keep file order, so everything derived from a circuit is deterministic.
//! - It reads the vocabulary, the serving ranks and the text layer; never the loader's stages.

pub mod config_expr;
pub mod config_map;
mod instances;
pub(crate) mod layer_law;
pub mod shape;
mod sharing;
mod validated;

pub use instances::{Instance, RankStates};
pub use sharing::Shares;
pub(crate) use sharing::{OwnerFault, owner_layer};
pub use validated::{
    BlockTemplate, CheckpointSpec, Circuit, LayerLayout, LayerRule, PackingTemplate, PartTemplate,
    StateTemplate,
};
