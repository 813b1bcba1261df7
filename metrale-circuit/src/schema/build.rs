//! The generator: a [`Document`] of doc lines in, its JSON Schema (draft 2020-12) out, with
//! every gap between the doc lines and the loader's key tables.
//!
//! Owner: metrale-circuit (feature `load`).
//! Invariants:
//! - Each table's `properties` are its loader key tables' keys, in their order, and nothing
//!   else (`additionalProperties: false`: the loader refuses any other key). A key without a
//!   doc line is still a property (so the schema never refuses what the loader reads) and is a
//!   gap, as is a doc line naming no loader key, a key documented twice, and a condition or
//!   rule naming a key or spelling its table does not have.
//! - A condition on the key's own table is an `if`/`then` of that table; one on the file's top
//!   level (`[layout] kind` deciding a checkpoint's keys) and each schema version's limits are
//!   `if`/`then`s of the top level, reaching the key through `properties`, `items` and
//!   `additionalProperties`. Conditions with one `if` share one `then`, merged where their
//!   keywords allow (an `allOf` otherwise), so each condition is reported in one place.
//! - One misspelled key is one error, the `additionalProperties` naming it: what a table
//!   requires (its `required` keys, its conditions and rules, and the conditions of the top
//!   level reaching it) is asked only when its keys are all known (`propertyNames`), and a
//!   condition testing a table holds only then; a value that is a table or a scalar is told
//!   apart by type (`if`/`then`/`else`), not by an `anyOf` that would hide the table's error.
//!   Every verdict is unchanged: a file with an unknown key is refused either way. Only
//!   keywords draft 7 has too, so an editor's older validator reads the same schema.
//! - Generation is a pure function of static data: the same text every run, and no panic.

use super::json::Json;
use super::spec::{At, Document, How, Is, Key, Rule, Table, Test, Then, Under, Value, When};
use crate::load::text::limits::MAX_NAME_BYTES;
use crate::load::text::walk::RUST_KEYWORDS;
use crate::model::StateDtype;

/// The dialect of the generated schemas.
const DRAFT: &str = "https://json-schema.org/draft/2020-12/schema";

/// The description of a key the loader reads that has no doc line.
const UNDOCUMENTED: &str = "Undocumented: the loader reads this key but its doc line is \
                            missing (metrale-circuit/src/load/json_schema).";

/// A lower snake-case name (`is_snake_identifier`).
const SNAKE: &str = "^[a-z][a-z0-9_]*$";

/// A layer kind: `camel_case` of it is an ASCII type name (`names::is_type_name`): an ASCII
/// letter first once leading `_` are dropped, then ASCII letters, digits and `_`.
const LAYER_KIND: &str = "^_*[A-Za-z][A-Za-z0-9_]*$";

/// The layer kinds `camel_case` turns into `Self`, the one keyword a type name could be.
const SELF_KIND: &str = "^_*[Ss]elf_*$";

/// A dotted `config.json` key path: non-empty segments joined by `.`.
const KEY_PATH: &str = "^[^.]+(\\.[^.]+)*$";

/// A key path with at most one projection over a list, `[*]`, never first and followed by
/// the end or by `.` (`load::config`'s `projection`).
const KEY_PROJECTION: &str =
    "^(?!\\[\\*\\])(?!.*\\[\\*\\].*\\[\\*\\])(?!.*\\[\\*\\][^.])[^.]+(\\.[^.]+)*$";

/// A key path without a projection (before schema 4).
const KEY_PATH_UNPROJECTED: &str = "^(?!.*\\[\\*\\])[^.]+(\\.[^.]+)*$";

/// A key path where a config expression could stand but the schema has none (schemas 2 and
/// 3): no whitespace and none of an expression's operators, as the loader refuses them there.
const KEY_PATH_ALONE: &str = "^[^.\\s+*/%(),]+(\\.[^.\\s+*/%(),]+)*$";

/// A state of a block, `<block>.<state>` (a reader's `shares`).
const STATE_REF: &str = "^[a-z][a-z0-9_]*\\.[a-z][a-z0-9_]*$";

/// The grammar of a shape (`load::shape`), as an ECMA-262 pattern: axes joined by ` x `
/// (whitespace around it, since letters, digits and `_` written together are one token), an
/// axis terms joined by `+` (and `-` when `minus`), a term factors joined by `*`, a factor a
/// literal > 0, a dim name (not `x`), or a name divided by either. Whitespace is `\s`, which
/// may differ from Rust's `char::is_whitespace` on rare code points; the term limit is not
/// expressed.
pub(super) fn expression(minus: bool, axes: bool) -> String {
    grammar(minus, axes, POSITIVE_LITERAL)
}

