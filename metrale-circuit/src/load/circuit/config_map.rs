//! What a circuit's `[config]` table says (schema 2): where each checkpoint figure (the layer
//! count, the layer kinds, every declared dim) is found in a Hugging Face `config.json`, so
//! `metrale-codegen import` can write a checkpoint table from a published config instead of a
//! person copying figures by hand; and (schema 3) the layer kinds by rule, for configs that
//! list no kind per layer ([`LayerRules`]).
//!
//! Owner: metrale-circuit (feature `load`); the loader builds these types (`load::config`),
//! the importer in metrale-codegen reads them.
//! Invariants (the loader checks them all before a [`ConfigMap`] exists):
//! - Every key path is non-empty and has no empty segment (`a..b`, `.a` are refused).
//! - [`ConfigMap::dims`] names every declared dim exactly once, in declaration order, and no
//!   derived dim; a fallback reads only declared dims other than its own.
//! - Every layer kind a [`LayerKindsSource`] maps to is a layer kind of the layout; under a
//!   pattern layout each also has a symbol. A pattern key is given only in a pattern layout;
//!   an interval key only in an interval layout or a pattern layout that has its own pattern.
//! - A list layout has layer types, indices or rules; a pattern layout without its own pattern
//!   has one of the four sources.
//! - [`LayerRules`] (schema 3): at least one rule; each rule's kind and the default are layer
//!   kinds of the layout (with a symbol under a pattern layout); a period is at least 1 and an
//!   offset fits every period it can meet (`0..period`, or `-period..=-1` from the period's
//!   end), each as written and each `or`; listed indices are not empty, none repeated, each at
//!   least `base` and below `base` + [`MAX_LAYERS`]; a `last` count is at most [`MAX_LAYERS`]
//!   (at least 1 when written as a number). The rules that decide a layer whatever the config
//!   says (an `every` with a number for its period and offset, listed indices) give every layer
//!   below [`MAX_LAYERS`] a kind when there is no default, and leave one without a kind when
//!   there is one (so the default is used); each such rule names a layer below [`MAX_LAYERS`];
//!   no rule is wholly overridden by such rules after it; and when only such rules are given,
//!   their kinds agree with a fixed layout (an interval's period, a pattern layout's own
//!   pattern) on every layer below [`MAX_LAYERS`].

use super::config_expr::ConfigExpr;
use super::shape::Shape;
#[cfg(doc)]
use crate::load::text::limits::MAX_LAYERS;
use crate::load::text::walk::Origin;

/// The `[config]` table: where `import` reads each checkpoint figure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigMap {
    /// The key of the layer count.
    pub(crate) layers: String,
    /// Where the layer kinds come from, when the config says them.
    pub(crate) layer_kinds: Option<LayerKindsSource>,
    /// An integer key that must equal the layout's period (or its pattern's length).
    pub(crate) interval: Option<String>,
    /// Every declared dim's source, in declaration order.
    pub(crate) dims: Vec<ConfigDim>,
}

impl ConfigMap {
    /// The dotted key path of the layer count (`num_hidden_layers`).
    #[must_use]
    pub fn layers(&self) -> &str {
        &self.layers
    }

    /// Where the layer kinds come from, if the config gives them.
    #[must_use]
    pub fn layer_kinds(&self) -> Option<&LayerKindsSource> {
        self.layer_kinds.as_ref()
    }

    /// The key whose integer must equal the layout's period (an interval layout) or the length
    /// of the layout's pattern (a pattern layout), if one is named.
    #[must_use]
    pub fn interval(&self) -> Option<&str> {
        self.interval.as_deref()
    }

    /// Every declared dim's source, in the order `dims` declares them.
    #[must_use]
    pub fn dims(&self) -> &[ConfigDim] {
        &self.dims
    }
}

