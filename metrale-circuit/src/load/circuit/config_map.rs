//! What a circuit's `[config]` table says (schema 2): where each checkpoint figure (the layer
//! count, the layer kinds, every declared dim) is found in a Hugging Face `config.json`, so
//! `metrale-codegen import` can write a checkpoint table from a published config instead of a
//! person copying figures by hand.
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
//! - A list layout has layer types or indices; a pattern layout without its own pattern has
//!   one of the three sources.

use super::shape::Shape;

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
}

/// Where one declared dim's value is in a config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigDim {
    /// The dim.
    pub(crate) dim: String,
    /// The key path of its value.
    pub(crate) key: String,
    /// The expression used when the key is absent or `null`, as written and parsed.
    pub(crate) fallback: Option<(String, Shape)>,
}

impl ConfigDim {
    /// The dim's name.
    #[must_use]
    pub fn dim(&self) -> &str {
        &self.dim
    }

    /// The dotted key path of its value (`text_config.hidden_size`).
    #[must_use]
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The fallback expression (one axis over other declared dims) used when the config omits
    /// the key or gives `null`: as written, and parsed.
    #[must_use]
    pub fn fallback(&self) -> Option<(&str, &Shape)> {
        self.fallback
            .as_ref()
            .map(|(text, shape)| (text.as_str(), shape))
    }
}
