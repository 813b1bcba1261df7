//! The layer kinds by rule (`[config.layer_rules]`, schema 3) evaluated against a config: each
//! rule's integers read (written in the circuit, at a config key, or that key's `or`), its
//! layers named, later rules overriding earlier ones, `default` for the rest.
//!
//! This module owns what the loader cannot check without a config: a period read as 0, an
//! offset that does not fit the period read, a listed or read index outside the model's
//! layers or listed twice, a `last` count past the depth, a layer left without a kind.
//!
//! Invariants:
//! - Every error is located in the config: at the value read (a period, an offset, an index, a
//!   count), or at the layer count when the rule's own numbers meet the config's depth; each
//!   names the rule and its `file:line` in the circuit.
//! - The work is one pass per rule over at most
//!   [`MAX_LAYERS`](crate::load::text::limits::MAX_LAYERS) layers (the layer count is checked
//!   before), and one pass over each list read.
//! - Which layers a rule names, its integers read, is the loader's one law
//!   (`load::circuit::layer_law`), the law the loader checks a rule set by without a config.

use std::ops::Range;

use crate::load::circuit::config_expr::ConfigExpr;
use crate::load::circuit::config_map::{ConfigInt, KindRule, LayerRules, RuleIndices, RuleLayers};
use crate::load::circuit::layer_law;
use crate::load::text::diag::Diagnostic;
use jsonc_parser::ast::Value;

use super::figure::{Figure, Whole};
use super::json::{Depth, Found, Layer, Reader, describe, span};

/// An integer of a rule as evaluated: its value, and the config value it was read from (`None`
/// when written in the circuit or taken from `or`).
struct Read {
    value: i128,
    at: Option<Range<usize>>,
}

/// A layer's kind as the rules decide it: the index of the last rule naming it, and where that
/// was decided.
type Decided = (usize, Range<usize>);