/// Where a config says each layer's kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LayerKindsSource {
    /// A list with one entry per layer (`layer_types`), each entry (a string, or an integer
    /// matched by its decimal spelling) mapped to a layer kind.
    Types {
        /// The list's key path.
        key: String,
        /// Entry spelling -> layer kind, in file order.
        map: Vec<(String, String)>,
        /// Schema 3, `[config.layer_rules]` beside it: the kinds when the config has no list
        /// (omits the key or gives `null`), as config classes fill the list in by rule. When
        /// the config has the list, the rules are applied on top of it (`over`) or must agree
        /// with it: never dropped.
        or: Option<LayerRules>,
        /// Schema 4: with a list in the config, each rule overrides the list on the layers it
        /// names (the list first, then the rules in order; `default` unused). Schema 3: the
        /// list is read as is, and a rule that would change a layer of it is refused.
        over: bool,
    },
    /// A string with one `[layout.symbols]` character per layer (pattern layouts only).
    Pattern {
        /// The string's key path.
        key: String,
    },
    /// For each layer kind, a list of the indices of its layers; together they cover every
    /// layer exactly once.
    Indices {
        /// The index of the first layer in those lists: 0 or 1.
        base: u64,
        /// Layer kind -> the key path of its index list, in file order.
        kinds: Vec<(String, String)>,
    },
    /// Schema 3: rules over the layer indices (`[config.layer_rules]`), for configs that list
    /// no kind per layer.
    Rules(LayerRules),
}

/// Schema 3, `[config.layer_rules]`: the layer kinds by rule. The rules apply in order, each
/// giving its kind to the layers it names, so a later rule overrides an earlier one on the
/// layers both name; the default kind goes to every layer no rule names. Layers are counted
/// from 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayerRules {
    /// The rules, in file order (at least one).
    pub(crate) rules: Vec<KindRule>,
    /// The kind of every layer no rule names, and where it is written.
    pub(crate) default: Option<(String, Origin)>,
}

impl LayerRules {
    /// The rules, in the order they apply.
    #[must_use]
    pub fn rules(&self) -> &[KindRule] {
        &self.rules
    }

    /// The kind of every layer no rule names, if one is given.
    #[must_use]
    pub fn default_kind(&self) -> Option<&str> {
        self.default.as_ref().map(|(kind, _)| kind.as_str())
    }

    /// Where `default` is written.
    #[must_use]
    pub fn default_origin(&self) -> Option<&Origin> {
        self.default.as_ref().map(|(_, origin)| origin)
    }
}

/// One rule of [`LayerRules`]: which layers, and the kind it gives them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KindRule {
    /// The layers it names.
    pub(crate) layers: RuleLayers,
    /// `last = K` beside `every` or `indices`: only those of its layers among the last `K`.
    pub(crate) within_last: Option<ConfigInt>,
    /// The layer kind it gives them.
    pub(crate) kind: String,
    /// Where the rule is written.
    pub(crate) origin: Origin,
}

impl KindRule {
    /// The layers the rule names.
    #[must_use]
    pub fn layers(&self) -> &RuleLayers {
        &self.layers
    }

    /// `last = K` beside `every` or `indices`: the rule names only those of its layers among
    /// the last `K` (Gemma 3n's shared global layers: every 5th layer of the shared tail).
    #[must_use]
    pub fn within_last(&self) -> Option<&ConfigInt> {
        self.within_last.as_ref()
    }

    /// The layer kind it gives them.
    #[must_use]
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// Where the rule is written (`file:line`).
    #[must_use]
    pub fn origin(&self) -> &Origin {
        &self.origin
    }
}

/// Which layers a [`KindRule`] names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleLayers {
    /// `every = N, offset = O`: layer `i` when `i % N` is `O` (for `O >= 0`) or `N + O` (for
    /// `O < 0`, counted from the period's end: `-1` is the last layer of each period, the
    /// layers `i` with `(i + 1) % N == 0`).
    Every {
        /// The period `N`, at least 1.
        period: ConfigInt,
        /// The offset `O` (0 when not written).
        offset: ConfigInt,
    },
    /// `indices = [...]` or `indices = "<key>"`: the listed layers, counted from `base`.
    Indices {
        /// The list, or the key of a list in the config.
        list: RuleIndices,
        /// The index the list gives the first layer: 0 or 1.
        base: u64,
    },
    /// `last = K`: the last `K` layers.
    Last {
        /// The count `K`.
        count: ConfigInt,
    },
}