/// The grammar of an index (`Shape::parse_index`): one axis, whose factors may be the literal
/// 0 (a divisor still may not).
pub(super) fn index(minus: bool) -> String {
    grammar(minus, false, "[0-9]+")
}

/// A literal > 0.
const POSITIVE_LITERAL: &str = "0*[1-9][0-9]*";

/// The expression grammar whose literal factors match `literal`.
fn grammar(minus: bool, axes: bool, literal: &str) -> String {
    const NAME: &str = "(?:[a-wyz][a-z0-9_]*|x[a-z0-9_]+)";
    let factor = format!("(?:{literal}|{NAME}(?:\\s*/\\s*(?:{POSITIVE_LITERAL}|{NAME}))?)");
    let term = format!("{factor}(?:\\s*\\*\\s*{factor})*");
    let sign = if minus { "[-+]" } else { "\\+" };
    let sum = format!("{term}(?:\\s*{sign}\\s*{term})*");
    if axes {
        format!("^\\s*{sum}(?:\\s+x\\s+{sum})*\\s*$")
    } else {
        format!("^\\s*{sum}\\s*$")
    }
}

/// A step from the top level of a file down to a value.
#[derive(Debug, Clone, Copy)]
enum Step {
    /// The value of a key of a table.
    Key(&'static str),
    /// Every entry of a map (`[block.<name>]`).
    Entry,
    /// Every item of an array.
    Item,
}

/// `inner` applied to the value at `path` from where a schema applies.
fn wrap(path: &[Step], inner: Json) -> Json {
    path.iter().rev().fold(inner, |acc, step| match step {
        Step::Key(key) => Json::obj([("properties", Json::Obj(vec![((*key).to_owned(), acc)]))]),
        Step::Entry => Json::obj([("additionalProperties", acc)]),
        Step::Item => Json::obj([("items", acc)]),
    })
}

/// `path` with `step` after it.
fn then_step(path: &[Step], step: Step) -> Vec<Step> {
    let mut out = path.to_vec();
    out.push(step);
    out
}

/// Holds of an object whose keys are all `table`'s (the loader's key tables): what a table
/// requires of its keys is asked only then, so a misspelled key is one error (the
/// `additionalProperties` naming it), not that plus every requirement the misspelling left
/// unmet. A file with an unknown key is refused either way: guarding changes no verdict.
fn known_keys(table: &Table) -> Json {
    Json::obj([(
        "propertyNames",
        Json::obj([(
            "enum",
            Json::strs(table.keys.iter().copied().flatten().copied()),
        )]),
    )])
}

/// `then` asked only of an object whose keys are all `table`'s ([`known_keys`]).
fn when_known(table: &Table, then: Json) -> Json {
    if_then(known_keys(table), then)
}

/// An `if`/`then`.
fn if_then(condition: Json, then: Json) -> Json {
    Json::obj([("if", condition), ("then", then)])
}

/// Adds `if condition then then` to `all_of`, into the `then` of an entry with the same `if`
/// when there is one (one condition, one place where an editor reports what it implies).
fn push_if_then(all_of: &mut Vec<Json>, condition: Json, then: Json) {
    for entry in all_of.iter_mut() {
        let Json::Obj(entries) = entry else {
            continue;
        };
        if let [(i, same), (t, before)] = entries.as_mut_slice()
            && i == "if"
            && t == "then"
            && *same == condition
        {
            let old = std::mem::replace(before, Json::Bool(true));
            *before = combine(vec![old, then]);
            return;
        }
    }
    all_of.push(if_then(condition, then));
}

/// One schema that every one of `schemas` holds: merged where they constrain different keys
/// (`required` lists, `properties` and what nests below them), an `allOf` of the rest.
fn combine(schemas: Vec<Json>) -> Json {
    let mut schemas = schemas.into_iter();
    let Some(mut merged) = schemas.next() else {
        return Json::Bool(true);
    };
    let mut rest = Vec::new();
    for schema in schemas {
        match merge(&merged, &schema) {
            Some(both) => merged = both,
            None => rest.push(schema),
        }
    }
    if rest.is_empty() {
        return merged;
    }
    rest.insert(0, merged);
    Json::obj([("allOf", Json::Arr(rest))])
}

/// `a` and `b` as one schema, when each keyword they share merges: `required` (the union),
/// `properties` (by name, each merged), `additionalProperties` and `items` (merged); `None`
/// when another keyword is in both, or either is not an object, or one has `properties` and
/// the other `additionalProperties` (which then would no longer apply to those properties).
fn merge(a: &Json, b: &Json) -> Option<Json> {
    let (Json::Obj(a), Json::Obj(b)) = (a, b) else {
        return None;
    };
    let has = |o: &[(String, Json)], key: &str| o.iter().any(|(k, _)| k == key);
    if (has(a, "properties") && has(b, "additionalProperties"))
        || (has(a, "additionalProperties") && has(b, "properties"))
    {
        return None;
    }
    let mut out = a.clone();
    for (key, value) in b {
        let Some((_, slot)) = out.iter_mut().find(|(k, _)| k == key) else {
            out.push((key.clone(), value.clone()));
            continue;
        };
        *slot = match (key.as_str(), &*slot, value) {
            ("required", Json::Arr(x), Json::Arr(y)) => {
                let mut union = x.clone();
                union.extend(y.iter().filter(|v| !x.contains(v)).cloned());
                Json::Arr(union)
            }
            ("properties", Json::Obj(x), Json::Obj(y)) => {
                let mut names = x.clone();
                for (name, schema) in y {
                    match names.iter_mut().find(|(n, _)| n == name) {
                        Some((_, there)) => *there = merge(there, schema)?,
                        None => names.push((name.clone(), schema.clone())),
                    }
                }
                Json::Obj(names)
            }
            ("additionalProperties" | "items", x, y) => merge(x, y)?,
            _ => return None,
        };
    }
    Some(Json::Obj(out))
}

/// A table's schema, and its keys the top level requires (kept apart so the top level of a
/// document with block libraries can require them of circuits only).
struct Built {
    schema: Json,
    required: Vec<&'static str>,
}

/// What a generation makes: the schema, and every gap found on the way.
pub(super) struct Generated {
    /// The JSON Schema.
    pub schema: Json,
    /// Each gap, one sentence naming the table and the key.
    pub gaps: Vec<String>,
}

/// Generates `doc`'s schema.
pub(super) fn generate(doc: &Document) -> Generated {
    let mut generator = Generator {
        doc,
        top: Vec::new(),
        gaps: Vec::new(),
    };
    let built = generator.table(doc.root, &[]);
    let mut schema = Json::obj([
        ("$schema", Json::str(DRAFT)),
        ("title", Json::str(doc.title)),
        ("description", Json::str(doc.description)),
    ]);
    let Json::Obj(entries) = built.schema else {
        return Generated {
            schema,
            gaps: generator.gaps,
        };
    };
    let mut all_of = Vec::new();
    for (key, value) in entries {
        match (key.as_str(), value) {
            ("allOf", Json::Arr(items)) => all_of.extend(items),
            (_, value) => schema = schema.with(&key, value),
        }
    }
    // What the top level's own keys require is asked only when they are all known.
    let mut asked: Vec<Json> = std::mem::take(&mut all_of);
    if !built.required.is_empty() {
        let required = Json::strs(built.required.iter().copied());
        match doc.library {
            // A file with a key a block library cannot hold is a circuit.
            Some(library) => asked.push(if_then(
                Json::obj([(
                    "not",
                    Json::obj([(
                        "propertyNames",
                        Json::obj([("enum", Json::strs(library.iter().copied()))]),
                    )]),
                )]),
                Json::obj([("required", required)]),
            )),
            None => asked.push(Json::obj([("required", required)])),
        }
    }
    if !asked.is_empty() {
        all_of.push(when_known(doc.root, combine(asked)));
    }
    all_of.append(&mut generator.top);
    generator.versions(&mut all_of);
    if !all_of.is_empty() {
        schema = schema.with("allOf", Json::Arr(all_of));
    }
    Generated {
        schema,
        gaps: generator.gaps,
    }
}

/// One generation under way.
struct Generator<'d> {
    doc: &'d Document,
    /// The top level's `if`/`then`s found while walking the tables below it.
    top: Vec<Json>,
    /// The gaps found.
    gaps: Vec<String>,
}

