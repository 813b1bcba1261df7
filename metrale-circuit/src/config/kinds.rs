//! The layers' kinds read from a config, each way `[config]` may give them (a list of one
//! entry per layer mapped to kinds, a pattern string, one list of indices per kind, or the
//! rules of `[config.layer_rules]` in `rules`), then checked against the circuit's layout and
//! put the way it writes them ([`ImportedKinds`]).
//!
//! Invariants:
//! - Every layer gets exactly one kind, or the import is refused: a list or pattern of another
//!   length than the layer count, an index listed twice or outside the layers, a layer no list
//!   covers, each located at the value at fault.
//! - A fixed pattern is only ever repeated whole, never cut: a depth it does not divide is
//!   refused with both figures and the depths that would fit.
//! - A kind that contradicts an interval or a fixed pattern is refused at the layer, naming
//!   what decided it.

use std::ops::Range;

use crate::load::circuit::layer_law;
use crate::load::text::diag::Diagnostic;
use crate::load::{
    Circuit,
    circuit::LayerRule,
    circuit::config_map::{ConfigMap, LayerKindsSource},
};
use jsonc_parser::ast::Value;

use super::json::{Depth, Found, Layer, Reader, describe, span};
use super::table::ImportedKinds;

impl Reader<'_> {
    /// The layers' kinds, checked against the layout and put the way the layout writes them,
    /// with where the config gives each layer's kind (none when the layout alone decides).
    pub(super) fn kinds(
        &mut self,
        circuit: &Circuit,
        map: &ConfigMap,
        depth: &Depth,
    ) -> Option<(ImportedKinds, Vec<Range<usize>>)> {
        let layers = depth.layers;
        let given = match map.layer_kinds() {
            None => None,
            Some(source) => Some(match source {
                LayerKindsSource::Types { key, map, or, over } => match (self.find(key), or) {
                    // No list in the config: the rules its config class fills it in by.
                    (Found::Missing(_) | Found::Value(Value::NullKeyword(_)), Some(rules)) => {
                        self.layer_rules(rules, depth)
                    }
                    // A list and rules: the rules on top of it, or checked against it.
                    (_, Some(rules)) => {
                        let list = self.layer_types(key, map, layers)?;
                        self.rules_on_list(list, key, rules, depth, *over)
                    }
                    (_, None) => self.layer_types(key, map, layers),
                },
                LayerKindsSource::Pattern { key } => {
                    self.pattern(key, circuit.layout().rule(), layers)
                }
                LayerKindsSource::Indices { base, kinds } => self.indices(*base, kinds, layers),
                LayerKindsSource::Rules(rules) => self.layer_rules(rules, depth),
            }?),
        };
        let at = given.iter().flatten().map(|l| l.at.clone()).collect();
        let kinds = self.in_layout(circuit.layout().rule(), depth, given)?;
        Some((kinds, at))
    }

    /// The layers' kinds the config gives (`given`), checked against the layout `rule` and
    /// put the way it writes them.
    fn in_layout(
        &mut self,
        rule: &LayerRule,
        depth: &Depth,
        given: Option<Vec<Layer>>,
    ) -> Option<ImportedKinds> {
        match rule {
            LayerRule::Interval { period } => {
                for (i, layer) in given.iter().flatten().enumerate() {
                    let expected = if (i as u64 + 1).is_multiple_of(*period) {
                        "full_attention"
                    } else {
                        "linear_attention"
                    };
                    if layer.kind != expected {
                        self.report(
                            layer.at.clone(),
                            Diagnostic::error(format!(
                                "layer {i} is `{}` {}, but the layout (period {period}) makes it `{expected}`",
                                layer.kind, layer.by
                            ))
                            .label("contradicts the layout")
                            .help("this config describes another layout than the circuit's"),
                        );
                        return None;
                    }
                }
                Some(ImportedKinds::Layout)
            }
            LayerRule::List => Some(ImportedKinds::List(
                given?.into_iter().map(|layer| layer.kind).collect(),
            )),
            LayerRule::Pattern { symbols, pattern } => {
                if let Some(pattern) = pattern
                    && !self.fixed_pattern(pattern, symbols, depth, given.as_deref())
                {
                    return None;
                }
                let Some(given) = given else {
                    return Some(ImportedKinds::Layout);
                };
                let pattern = given
                    .iter()
                    .filter_map(|layer| {
                        symbols
                            .iter()
                            .find(|(_, k)| *k == layer.kind)
                            .map(|(c, _)| *c)
                    })
                    .collect();
                Some(ImportedKinds::Pattern(pattern))
            }
        }
    }

    /// A pattern layout's own pattern: it must divide the depth (it is repeated whole, never
    /// cut), and the config's kinds, when it gives them, must be the pattern's. `false` when
    /// refused (reported).
    fn fixed_pattern(
        &mut self,
        pattern: &str,
        symbols: &[(char, String)],
        depth: &Depth,
        given: Option<&[Layer]>,
    ) -> bool {
        let kinds: Vec<&str> = pattern
            .chars()
            .filter_map(|c| {
                symbols
                    .iter()
                    .find(|(s, _)| *s == c)
                    .map(|(_, k)| k.as_str())
            })
            .collect();
        let period = kinds.len() as u64;
        if period == 0 {
            return true;
        }
        let mut valid = true;
        let (layers, key) = (depth.layers, &depth.key);
        if !layers.is_multiple_of(period) {
            let below = layers - layers % period;
            let above = below.saturating_add(period);
            let fit = if below == 0 {
                format!("{above} layers would fit")
            } else {
                format!("{below} or {above} layers would fit")
            };
            self.report(
                depth.at.clone(),
                Diagnostic::error(format!(
                    "config key `{key}` is {layers}: not a whole number of the layout's pattern `{pattern}` ({period} layers)"
                ))
                .label("the pattern would be cut")
                .help(format!(
                    "{fit}; a model of another depth needs its own pattern: remove `[layout] pattern` and give the layer kinds in `[config]` (by rule: `[config.layer_rules]`, schema 3)"
                )),
            );
            valid = false;
        }
        for (i, layer) in given.into_iter().flatten().enumerate() {
            let expected = kinds.get(i % kinds.len()).copied().unwrap_or_default();
            if layer.kind != expected {
                self.report(
                    layer.at.clone(),
                    Diagnostic::error(format!(
                        "layer {i} is `{}` {}, but the layout's pattern `{pattern}` makes it `{expected}`",
                        layer.kind, layer.by
                    ))
                    .label("contradicts the layout")
                    .help("this config describes another layout than the circuit's"),
                );
                return false;
            }
        }
        valid
    }

    /// A list of one entry per layer, each mapped to a layer kind.
    fn layer_types(
        &mut self,
        key: &str,
        map: &[(String, String)],
        layers: u64,
    ) -> Option<Vec<Layer>> {
        // `list[*].path` (schema 4): the value at `path` in each entry of `list`.
        let (list_key, each) = match key.split_once("[*]") {
            Some((list, rest)) => (list, Some(rest.strip_prefix('.').unwrap_or(rest))),
            None => (key, None),
        };
        let value = self.require(
            list_key,
            "`[config] layer_types` names the key of the per-layer list",
        )?;
        let Value::Array(array) = value else {
            self.report(
                span(value),
                Diagnostic::error(format!(
                    "config key `{list_key}` must be a list of layer types, found {}",
                    describe(value)
                ))
                .label("not a list"),
            );
            return None;
        };
        if array.elements.len() as u64 != layers {
            self.report(
                span(value),
                Diagnostic::error(format!(
                    "config key `{list_key}` has {} entries, but the model has {layers} layers",
                    array.elements.len()
                ))
                .label("one entry per layer expected"),
            );
            return None;
        }
        let entries: Vec<&str> = map.iter().map(|(e, _)| e.as_str()).collect();
        let mut out = Vec::with_capacity(array.elements.len());
        for (i, entry) in array.elements.iter().enumerate() {
            let element = match each {
                None | Some("") => entry,
                Some(path) => match Reader::find_from(entry, path) {
                    Found::Value(v) => v,
                    Found::Missing(_) => {
                        self.report(
                            span(entry),
                            Diagnostic::error(format!(
                                "entry {i} of config key `{list_key}` has no `{path}`"
                            ))
                            .label(format!("no `{path}` in this entry"))
                            .help(format!(
                                "`[config] layer_types` reads `{key}`: each entry of `{list_key}` gives it"
                            )),
                        );
                        continue;
                    }
                },
            };
            // A boolean or `null` is mapped by its spelling, as a number is.
            let spelled = match element {
                Value::StringLit(s) => Some(s.value.to_string()),
                Value::NumberLit(n) => Some(n.value.to_owned()),
                Value::BooleanLit(b) => Some(b.value.to_string()),
                Value::NullKeyword(_) => Some("null".to_owned()),
                _ => None,
            };
            let kind =
                spelled.and_then(|s| map.iter().find(|(e, _)| *e == s).map(|(_, k)| k.clone()));
            if let Some(kind) = kind {
                out.push(Layer::in_config(kind, span(element)));
                continue;
            }
            let found = match element {
                Value::StringLit(s) => format!("`{}`", s.value),
                Value::NumberLit(n) => format!("`{}`", n.value),
                Value::BooleanLit(b) => format!("`{}`", b.value),
                Value::NullKeyword(_) => "`null`".to_owned(),
                other => describe(other).to_owned(),
            };
            let shown = found.trim_matches('`').to_owned();
            let mut d = Diagnostic::error(format!(
                "entry {i} of config key `{key}` is {found}, which `[config] layer_types.map` does not map"
            ))
            .label("unknown layer type")
            .expected_one_of("entries", &shown, &entries);
            if matches!(element, Value::Object(_)) {
                d = d.help(format!(
                    "to map a value of each entry, project it (schema 4): `key = \"{key}[*].<key in the entry>\"`"
                ));
            }
            self.report(span(element), d);
        }
        (out.len() == array.elements.len()).then_some(out)
    }

    /// A pattern string, one symbol per layer.
    fn pattern(&mut self, key: &str, rule: &LayerRule, layers: u64) -> Option<Vec<Layer>> {
        let value = self.require(key, "`[config] pattern` names the key of the layer pattern")?;
        let Value::StringLit(text) = value else {
            self.report(
                span(value),
                Diagnostic::error(format!(
                    "config key `{key}` must be a pattern string, found {}",
                    describe(value)
                ))
                .label("not a string"),
            );
            return None;
        };
        let LayerRule::Pattern { symbols, .. } = rule else {
            return None;
        };
        let pattern: &str = &text.value;
        let count = pattern.chars().count() as u64;
        let at = span(value);
        if count != layers {
            self.report(
                at,
                Diagnostic::error(format!(
                    "config key `{key}` has {count} characters, but the model has {layers} layers"
                ))
                .label("one character per layer expected"),
            );
            return None;
        }
        // The string's characters sit one to one after its opening quote when it has no
        // escapes: then an unknown character is pointed at exactly.
        let raw = self.config.text().get(at.clone()).unwrap_or("");
        let one_to_one = raw.get(1..raw.len().saturating_sub(1)) == Some(pattern);
        let known: Vec<String> = symbols.iter().map(|(c, _)| c.to_string()).collect();
        let known: Vec<&str> = known.iter().map(String::as_str).collect();
        let mut out = Vec::with_capacity(pattern.len());
        for (offset, c) in pattern.char_indices() {
            let place = if one_to_one {
                let start = at.start + 1 + offset;
                start..start + c.len_utf8()
            } else {
                at.clone()
            };
            if let Some((_, kind)) = symbols.iter().find(|(s, _)| *s == c) {
                out.push(Layer::in_config(kind.clone(), place));
                continue;
            }
            self.report(
                place,
                Diagnostic::error(format!(
                    "character `{c}` of config key `{key}` is not a `[layout.symbols]` symbol"
                ))
                .label("unknown symbol")
                .expected_one_of("symbols", &c.to_string(), &known),
            );
        }
        (out.len() as u64 == layers).then_some(out)
    }

    /// Per layer kind, the list of its layers' indices; together exactly the layers.
    fn indices(
        &mut self,
        base: u64,
        kinds: &[(String, String)],
        layers: u64,
    ) -> Option<Vec<Layer>> {
        let count = usize::try_from(layers).ok()?;
        let mut of: Vec<Option<(String, Range<usize>)>> = vec![None; count];
        let mut valid = true;
        for (kind, key) in kinds {
            let Some(value) = self.require(
                key,
                "`[config] layer_indices` names one list of layer indices per layer kind",
            ) else {
                valid = false;
                continue;
            };
            let Value::Array(array) = value else {
                self.report(
                    span(value),
                    Diagnostic::error(format!(
                        "config key `{key}` must be a list of layer indices, found {}",
                        describe(value)
                    ))
                    .label("not a list"),
                );
                valid = false;
                continue;
            };
            for element in &array.elements {
                let Some(index) = self.integer(key, element) else {
                    valid = false;
                    continue;
                };
                let layer = layer_law::index(index, base, layers);
                let Some(layer) = layer else {
                    self.report(
                        span(element),
                        Diagnostic::error(format!(
                            "config key `{key}` lists layer {index}, outside {base}..={}",
                            layers - 1 + base
                        ))
                        .label("no such layer")
                        .note(format!(
                            "`[config.layer_indices] base = {base}` and {layers} layers"
                        )),
                    );
                    valid = false;
                    continue;
                };
                let slot = of.get_mut(layer)?;
                if let Some((first, _)) = slot {
                    let first = first.clone();
                    self.report(
                        span(element),
                        Diagnostic::error(format!(
                            "layer {index} is listed twice: in config key `{key}` and for `{first}`"
                        ))
                        .label("listed again"),
                    );
                    valid = false;
                } else {
                    *slot = Some((kind.clone(), span(element)));
                }
            }
        }
        if !valid {
            return None;
        }
        let missing: Vec<String> = of
            .iter()
            .enumerate()
            .filter(|(_, k)| k.is_none())
            .map(|(i, _)| (i as u64 + base).to_string())
            .collect();
        if !missing.is_empty() {
            let keys: Vec<String> = kinds.iter().map(|(_, k)| format!("`{k}`")).collect();
            let first = kinds.first().map_or(String::new(), |(_, key)| key.clone());
            self.report(
                self.key_span(&first),
                Diagnostic::error(format!(
                    "layer{} {} {} in none of the config keys {}",
                    if missing.len() == 1 { "" } else { "s" },
                    missing.join(", "),
                    if missing.len() == 1 { "is" } else { "are" },
                    keys.join(", ")
                ))
                .label("these lists do not cover every layer"),
            );
            return None;
        }
        Some(
            of.into_iter()
                .filter_map(|k| k.map(|(kind, at)| Layer::in_config(kind, at)))
                .collect(),
        )
    }
}
