//! Evaluation: the circuit's `[config]` map evaluated against the config's tree into one
//! checkpoint table, [`Imported`] ([`import`]): the layer count, the interval check, the layer
//! kinds (`kinds`), every dim with its fallback, the checkpoint's name and `hf`, and where each
//! figure came from.
//!
//! Invariants:
//! - Every error names the config key at fault and is located in the config; all errors of one
//!   import are reported together, in the config's order whatever order the circuit reads its
//!   keys in.
//! - A layer count past the loader's [`MAX_LAYERS`] is refused before any per-layer work.
//! - Fallbacks may read each other's results: they are evaluated until nothing more resolves,
//!   each at most once per round, so the work is bounded by the square of the dims.

use crate::load::circuit::config_expr::ConfigExpr;
use crate::load::circuit::config_map::{ConfigDim, DimValue, Fallback};
use crate::load::text::diag::{Diagnostic, Diagnostics, Source};
use crate::load::text::limits::MAX_LAYERS;
use crate::load::{
    Circuit, circuit::LayerRule, circuit::config_map::ConfigMap, names::is_snake_identifier,
};
use jsonc_parser::ast::Value;

use super::figure::{Figure, Whole};
use super::json::{Depth, Found, Reader, parse, span, truthy};
use super::table::{Imported, Origin, Origins};

/// What the caller may set instead of reading it from the config.
#[derive(Debug, Clone, Copy, Default)]
pub struct ImportOptions<'a> {
    /// The checkpoint's name; default: the last segment of the config's `_name_or_path`,
    /// else the config file's stem, in lower snake case.
    pub name: Option<&'a str>,
    /// The Hugging Face id written as `hf`; default: `_name_or_path` when it reads
    /// `owner/name`, else none.
    pub hf: Option<&'a str>,
}

/// Reads the checkpoint that `config` (a config.json's text, named as the user gave it)
/// describes, through `circuit`'s `[config]`. `stem` is the config file's stem, the name of
/// last resort.
///
/// # Errors
/// A circuit without `[config]`; malformed JSON; and, each naming the config key and located
/// in the config, a key that is missing or of the wrong type, a layer list or pattern whose
/// length is not the layer count, an entry the map does not know, an interval or layer kind
/// that contradicts the layout; a name that is not a valid checkpoint name.
pub fn import(
    circuit: &Circuit,
    config: &Source,
    stem: &str,
    options: ImportOptions<'_>,
) -> Result<Imported, Diagnostics> {
    let Some(map) = circuit.config() else {
        return Err(Diagnostic::error(format!(
            "circuit `{}` has no `[config]` table",
            circuit.path()
        ))
        .in_file(circuit.path())
        .help("add `[config]` (schema 2) saying which config.json key gives each figure; see docs/circuit-schema.md")
        .into());
    };
    let root = parse(config)?;
    let mut reader = Reader {
        config,
        root: &root,
        errors: Vec::new(),
    };
    reader.unique_keys(&root);
    let imported = reader.checkpoint(circuit, map, stem, options);
    // In the config's order, whatever order the circuit reads its keys in.
    reader.errors.sort_by_key(|(at, _)| *at);
    match imported {
        Some(imported) if reader.errors.is_empty() => Ok(imported),
        _ => Err(reader.errors.into_iter().map(|(_, d)| d).collect()),
    }
}

/// A figure as read: its value, the config keys it needs that are absent or `null` (not yet
/// reported: a fallback may cover them), or refused (reported).
enum Read {
    Value(u64),
    Absent(Vec<String>),
    Refused,
}