impl Generator<'_> {
    /// A table at `path`: its keys (the loader's), each with its doc line, its conditions and
    /// rules.
    fn table(&mut self, table: &'static Table, path: &[Step]) -> Built {
        let mut properties = Vec::new();
        let mut required = Vec::new();
        let mut all_of = Vec::new();
        for &name in table.keys.iter().copied().flatten() {
            let mut docs = table.docs.iter().filter(|k| k.name == name);
            let Some(key) = docs.next() else {
                self.gap(format!(
                    "{}: key `{name}` (in the loader's table) has no doc line",
                    table.name
                ));
                properties.push((
                    name.to_owned(),
                    Json::obj([("description", Json::str(UNDOCUMENTED))]),
                ));
                continue;
            };
            if docs.next().is_some() {
                self.gap(format!(
                    "{}: key `{name}` has more than one doc line",
                    table.name
                ));
            }
            let here = then_step(path, Step::Key(name));
            properties.push((name.to_owned(), self.key(table, key, &here)));
            if key.required {
                required.push(name);
            }
            for under in key.under {
                self.under(table, key, under, path, &mut all_of);
            }
        }
        for key in table.docs {
            if !table.keys.iter().any(|keys| keys.contains(&key.name)) {
                self.gap(format!(
                    "{}: the doc line of `{}` names no key of the loader's table",
                    table.name, key.name
                ));
            }
        }
        for rule in table.rules {
            self.rule(table, rule, path, &mut all_of);
        }
        let mut schema = Json::obj([
            ("type", Json::str("object")),
            ("properties", Json::Obj(properties)),
            ("additionalProperties", Json::Bool(false)),
        ]);
        if !path.is_empty() {
            if !required.is_empty() {
                all_of.insert(
                    0,
                    Json::obj([("required", Json::strs(required.iter().copied()))]),
                );
            }
            required.clear();
        }
        if !all_of.is_empty() {
            // The top level's are guarded where they are gathered (`generate`).
            let asked = if path.is_empty() {
                Json::Arr(all_of)
            } else {
                Json::Arr(vec![when_known(table, combine(all_of))])
            };
            schema = schema.with("allOf", asked);
        }
        Built { schema, required }
    }

    /// One key's schema: its value's, with its doc line as the description.
    fn key(&mut self, table: &Table, key: &Key, here: &[Step]) -> Json {
        let spellings = spellings(&key.value);
        for (spelling, _) in key.newer {
            if !spellings.is_some_and(|s| s.contains(spelling)) {
                self.gap(format!(
                    "{}: key `{}` says `{spelling}` is newer, but it is not one of its spellings",
                    table.name, key.name
                ));
            }
        }
        let doc = match key.since {
            0 | 1 => key.doc.to_owned(),
            since => format!("{} Since schema {since}.", key.doc),
        };
        self.value(&key.value, here)
            .first("description", Json::Str(doc))
    }

    /// What holds of `key` under a condition: an `if`/`then` of its table, or of the top
    /// level.
    fn under(
        &mut self,
        table: &'static Table,
        key: &Key,
        under: &Under,
        path: &[Step],
        all_of: &mut Vec<Json>,
    ) {
        let here = [Step::Key(key.name)];
        let then = match &under.then {
            Then::Required => Json::obj([("required", Json::strs([key.name]))]),
            Then::Forbidden => wrap(&here, Json::Bool(false)),
            Then::Also(value) => {
                let full = then_step(path, Step::Key(key.name));
                wrap(&here, self.value(value, &full))
            }
        };
        self.conditional(table, &under.when, then, path, all_of);
    }

    /// `then` under `when`: in the table's `allOf`, or the top level's, reaching the table.
    fn conditional(
        &mut self,
        table: &'static Table,
        when: &When,
        then: Json,
        path: &[Step],
        all_of: &mut Vec<Json>,
    ) {
        let condition = self.when(table, when);
        match when.at {
            At::Table => push_if_then(all_of, condition, then),
            At::Root => push_if_then(
                &mut self.top,
                condition,
                wrap(path, when_known(table, then)),
            ),
        }
    }

    /// A condition's `if`: every test.
    fn when(&mut self, table: &'static Table, when: &When) -> Json {
        let start = match when.at {
            At::Table => table,
            At::Root => self.doc.root,
        };
        let mut tests: Vec<Json> = when
            .tests
            .iter()
            .map(|test| self.test(start, test))
            .collect();
        if tests.len() == 1 {
            tests.pop().unwrap_or(Json::Bool(true))
        } else {
            Json::obj([("allOf", Json::Arr(tests))])
        }
    }

    /// One test, checked against the tables it walks (`start` and below).
    fn test(&mut self, start: &'static Table, test: &Test) -> Json {
        self.check_test(start, test);
        let Some((last, parents)) = test.path.split_last() else {
            return Json::Bool(true);
        };
        // The table holding the tested key: a test of it holds only when its keys are all
        // known, so a misspelling there implies nothing elsewhere.
        let mut tested: &Table = start;
        for parent in parents {
            if let Some(Value::Table(inner)) = doc_of(tested, parent).map(|k| &k.value) {
                tested = inner;
            }
        }
        let leaf = match &test.is {
            Is::OneOf(values) => Some(Json::strs(values.iter().copied())),
            Is::Where(spellings, holds) => {
                Some(Json::strs(spellings.iter().copied().filter(|s| holds(s))))
            }
            Is::Present | Is::Absent => None,
        };
        let present = !matches!(test.is, Is::Absent);
        let mut schema = match leaf {
            Some(values) => Json::obj([
                (
                    "properties",
                    Json::Obj(vec![((*last).to_owned(), Json::obj([("enum", values)]))]),
                ),
                ("required", Json::strs([*last])),
            ]),
            None if present => Json::obj([("required", Json::strs([*last]))]),
            None => Json::obj([("not", Json::obj([("required", Json::strs([*last]))]))]),
        };
        if let Json::Obj(entries) = known_keys(tested) {
            for (keyword, guard) in entries {
                schema = schema.with(&keyword, guard);
            }
        }
        for parent in parents.iter().rev() {
            let inner = Json::obj([(
                "properties",
                Json::Obj(vec![((*parent).to_owned(), schema)]),
            )]);
            schema = if present {
                inner.with("required", Json::strs([*parent]))
            } else {
                inner
            };
        }
        schema
    }

    /// A test's path names keys of the tables it walks, and its spellings are the tested
    /// key's.
    fn check_test(&mut self, start: &'static Table, test: &Test) {
        let shown = test.path.join(".");
        let mut table = start;
        let Some((last, parents)) = test.path.split_last() else {
            self.gap(format!("{}: a condition tests no key", start.name));
            return;
        };
        for parent in parents {
            if let Some(Value::Table(inner)) = doc_of(table, parent).map(|k| &k.value) {
                table = inner;
            } else {
                self.gap(format!(
                    "{}: a condition on `{shown}` goes through `{parent}`, no table of it",
                    start.name
                ));
                return;
            }
        }
        let Some(key) = doc_of(table, last) else {
            self.gap(format!(
                "{}: a condition tests `{shown}`, no documented key",
                start.name
            ));
            return;
        };
        let known = spellings(&key.value);
        match (&test.is, known) {
            (Is::OneOf(values), Some(known)) => {
                for value in values.iter().filter(|v| !known.contains(v)) {
                    self.gap(format!(
                        "{}: a condition tests `{shown}` for `{value}`, not one of its spellings",
                        start.name
                    ));
                }
            }
            (Is::Where(spellings, _), Some(known)) if *spellings == known => {}
            // A format is a dtype among other things: a condition may test for the dtypes.
            (Is::OneOf(values), None)
                if matches!(key.value, Value::Format { .. })
                    && values.iter().all(|v| StateDtype::parse(v).is_some()) => {}
            (Is::OneOf(_) | Is::Where(..), _) => self.gap(format!(
                "{}: a condition tests the spellings of `{shown}`, which has other ones",
                start.name
            )),
            (Is::Present | Is::Absent, _) => {}
        }
    }

    /// A rule between keys of `table`.
    fn rule(&mut self, table: &'static Table, rule: &Rule, path: &[Step], all_of: &mut Vec<Json>) {
        match rule {
            Rule::Count { keys, how, when } => {
                for key in keys.iter().filter(|k| doc_of(table, k).is_none()) {
                    self.gap(format!(
                        "{}: a rule names `{key}`, no documented key",
                        table.name
                    ));
                }
                let count = count(keys, how);
                match when {
                    None => all_of.push(count),
                    Some(when) => self.conditional(table, when, count, path, all_of),
                }
            }
            Rule::Follows {
                key,
                on,
                spellings: of_on,
                map,
            } => {
                for name in [key, on] {
                    if doc_of(table, name).is_none() {
                        self.gap(format!(
                            "{}: a rule names `{name}`, no documented key",
                            table.name
                        ));
                    }
                }
                for spelling in *of_on {
                    let Some(value) = map(spelling) else {
                        continue;
                    };
                    let condition = Json::obj([
                        (
                            "properties",
                            Json::Obj(vec![(
                                (*on).to_owned(),
                                Json::obj([("const", Json::str(spelling))]),
                            )]),
                        ),
                        ("required", Json::strs([*on])),
                    ]);
                    let then = wrap(&[Step::Key(key)], Json::obj([("const", Json::str(value))]));
                    push_if_then(all_of, condition, then);
                }
            }
        }
    }

    /// A value's schema; `here` is where it is, for conditions of the tables inside it.
    fn value(&mut self, value: &Value, here: &[Step]) -> Json {
        match value {
            Value::List {
                item,
                min,
                max,
                unique,
            } => {
                let items = self.value(item, &then_step(here, Step::Item));
                let mut schema = Json::obj([("type", Json::str("array")), ("items", items)]);
                if *min > 0 {
                    schema = schema.with("minItems", Json::Int(*min));
                }
                if *max < u64::MAX {
                    schema = schema.with("maxItems", Json::Int(*max));
                }
                if *unique {
                    schema = schema.with("uniqueItems", Json::Bool(true));
                }
                schema
            }
            Value::Map {
                name,
                value,
                entry,
                min,
                max,
            } => {
                let names = self.value(name, here);
                let entries = self
                    .value(value, &then_step(here, Step::Entry))
                    .first("description", Json::str(entry));
                let mut schema = Json::obj([
                    ("type", Json::str("object")),
                    ("propertyNames", names),
                    ("additionalProperties", entries),
                ]);
                if *min > 0 {
                    schema = schema.with("minProperties", Json::Int(*min));
                }
                if *max < u64::MAX {
                    schema = schema.with("maxProperties", Json::Int(*max));
                }
                schema
            }
            Value::Names(name) => Json::obj([("propertyNames", self.value(name, here))]),
            Value::Table(table) => self.table(table, here).schema,
            Value::Either(values) => {
                // A table among values that are not: told apart by type, so a table's error
                // (a misspelled key) is reported as the table's, not as "none of these".
                let (tables, others): (Vec<&Value>, Vec<&Value>) =
                    values.iter().partition(|v| matches!(v, Value::Table(_)));
                let mut others: Vec<Json> = others.iter().map(|v| self.value(v, here)).collect();
                match tables.as_slice() {
                    [table] if !others.is_empty() => Json::obj([
                        ("if", Json::obj([("type", Json::str("object"))])),
                        ("then", self.value(table, here)),
                        (
                            "else",
                            if others.len() == 1 {
                                others.remove(0)
                            } else {
                                Json::obj([("anyOf", Json::Arr(others))])
                            },
                        ),
                    ]),
                    _ => Json::obj([(
                        "anyOf",
                        Json::Arr(values.iter().map(|v| self.value(v, here)).collect()),
                    )]),
                }
            }
            scalar => scalar_schema(scalar),
        }
    }

    /// Each schema version but the newest: what it does not have, refused when the file says
    /// it is written in it.
    fn versions(&mut self, all_of: &mut Vec<Json>) {
        let Some((key, versions)) = self.doc.versions else {
            return;
        };
        let newest = versions.iter().copied().max();
        for &version in versions {
            if Some(version) == newest {
                continue;
            }
            let mut limits = Vec::new();
            self.limits(self.doc.root, version, &mut Vec::new(), &mut limits);
            if limits.is_empty() {
                continue;
            }
            let condition = Json::obj([
                (
                    "properties",
                    Json::Obj(vec![(
                        key.to_owned(),
                        Json::obj([("const", Json::Int(version))]),
                    )]),
                ),
                ("required", Json::strs([key])),
            ]);
            push_if_then(all_of, condition, combine(limits));
        }
    }

    /// What schema `version` lacks in `table` (at `path`) and below: keys added later, their
    /// later spellings, subtraction in expressions.
    fn limits(&self, table: &Table, version: u64, path: &mut Vec<Step>, out: &mut Vec<Json>) {
        for key in table.docs {
            if !table.keys.iter().any(|keys| keys.contains(&key.name)) {
                continue;
            }
            path.push(Step::Key(key.name));
            if key.since > version {
                out.push(wrap(path, Json::Bool(false)));
            } else {
                let later: Vec<&str> = key
                    .newer
                    .iter()
                    .filter(|(_, since)| *since > version)
                    .map(|(spelling, _)| *spelling)
                    .collect();
                if !later.is_empty() {
                    out.push(wrap(
                        path,
                        Json::obj([("not", Json::obj([("enum", Json::strs(later))]))]),
                    ));
                }
                self.value_limits(&key.value, version, path, out);
            }
            path.pop();
        }
    }

    /// What schema `version` lacks in a value at `path`.
    fn value_limits(&self, value: &Value, version: u64, path: &mut Vec<Step>, out: &mut Vec<Json>) {
        match value {
            Value::Expr { axes } if version < self.doc.minus_since => out.push(wrap(
                path,
                Json::obj([("pattern", Json::Str(expression(false, *axes)))]),
            )),
            Value::Index if version < self.doc.minus_since => out.push(wrap(
                path,
                Json::obj([("pattern", Json::Str(index(false)))]),
            )),
            // Before config expressions, only what the older value's pattern accepts (a pattern
            // constrains strings alone, so a table beside it in a choice is untouched).
            Value::ConfigExpr { older } if version < self.doc.config_expr_since => {
                let pattern = match older {
                    Value::Expr { axes } => expression(version >= self.doc.minus_since, *axes),
                    Value::KeyPath => KEY_PATH_ALONE.to_owned(),
                    // No string before config expressions: a pattern nothing matches.
                    _ => "(?!)".to_owned(),
                };
                out.push(wrap(path, Json::obj([("pattern", Json::Str(pattern))])));
            }
            Value::KeyProjection if version < self.doc.config_expr_since => out.push(wrap(
                path,
                Json::obj([("pattern", Json::str(KEY_PATH_UNPROJECTED))]),
            )),
            Value::Table(table) => self.limits(table, version, path, out),
            Value::List { item, .. } => {
                path.push(Step::Item);
                self.value_limits(item, version, path, out);
                path.pop();
            }
            Value::Map { value, .. } => {
                path.push(Step::Entry);
                self.value_limits(value, version, path, out);
                path.pop();
            }
            Value::Either(values) => {
                for value in *values {
                    self.value_limits(value, version, path, out);
                }
            }
            _ => {}
        }
    }

    /// Records a gap.
    fn gap(&mut self, gap: String) {
        self.gaps.push(gap);
    }
}