impl Reader<'_> {
    /// Per layer, the last rule that names it (its index) and where that was decided; `None`
    /// when a rule could not be applied (reported).
    fn named_by_rules(
        &mut self,
        rules: &LayerRules,
        depth: &Depth,
    ) -> Option<Vec<Option<Decided>>> {
        let count = usize::try_from(depth.layers).ok()?;
        let mut of: Vec<Option<Decided>> = vec![None; count];
        let mut valid = true;
        for (r, rule) in rules.rules().iter().enumerate() {
            let by = by_rule(r, rule);
            match self.named(rule, depth, &by) {
                Some(named) => {
                    for (layer, at) in named {
                        if let Some(slot) = of.get_mut(layer) {
                            *slot = Some((r, at));
                        }
                    }
                }
                None => valid = false,
            }
        }
        valid.then_some(of)
    }

    /// The config's list (`layer_types` at `key`) with the rules beside it: with `over`
    /// (schema 4) each layer a rule names takes the last such rule's kind and the others keep
    /// the list's (`default` is unused: the list names every layer); without it (schema 3) the
    /// list is read as is, and a rule that would change a layer is refused at that layer's
    /// entry, never dropped.
    pub(super) fn rules_on_list(
        &mut self,
        mut list: Vec<Layer>,
        key: &str,
        rules: &LayerRules,
        depth: &Depth,
        over: bool,
    ) -> Option<Vec<Layer>> {
        let of = self.named_by_rules(rules, depth)?;
        let mut disagree: Vec<(usize, usize, Range<usize>)> = Vec::new();
        for (i, decided) in of.into_iter().enumerate() {
            let (Some((r, at)), Some(layer)) = (decided, list.get_mut(i)) else {
                continue;
            };
            let rule = rules.rules().get(r)?;
            if over {
                *layer = Layer {
                    kind: rule.kind().to_owned(),
                    at,
                    by: format!("by {}", by_rule(r, rule)),
                };
            } else if layer.kind != rule.kind() {
                disagree.push((i, r, layer.at.clone()));
            }
        }
        let Some((i, r, at)) = disagree.first().cloned() else {
            return Some(list);
        };
        let rule = rules.rules().get(r)?;
        let listed = list.get(i).map_or("", |l| l.kind.as_str());
        let mut d = Diagnostic::error(format!(
            "layer {i} is `{listed}` in config key `{key}`, but {} makes it `{}`",
            by_rule(r, rule),
            rule.kind()
        ))
        .label("the rules say otherwise")
        .note("schema 3 reads the config's list alone when it has one, and the rules only when it has none");
        if disagree.len() > 1 {
            d = d.note(format!(
                "{} layers disagree: {}",
                disagree.len(),
                disagree
                    .iter()
                    .map(|(i, ..)| i.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        self.report(
            at,
            d.help("write `schema = 4` to apply the rules on top of the list (the list first, then each rule in order), or correct the rule"),
        );
        None
    }

    /// Every layer's kind by the rules, or `None` when a rule could not be applied (reported).
    pub(super) fn layer_rules(&mut self, rules: &LayerRules, depth: &Depth) -> Option<Vec<Layer>> {
        let of = self.named_by_rules(rules, depth)?;
        let default = rules.default_kind().map(|kind| {
            let at = rules
                .default_origin()
                .map_or_else(String::new, |o| format!(" ({o})"));
            (kind, format!("by `default` of `[config.layer_rules]`{at}"))
        });
        let unnamed: Vec<String> = of
            .iter()
            .enumerate()
            .filter(|(_, k)| k.is_none())
            .map(|(i, _)| i.to_string())
            .collect();
        if default.is_none() && !unnamed.is_empty() {
            self.report(
                depth.at.clone(),
                Diagnostic::error(format!(
                    "layer{} {} get{} no kind from `[config.layer_rules]`",
                    if unnamed.len() == 1 { "" } else { "s" },
                    unnamed.join(", "),
                    if unnamed.len() == 1 { "s" } else { "" }
                ))
                .label("no rule names them")
                .help("add `default = \"<layer kind>\"` to `[config.layer_rules]`"),
            );
            return None;
        }
        let layers = of
            .into_iter()
            .filter_map(|decided| match (decided, &default) {
                (Some((r, at)), _) => {
                    let rule = rules.rules().get(r)?;
                    Some(Layer {
                        kind: rule.kind().to_owned(),
                        at,
                        by: format!("by {}", by_rule(r, rule)),
                    })
                }
                (None, Some((kind, by))) => Some(Layer {
                    kind: (*kind).to_owned(),
                    at: depth.at.clone(),
                    by: by.clone(),
                }),
                (None, None) => None,
            })
            .collect::<Vec<Layer>>();
        (layers.len() as u64 == depth.layers).then_some(layers)
    }

    /// The layers one rule names, each with where it was decided; `None` when refused
    /// (reported).
    fn named(
        &mut self,
        rule: &KindRule,
        depth: &Depth,
        by: &str,
    ) -> Option<Vec<(usize, Range<usize>)>> {
        let named = match rule.layers() {
            RuleLayers::Every { period, offset } => self.every(period, offset, depth, by),
            RuleLayers::Indices {
                list: RuleIndices::Listed(list),
                base,
            } => self.listed(list, *base, depth, by),
            RuleLayers::Indices {
                list: RuleIndices::Computed(list),
                base,
            } => self.computed(list, *base, depth, by),
            RuleLayers::Indices {
                list: RuleIndices::Key { key, or },
                base,
            } => match (self.find(key), or) {
                // The config omits the list (or gives `null`): the circuit's `or`.
                (Found::Missing(_) | Found::Value(Value::NullKeyword(_)), Some(or)) => {
                    self.listed(or, *base, depth, by)
                }
                _ => self.read_indices(key, *base, depth, by),
            },
            RuleLayers::Last { count } => self.last(count, depth, by),
        };
        // `last` beside `every` or `indices`: only their layers among the last K.
        let Some(count) = rule.within_last() else {
            return named;
        };
        let tail = self.last(count, depth, by);
        let (named, tail) = (named?, tail?);
        // The tail is the layers from its first to the last.
        let first = tail.first().map_or(usize::MAX, |(layer, _)| *layer);
        Some(
            named
                .into_iter()
                .filter(|(layer, _)| *layer >= first)
                .collect(),
        )
    }

    /// `every = N, offset = O`: the period read at least 1, the offset fitting it.
    fn every(
        &mut self,
        period: &ConfigInt,
        offset: &ConfigInt,
        depth: &Depth,
        by: &str,
    ) -> Option<Vec<(usize, Range<usize>)>> {
        let n = self.rule_int(period, by);
        let o = self.rule_int(offset, by);
        let (n, o) = (n?, o?);
        if n.value < 1 {
            self.report(
                n.at.clone().unwrap_or_else(|| depth.at.clone()),
                Diagnostic::error(format!(
                    "the period of {by} is {}: a period is at least 1 layer",
                    n.value
                ))
                .label("zero period"),
            );
            return None;
        }
        if !layer_law::offset_fits(o.value, n.value) {
            let mut d = Diagnostic::error(format!(
                "the offset {} of {by} does not fit its period {}",
                o.value, n.value
            ))
            .label("offset past the period")
            .help(format!(
                "an offset is 0 to {}, or -{} to -1 counted from the period's end",
                n.value - 1,
                n.value
            ));
            if let ConfigInt::Key { key, .. } = period {
                d = d.note(format!("the period is config key `{key}`"));
            }
            self.report(
                o.at.clone()
                    .or_else(|| n.at.clone())
                    .unwrap_or_else(|| depth.at.clone()),
                d,
            );
            return None;
        }
        let at = n.at.or(o.at).unwrap_or_else(|| depth.at.clone());
        Some(
            layer_law::every(n.value, o.value, depth.layers)?
                .map(|i| (i, at.clone()))
                .collect(),
        )
    }

    /// `indices = [...]` written in the circuit: each a layer of the config's depth.
    fn listed(
        &mut self,
        list: &[u64],
        base: u64,
        depth: &Depth,
        by: &str,
    ) -> Option<Vec<(usize, Range<usize>)>> {
        let mut out = Vec::with_capacity(list.len());
        for &index in list {
            let layer = layer_law::index(index, base, depth.layers);
            let Some(layer) = layer else {
                self.report(
                    depth.at.clone(),
                    Diagnostic::error(format!(
                        "{by} lists layer {index}, but config key `{}` gives {} layers",
                        depth.key, depth.layers
                    ))
                    .label("fewer layers")
                    .note(format!(
                        "with `base = {base}` the layers are {base} to {}",
                        depth.layers - 1 + base
                    ))
                    .help("this config describes another model than the circuit's rule"),
                );
                return None;
            };
            out.push((layer, depth.at.clone()));
        }
        Some(out)
    }

    /// Schema 4's computed `indices`: each entry read (a number, or an expression over config
    /// keys), then each a layer of the config's depth, none listed twice.
    fn computed(
        &mut self,
        list: &[ConfigInt],
        base: u64,
        depth: &Depth,
        by: &str,
    ) -> Option<Vec<(usize, Range<usize>)>> {
        let mut out: Vec<(usize, Range<usize>)> = Vec::with_capacity(list.len());
        let mut valid = true;
        for int in list {
            let Some(read) = self.rule_int(int, by) else {
                valid = false;
                continue;
            };
            let at = read.at.clone().unwrap_or_else(|| depth.at.clone());
            let layer = u64::try_from(read.value)
                .ok()
                .and_then(|index| layer_law::index(index, base, depth.layers));
            let refused = match layer {
                None => Some(
                    Diagnostic::error(format!(
                        "{by} lists layer {}, but config key `{}` gives {} layers",
                        read.value, depth.key, depth.layers
                    ))
                    .label("not a layer of this model")
                    .note(format!(
                        "with `base = {base}` the layers are {base} to {}",
                        depth.layers - 1 + base
                    )),
                ),
                Some(layer) if out.iter().any(|(l, _)| *l == layer) => Some(
                    Diagnostic::error(format!("{by} lists layer {} twice", read.value))
                        .label("listed again"),
                ),
                Some(layer) => {
                    out.push((layer, at.clone()));
                    None
                }
            };
            if let Some(d) = refused {
                self.report(at, d);
                valid = false;
            }
        }
        valid.then_some(out)
    }

    /// `last = K`: the count read at most the depth.
    fn last(
        &mut self,
        count: &ConfigInt,
        depth: &Depth,
        by: &str,
    ) -> Option<Vec<(usize, Range<usize>)>> {
        let k = self.rule_int(count, by)?;
        let Some(named) = layer_law::last(k.value, depth.layers) else {
            let message = match count {
                ConfigInt::Key { key, .. } if k.at.is_some() => format!(
                    "config key `{key}` is {}, but the model has {} layers",
                    k.value, depth.layers
                ),
                _ => format!(
                    "{by} names the last {} layers, but config key `{}` gives {}",
                    k.value, depth.key, depth.layers
                ),
            };
            self.report(
                k.at.clone().unwrap_or_else(|| depth.at.clone()),
                Diagnostic::error(message)
                    .label("more than the model's layers")
                    .note(format!("{by} names the last K layers")),
            );
            return None;
        };
        let at = k.at.unwrap_or_else(|| depth.at.clone());
        Some(named.map(|i| (i, at.clone())).collect())
    }

    /// The indices of a list at `key`: integers, each a layer of the model, none twice.
    fn read_indices(
        &mut self,
        key: &str,
        base: u64,
        depth: &Depth,
        by: &str,
    ) -> Option<Vec<(usize, Range<usize>)>> {
        let value = self.require(key, &format!("{by} reads its layer indices from it"))?;
        let Value::Array(array) = value else {
            let found = match value {
                Value::NumberLit(_) => "a number",
                other => describe(other),
            };
            self.report(
                span(value),
                Diagnostic::error(format!(
                    "config key `{key}` must be a list of layer indices, found {found}"
                ))
                .label("not a list"),
            );
            return None;
        };
        let count = usize::try_from(depth.layers).ok()?;
        let mut seen: Vec<bool> = vec![false; count];
        let mut out = Vec::with_capacity(array.elements.len().min(count));
        let mut valid = true;
        for element in &array.elements {
            let Some(index) = self.integer(key, element) else {
                valid = false;
                continue;
            };
            let layer = layer_law::index(index, base, depth.layers);
            let Some(layer) = layer else {
                self.report(
                    span(element),
                    Diagnostic::error(format!(
                        "config key `{key}` lists layer {index}, outside {base}..={}",
                        depth.layers - 1 + base
                    ))
                    .label("no such layer")
                    .note(format!(
                        "{by} counts layers from {base}; config key `{}` gives {} layers",
                        depth.key, depth.layers
                    )),
                );
                valid = false;
                continue;
            };
            if let Some(slot) = seen.get_mut(layer) {
                if *slot {
                    self.report(
                        span(element),
                        Diagnostic::error(format!(
                            "layer {index} is listed twice in config key `{key}`"
                        ))
                        .label("listed again"),
                    );
                    valid = false;
                    continue;
                }
                *slot = true;
            }
            out.push((layer, span(element)));
        }
        valid.then_some(out)
    }

    /// A rule's integer: as written, at its config key, or the key's `or` when the config omits
    /// it or gives `null`.
    fn rule_int(&mut self, int: &ConfigInt, by: &str) -> Option<Read> {
        let (key, or) = match int {
            ConfigInt::Literal(n) => {
                return Some(Read {
                    value: i128::from(*n),
                    at: None,
                });
            }
            ConfigInt::Key { key, or } => (key, *or),
            ConfigInt::Expr { expr, or } => return self.rule_expr(expr, *or, by),
        };
        match (self.find(key), or) {
            (Found::Value(Value::NullKeyword(_)) | Found::Missing(_), Some(n)) => Some(Read {
                value: i128::from(n),
                at: None,
            }),
            (Found::Value(v), _) if !matches!(v, Value::NullKeyword(_)) => {
                let n = self.integer(key, v)?;
                Some(Read {
                    value: i128::from(n),
                    at: Some(span(v)),
                })
            }
            _ => {
                let help = format!(
                    "{by} reads it; if configs may omit it, give the rule an `or`: `{{ key = \"{key}\", or = <integer> }}`"
                );
                self.require(key, &help);
                None
            }
        }
    }
}

impl Reader<'_> {
    /// A rule's integer computed by an expression (schema 4): exact, whole, an `i64`; `or`
    /// when a key it reads is absent or `null`.
    fn rule_expr(&mut self, expr: &ConfigExpr, or: Option<i64>, by: &str) -> Option<Read> {
        match self.figure(
            &format!("the integer of {by}"),
            expr,
            &|_| None,
            Whole::Signed,
        ) {
            Figure::Value(value, at) => Some(Read { value, at }),
            Figure::Absent(_) if or.is_some() => or.map(|n| Read {
                value: i128::from(n),
                at: None,
            }),
            Figure::Absent(keys) => {
                let help = format!(
                    "{by} computes `{expr}`; if configs may omit it, give the rule an `or`: `{{ key = \"{expr}\", or = <integer> }}`"
                );
                self.require_all(&keys, &help);
                None
            }
            Figure::Refused => None,
        }
    }
}

/// "rule 2 of `[config.layer_rules]` (c.toml:31)": rules counted from 1.
fn by_rule(r: usize, rule: &KindRule) -> String {
    format!(
        "rule {} of `[config.layer_rules]` ({})",
        r + 1,
        rule.origin()
    )
}