/// The layer indices of an `indices` rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleIndices {
    /// Written in the circuit (not empty, none repeated, each at least the rule's `base`).
    Listed(Vec<u64>),
    /// Schema 4: written in the circuit with entries computed from the config
    /// (`[0, "num_hidden_layers - 1"]`): each a number or an expression over config keys, not
    /// empty; the numbers checked as [`RuleIndices::Listed`]'s, the computed ones per config.
    Computed(Vec<ConfigInt>),
    /// The key path of a list of integers in the config, and the list (`or`, possibly empty)
    /// used when the config omits the key or gives `null`.
    Key {
        /// The key path.
        key: String,
        /// The list when the config has none (none repeated, each at least `base`).
        or: Option<Vec<u64>>,
    },
}

/// An integer of a rule: written in the circuit, or read from the config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigInt {
    /// Written in the circuit.
    Literal(i64),
    /// The integer at a config key path; `or` when the config omits the key or gives `null`.
    Key {
        /// The key path.
        key: String,
        /// The value used when the config omits the key or gives `null`.
        or: Option<i64>,
    },
    /// Schema 4: an expression over config keys (`num_hidden_layers / 2 + 1`), evaluated
    /// exactly to a whole number; `or` when a key it reads is absent or `null`.
    Expr {
        /// The expression.
        expr: ConfigExpr,
        /// The value used when a key it reads is absent or `null`.
        or: Option<i64>,
    },
}

/// Where one declared dim's value is in a config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigDim {
    /// The dim.
    pub(crate) dim: String,
    /// How its value is read.
    pub(crate) value: DimValue,
    /// What is used when a key the value reads is absent or `null`.
    pub(crate) fallback: Option<Fallback>,
}

impl ConfigDim {
    /// The dim's name.
    #[must_use]
    pub fn dim(&self) -> &str {
        &self.dim
    }

    /// How its value is read from the config.
    #[must_use]
    pub fn value(&self) -> &DimValue {
        &self.value
    }

    /// The config key its figure is located at: the key path it reads (schemas 2 and 3), the
    /// first key its expression reads, or the key of its condition.
    #[must_use]
    pub fn key(&self) -> &str {
        match &self.value {
            DimValue::Key(key) | DimValue::If { key, .. } => key,
            DimValue::Expr(expr) => expr.names().first().map_or("", |name| name.path.as_str()),
        }
    }

    /// The value as written: the key path or expression, or the condition's key.
    #[must_use]
    pub fn value_text(&self) -> &str {
        match &self.value {
            DimValue::Key(key) | DimValue::If { key, .. } => key,
            DimValue::Expr(expr) => expr.text(),
        }
    }

    /// What is used when a key its value reads is absent or `null`, if anything.
    #[must_use]
    pub fn fallback(&self) -> Option<&Fallback> {
        self.fallback.as_ref()
    }
}

/// How a declared dim's value is read from a config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DimValue {
    /// Schemas 2 and 3: a key path, its value a JSON integer.
    Key(String),
    /// Schema 4: an expression over config keys (a key path alone is one), evaluated exactly.
    Expr(ConfigExpr),
    /// Schema 4, `{ if = "<key>", then = <expr>, else = <expr> }`: `then` when the config's
    /// value at `key` is true (Python's truth: not `false`, 0, `""`, `[]` or `{}`), else
    /// `otherwise`; an absent or `null` key is `absent`.
    If {
        /// The key path of the condition.
        key: String,
        /// The condition when the config omits the key or gives `null` (`or`, false unless
        /// written).
        absent: bool,
        /// The value when the condition holds.
        then: ConfigExpr,
        /// The value when it does not.
        otherwise: ConfigExpr,
    },
}

/// What a dim's value is when a key it reads is absent or `null`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fallback {
    /// Schemas 2 and 3: one axis of the shape grammar over the other declared dims (its `/`
    /// rounds up, as in shapes): as written, and parsed.
    Shape(String, Shape),
    /// Schema 4: a config expression (its `/` floors); a name is a declared dim when one of
    /// that name is declared, else a config key.
    Expr(ConfigExpr),
}

impl Fallback {
    /// The expression as written.
    #[must_use]
    pub fn text(&self) -> &str {
        match self {
            Fallback::Shape(text, _) => text,
            Fallback::Expr(expr) => expr.text(),
        }
    }
}