/// The schema of a value holding no other value (a list, map, table or choice is
/// `Generator::value`'s).
fn scalar_schema(value: &Value) -> Json {
    let string = || Json::obj([("type", Json::str("string"))]);
    match value {
        Value::Bool => Json::obj([("type", Json::str("boolean"))]),
        Value::Count { min, max } => Json::obj([
            ("type", Json::str("integer")),
            ("minimum", Json::Int(*min)),
            ("maximum", Json::Int(*max)),
        ]),
        Value::Int => Json::obj([("type", Json::str("integer"))]),
        Value::Ints(values) => Json::obj([
            ("type", Json::str("integer")),
            (
                "enum",
                Json::Arr(values.iter().copied().map(Json::Int).collect()),
            ),
        ]),
        Value::Text => string(),
        Value::Chars { min, max } => {
            let mut schema = string();
            if *min > 0 {
                schema = schema.with("minLength", Json::Int(*min));
            }
            if *max < u64::MAX {
                schema = schema.with("maxLength", Json::Int(*max));
            }
            schema
        }
        Value::Snake => string().with("pattern", Json::str(SNAKE)),
        Value::Ident { not } => string()
            .with("pattern", Json::str(SNAKE))
            .with("maxLength", Json::count(MAX_NAME_BYTES))
            .with(
                "not",
                Json::obj([(
                    "enum",
                    Json::strs(RUST_KEYWORDS.iter().chain(*not).copied()),
                )]),
            ),
        Value::LayerKind => string()
            .with("pattern", Json::str(LAYER_KIND))
            .with("not", Json::obj([("pattern", Json::str(SELF_KIND))])),
        Value::Enum(spellings) => string().with("enum", Json::strs(spellings.iter().copied())),
        Value::Documented(spellings, doc) => string()
            .with("enum", Json::strs(spellings.iter().copied()))
            .with(
                "x-taplo",
                Json::obj([(
                    "docs",
                    Json::obj([("enumValues", Json::strs(spellings.iter().map(|s| doc(s))))]),
                )]),
            ),
        Value::Format { packings } => {
            let keys: Vec<String> = RUST_KEYWORDS.iter().map(|k| format!("{{{k}}}")).collect();
            let key = Json::obj([
                ("pattern", Json::str("^\\{[a-z][a-z0-9_]*\\}$")),
                ("maxLength", Json::count(MAX_NAME_BYTES.saturating_add(2))),
                (
                    "not",
                    Json::obj([("enum", Json::strs(keys.iter().map(String::as_str)))]),
                ),
            ]);
            let dtype = Json::obj([("enum", Json::strs(StateDtype::SPELLINGS))]);
            let mut either = vec![dtype, key];
            if *packings {
                either.push(scalar_schema(&Value::Ident { not: &[] }));
            }
            string().with("anyOf", Json::Arr(either))
        }
        Value::Expr { axes } => string().with("pattern", Json::Str(expression(true, *axes))),
        Value::Index => string().with("pattern", Json::Str(index(true))),
        Value::KeyPath => string().with("pattern", Json::str(KEY_PATH)),
        Value::KeyProjection => string().with("pattern", Json::str(KEY_PROJECTION)),
        Value::ConfigExpr { .. } => string().with("minLength", Json::Int(1)),
        Value::StateRef => string().with("pattern", Json::str(STATE_REF)),
        Value::Any
        | Value::List { .. }
        | Value::Map { .. }
        | Value::Names(_)
        | Value::Table(_)
        | Value::Either(_) => Json::Obj(Vec::new()),
    }
}