impl Reader<'_> {
    /// The whole checkpoint.
    fn checkpoint(
        &mut self,
        circuit: &Circuit,
        map: &ConfigMap,
        stem: &str,
        options: ImportOptions<'_>,
    ) -> Option<Imported> {
        let depth = self.layers(map);
        let interval = self.interval(circuit, map);
        let kinds = depth
            .as_ref()
            .and_then(|depth| self.kinds(circuit, map, depth));
        let dims = self.dims(map);
        let name = self.name(stem, options.name);
        let (hf, hf_origin) = match (options.hf, self.hf()) {
            (Some(given), _) => (
                Some(given.to_owned()),
                Origin::Given("`--hf` (`ImportOptions::hf`)"),
            ),
            (None, Some(read)) => (Some(read), self.name_or_path_origin()),
            (None, None) => (None, Origin::File("no `hf`")),
        };
        interval?;
        let read_at = map
            .dims()
            .iter()
            .filter_map(|dim| match self.find(dim.key()) {
                Found::Value(Value::NullKeyword(_)) | Found::Missing(_) => None,
                Found::Value(value) => Some((dim.dim().to_owned(), span(value).start)),
            })
            .collect();
        let dims_at = map
            .dims()
            .iter()
            .map(|dim| (dim.dim().to_owned(), self.missing_span(dim.key())))
            .collect();
        let (name, name_origin) = name?;
        let depth = depth?;
        let (kinds, kinds_at) = kinds?;
        Some(Imported {
            name,
            hf,
            layers: depth.layers,
            kinds,
            dims: dims?,
            read_at,
            origins: Origins {
                name: name_origin,
                hf: hf_origin,
                layers: depth.at,
                kinds: kinds_at,
                dims: dims_at,
            },
        })
    }

    /// The layer count: an integer from 1 to the loader's [`MAX_LAYERS`].
    fn layers(&mut self, map: &ConfigMap) -> Option<Depth> {
        let key = map.layers();
        let value = self.require(key, "`[config] layers` names the key of the layer count")?;
        let n = self.integer(key, value)?;
        if n == 0 {
            self.report(
                span(value),
                Diagnostic::error(format!(
                    "config key `{key}` is 0: a model has at least one layer"
                ))
                .label("zero layers"),
            );
            return None;
        }
        if n > MAX_LAYERS {
            self.report(
                span(value),
                Diagnostic::error(format!(
                    "config key `{key}` is {n}, past the loader's limit of {MAX_LAYERS} layers"
                ))
                .label("too many layers")
                .help(format!(
                    "a checkpoint has 1 to {MAX_LAYERS} layers: see \"Limits\" in docs/circuit-schema.md"
                )),
            );
            return None;
        }
        Some(Depth {
            layers: n,
            key: key.to_owned(),
            at: span(value),
        })
    }

    /// The interval check: `Some(())` when there is none or it holds.
    fn interval(&mut self, circuit: &Circuit, map: &ConfigMap) -> Option<()> {
        let Some(key) = map.interval() else {
            return Some(());
        };
        let value = self.require(
            key,
            "`[config] interval` names the key of the layer interval",
        )?;
        let n = self.integer(key, value)?;
        let (expected, what) = match circuit.layout().rule() {
            LayerRule::Interval { period } => (*period, "the layout's `period`"),
            LayerRule::Pattern {
                pattern: Some(p), ..
            } => (
                p.chars().count() as u64,
                "the length of the layout's `pattern`",
            ),
            _ => return Some(()),
        };
        if n == expected {
            return Some(());
        }
        self.report(
            span(value),
            Diagnostic::error(format!(
                "config key `{key}` is {n}, but {what} is {expected}"
            ))
            .label(format!("expected {expected}"))
            .help("this config describes another layout than the circuit's"),
        );
        None
    }

    /// Every declared dim: its value read from the config, or its fallback.
    fn dims(&mut self, map: &ConfigMap) -> Option<Vec<(String, u64)>> {
        let mut values: Vec<(String, Option<u64>)> = Vec::with_capacity(map.dims().len());
        let mut pending: Vec<usize> = Vec::new();
        let mut valid = true;
        for (i, dim) in map.dims().iter().enumerate() {
            let value = match self.dim_value(dim) {
                Read::Value(n) => Some(n),
                Read::Absent(_) if dim.fallback().is_some() => {
                    pending.push(i);
                    None
                }
                Read::Absent(keys) => {
                    let help = format!(
                        "`[config.dims]` reads `{}` from it; if configs may omit it, give a fallback: `{} = {{ key = \"{}\", or = \"<expression>\" }}`",
                        dim.dim(),
                        dim.dim(),
                        dim.value_text(),
                    );
                    self.require_all(&keys, &help);
                    valid = false;
                    None
                }
                Read::Refused => {
                    valid = false;
                    None
                }
            };
            values.push((dim.dim().to_owned(), value));
        }
        // Fallbacks may read each other's results: evaluate until nothing more resolves.
        while !pending.is_empty() {
            let before = pending.len();
            let mut still = Vec::new();
            for &i in &pending {
                let dim = &map.dims()[i];
                let fallback = dim.fallback()?;
                match self.fallback(dim, fallback, &values) {
                    Read::Value(v) => values[i].1 = Some(v),
                    Read::Absent(_) => still.push(i),
                    Read::Refused => valid = false,
                }
            }
            pending = still;
            // A fallback that reads a dim refused above says nothing more.
            if pending.len() == before && !valid {
                return None;
            }
            if pending.len() == before {
                for &i in &pending {
                    let dim = &map.dims()[i];
                    let at = self.missing_span(dim.key());
                    let text = dim.fallback().map_or("", Fallback::text);
                    self.report(
                        at,
                        Diagnostic::error(format!(
                            "config key `{}` is absent and its fallback `{text}` reads a dim the config does not give either",
                            dim.key()
                        ))
                        .label("absent or null"),
                    );
                }
                return None;
            }
        }
        if !valid {
            return None;
        }
        values.into_iter().map(|(d, v)| Some((d, v?))).collect()
    }

    /// One dim's value as the config gives it (errors reported, but not an absent key's: the
    /// caller knows whether a fallback covers it).
    fn dim_value(&mut self, dim: &ConfigDim) -> Read {
        match dim.value() {
            DimValue::Key(key) => match self.find(key) {
                Found::Value(Value::NullKeyword(_)) | Found::Missing(_) => {
                    Read::Absent(vec![key.clone()])
                }
                Found::Value(v) => self.integer(key, v).map_or(Read::Refused, Read::Value),
            },
            DimValue::Expr(expr) => self.dim_figure(dim.dim(), expr, &|_| None),
            DimValue::If {
                key,
                absent,
                then,
                otherwise,
            } => {
                let holds = match self.find(key) {
                    Found::Value(Value::NullKeyword(_)) | Found::Missing(_) => *absent,
                    Found::Value(v) => truthy(v),
                };
                let chosen = if holds { then } else { otherwise };
                match self.dim_figure(dim.dim(), chosen, &|_| None) {
                    Read::Absent(keys) => {
                        let help = format!(
                            "`[config.dims] {}` reads it when `{key}` is {holds}",
                            dim.dim()
                        );
                        self.require_all(&keys, &help);
                        Read::Refused
                    }
                    read => read,
                }
            }
        }
    }

    /// A dim's value computed by `expr`: a whole number from 0 to `u64::MAX`.
    fn dim_figure(
        &mut self,
        dim: &str,
        expr: &ConfigExpr,
        dim_of: &dyn Fn(&str) -> Option<u64>,
    ) -> Read {
        let what = format!("`[config.dims] {dim}`");
        match self.figure(&what, expr, dim_of, Whole::Unsigned) {
            Figure::Value(v, _) => u64::try_from(v).map_or(Read::Refused, Read::Value),
            Figure::Absent(keys) => Read::Absent(keys),
            Figure::Refused => Read::Refused,
        }
    }

    /// A fallback's value: `Absent` while a dim it reads is still unresolved.
    fn fallback(
        &mut self,
        dim: &ConfigDim,
        fallback: &Fallback,
        values: &[(String, Option<u64>)],
    ) -> Read {
        let lookup = |name: &str| values.iter().find(|(d, _)| d == name).map(|(_, v)| *v);
        match fallback {
            Fallback::Shape(text, shape) => {
                let resolved = |name: &str| lookup(name).flatten();
                if shape.dims().iter().any(|r| resolved(&r.name).is_none()) {
                    return Read::Absent(Vec::new());
                }
                match shape.eval(resolved) {
                    Ok(v) => Read::Value(v),
                    Err(error) => {
                        let key = dim.key();
                        let at = self.missing_span(key);
                        self.report(
                            at,
                            Diagnostic::error(format!(
                                "config key `{key}` is absent and its fallback `{text}` fails: {error}"
                            ))
                            .label("absent or null"),
                        );
                        Read::Refused
                    }
                }
            }
            Fallback::Expr(expr) => {
                // A declared dim not yet resolved waits for the next round.
                if expr
                    .names()
                    .iter()
                    .any(|name| lookup(&name.path) == Some(None))
                {
                    return Read::Absent(Vec::new());
                }
                match self.dim_figure(dim.dim(), expr, &|name| lookup(name).flatten()) {
                    Read::Absent(keys) => {
                        let help = format!(
                            "the fallback of `[config.dims] {}` reads it: a config key, as it names no declared dim",
                            dim.dim()
                        );
                        self.require_all(&keys, &help);
                        Read::Refused
                    }
                    read => read,
                }
            }
        }
    }

    /// `_name_or_path` when it is a string.
    fn name_or_path(&self) -> Option<String> {
        match self.find("_name_or_path") {
            Found::Value(Value::StringLit(s)) if !s.value.is_empty() => Some(s.value.to_string()),
            _ => None,
        }
    }

    /// The Hugging Face id: `_name_or_path` when it reads `owner/name`.
    fn hf(&self) -> Option<String> {
        let path = self.name_or_path()?;
        let mut parts = path.split('/');
        let (Some(owner), Some(name), None) = (parts.next(), parts.next(), parts.next()) else {
            return None;
        };
        let ok = |s: &str| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        };
        (ok(owner) && ok(name)).then_some(path)
    }

    /// The checkpoint's name and where it came from: as given, else from `_name_or_path` or
    /// the file stem.
    fn name(&mut self, stem: &str, given: Option<&str>) -> Option<(String, Origin)> {
        let read = self
            .name_or_path()
            .and_then(|p| p.rsplit('/').next().map(str::to_owned))
            .filter(|s| !s.is_empty());
        let (name, origin) = match (given, read) {
            (Some(name), _) => (
                name.to_owned(),
                Origin::Given("`--name` (`ImportOptions::name`)"),
            ),
            (None, Some(read)) => (snake_case(&read), self.name_or_path_origin()),
            (None, None) => (
                snake_case(stem),
                Origin::File("the name is the config file's stem"),
            ),
        };
        if is_snake_identifier(&name) {
            return Some((name, origin));
        }
        let d = Diagnostic::error(format!("`{name}` is not a valid checkpoint name")).help(
            "a checkpoint name is lower snake case (`[a-z][a-z0-9_]*`): give one with `--name`",
        );
        match origin {
            Origin::Config(at) => self.report(at, d.label("the name is read from here")),
            Origin::Given(by) => self.errors.push((0, d.note(format!("given by {by}")))),
            Origin::File(what) => self
                .errors
                .push((0, d.in_file(self.config.name()).note(what))),
        }
        None
    }

    /// `_name_or_path`'s value, where a name or an `hf` read from it came from.
    fn name_or_path_origin(&self) -> Origin {
        Origin::Config(self.missing_span("_name_or_path"))
    }
}

/// `Qwen3.5-27B` -> `qwen3_5_27b`: ASCII letters and digits kept (lowercased), every other run
/// of characters one `_`, none at either end; a leading digit gets an `m` (a name starts with a
/// letter).
fn snake_case(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('_') {
            out.push('_');
        }
    }
    while out.ends_with('_') {
        out.pop();
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, 'm');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::snake_case;

    #[test]
    fn names_from_repository_names() {
        assert_eq!(snake_case("Qwen3.5-27B"), "qwen3_5_27b");
        assert_eq!(snake_case("gpt-oss-120b"), "gpt_oss_120b");
        assert_eq!(snake_case("--Mistral-7B-v0.1--"), "mistral_7b_v0_1");
        assert_eq!(snake_case("3b"), "m3b");
        assert_eq!(snake_case("é"), "");
    }
}