/// The doc line of key `name` of `table`, if the loader's table has the key.
fn doc_of<'t>(table: &'t Table, name: &str) -> Option<&'t Key> {
    if !table.keys.iter().any(|keys| keys.contains(&name)) {
        return None;
    }
    table.docs.iter().find(|k| k.name == name)
}

/// The spellings of an enum value.
fn spellings(value: &Value) -> Option<&'static [&'static str]> {
    match value {
        Value::Enum(spellings) | Value::Documented(spellings, _) => Some(spellings),
        _ => None,
    }
}

/// How many of `keys` an object may have.
fn count(keys: &[&str], how: &How) -> Json {
    let one = |key: &str| Json::obj([("required", Json::strs([key]))]);
    let each = || Json::Arr(keys.iter().map(|k| one(k)).collect());
    match how {
        How::AtMostOne => {
            let mut pairs = Vec::new();
            for (i, a) in keys.iter().enumerate() {
                for b in keys.iter().skip(i + 1) {
                    pairs.push(Json::obj([("required", Json::strs([*a, *b]))]));
                }
            }
            Json::obj([("not", Json::obj([("anyOf", Json::Arr(pairs))]))])
        }
        How::ExactlyOne => Json::obj([("oneOf", each())]),
        How::AtLeastOne => Json::obj([("anyOf", each())]),
        How::AllOrNone => Json::obj([(
            "anyOf",
            Json::Arr(vec![
                Json::obj([("required", Json::strs(keys.iter().copied()))]),
                Json::obj([("not", Json::obj([("anyOf", each())]))]),
            ]),
        )]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `{ "<key>": value }`.
    fn one(key: &str, value: Json) -> Json {
        Json::Obj(vec![(key.to_owned(), value)])
    }

    #[test]
    fn schemas_on_different_keys_merge_into_one() {
        let a = one("required", Json::strs(["a"])).with("properties", one("x", Json::Bool(false)));
        let b = one("required", Json::strs(["a", "b"]))
            .with("properties", one("y", one("pattern", Json::str("p"))));
        assert_eq!(
            combine(vec![a, b]),
            one("required", Json::strs(["a", "b"])).with(
                "properties",
                one("x", Json::Bool(false)).with("y", one("pattern", Json::str("p")))
            )
        );
    }

    #[test]
    fn schemas_on_one_keyword_stay_apart() {
        let (a, b) = (
            one("pattern", Json::str("a")),
            one("pattern", Json::str("b")),
        );
        assert_eq!(
            combine(vec![a.clone(), b.clone()]),
            one("allOf", Json::Arr(vec![a, b]))
        );
        // `additionalProperties` would stop applying to properties merged beside it.
        let props = one("properties", one("x", Json::Bool(false)));
        let rest = one("additionalProperties", Json::Bool(false));
        assert_eq!(merge(&props, &rest), None);
        assert_eq!(merge(&rest, &props), None);
        assert_eq!(merge(&Json::Bool(false), &props), None);
    }

    #[test]
    fn one_condition_has_one_then() {
        let mut all_of = Vec::new();
        let when = one("required", Json::strs(["k"]));
        push_if_then(
            &mut all_of,
            when.clone(),
            one("required", Json::strs(["a"])),
        );
        push_if_then(
            &mut all_of,
            when.clone(),
            one("required", Json::strs(["b"])),
        );
        push_if_then(
            &mut all_of,
            Json::Bool(true),
            one("required", Json::strs(["c"])),
        );
        assert_eq!(
            all_of,
            vec![
                if_then(when, one("required", Json::strs(["a", "b"]))),
                if_then(Json::Bool(true), one("required", Json::strs(["c"]))),
            ]
        );
    }

    #[test]
    fn a_path_reaches_through_tables_maps_and_lists() {
        let path = [
            Step::Key("block"),
            Step::Entry,
            Step::Key("state"),
            Step::Item,
        ];
        assert_eq!(
            wrap(&path, Json::Bool(false)),
            one(
                "properties",
                one(
                    "block",
                    one(
                        "additionalProperties",
                        one("properties", one("state", one("items", Json::Bool(false))))
                    )
                )
            )
        );
    }

    #[test]
    fn the_shape_grammar_without_minus_only_adds() {
        assert!(expression(true, true).contains("[-+]"));
        assert!(!expression(false, true).contains("[-+]"));
        assert!(expression(false, true).contains("\\s*\\+\\s*"));
        assert!(expression(true, true).contains("\\s+x\\s+"));
        assert!(!expression(true, false).contains("\\s+x\\s+"));
    }
}
