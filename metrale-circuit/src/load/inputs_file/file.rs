//! The inputs file: the plan inputs ([`StateInputs`]) an engine decides, written as TOML, read
//! into an owned [`InputsFile`] with every error located (`file:line:col`, carets, valid keys,
//! "did you mean").
//!
//! ```toml
//! slots = 9                                      # required: sequence slots, the dummy included
//! draft_kv_dtype = "bf16"                        # optional: the draft head's KV sides in this
//!                                                # dtype, not their format key's
//!
//! [formats]                                      # format key -> dtype or layout; keys a circuit
//! kv_cache_dtype = "fp8"                         # does not name are ignored, so one file serves
//!                                                # several
//!
//! [verify]                                       # optional; both keys required when present
//! h_steps = [4, 4, 4]                            # per verify slot (the dummy last)
//! conv_steps = 4
//!
//! [kv]                                           # optional; both keys required when present
//! blocks = 2048
//! block_size = 16
//!
//! [draft_kv]                                     # optional, like [kv], for the draft head
//! blocks = 256
//! block_size = 16
//!
//! [caches]                                       # optional; plain counts default to 0, an
//! prefix_snapshot_slots = 16                     # absent group gives its kinds no term
//! ring = { ring_slots = 4, seq_slots = 9 }       # every key of a group is required
//! carry = { slots = 9, table_rows = 9 }
//! verify_table_rows = 36
//! capture_rows = 4096
//! lookup = { sequences = 8, history_tokens = 8192 }
//! tree = { slots = 9, nodes = 16 }
//! drafts = { slots = 9, positions = 4 }
//! ```
//!
//! Owner: metrale-circuit.
//! Invariants:
//! - The keys are exactly the field names of [`StateInputs`] and its parts; any other key is an
//!   error, with the valid keys and the nearest spelling. `slots` is required: a forgotten
//!   `slots` would silently size every recurrent pool at zero. Other plain counts default to 0;
//!   an absent table or group is `None` (no term), as in [`StateInputs`].
//! - A count is a TOML integer in `0..=u64::MAX`; a `[formats]` key is a lower snake-case
//!   identifier and its value, like `draft_kv_dtype`'s, a dtype spelling
//!   ([`StateDtype::parse`]). `draft_kv_dtype` is not a count: a `[serving]` profile passes it
//!   through, as it does `[formats]`.
//! - Every error of a file is reported, in file order. A file that is not valid TOML reports its
//!   syntax errors only (what follows a syntax error would be guesswork).
//! - The walking is the circuit loader's ([`crate::load`]'s `Sink` and `Walk`: typed accessors,
//!   the unknown-key check, TOML syntax errors), so a bad inputs file gets the same located
//!   errors as a bad circuit.
//! - Nothing here panics on any text.

use std::ops::Range;
use std::path::Path;

use toml::de::DeTable;

use super::agree::{self, ServingCounts};
use crate::load::mixup;
use crate::load::text::diag::{Diagnostic, Diagnostics, Source, did_you_mean};
use crate::load::text::limits::MAX_RANKS;
use crate::load::text::read_source;
use crate::load::text::walk::{Sink, Table, Value, Walk, entries, field};
use crate::model::{
    CacheInputs, CarryInputs, DraftInputs, FormatChoice, KvInputs, LookupInputs, PoolPolicy,
    RingInputs, Section, StateDtype, StateInputs, TreeInputs, VerifyInputs, VllmPool, WindowInputs,
    is_snake_identifier,
};
use crate::serve::{Parallel, ServingProfile};

/// The keys of the file's top level (kept in `mixup`, which knows both files' keys).
pub(crate) use crate::load::mixup::INPUTS_KEYS as TOP_KEYS;
/// The keys of `[parallel]`.
pub(crate) const PARALLEL_KEYS: [&str; 3] = ["tp", "pp", "pp_layers"];
/// The keys of `[verify]`.
pub(crate) const VERIFY_KEYS: [&str; 2] = ["h_steps", "conv_steps"];
/// The keys of `[kv]` and `[draft_kv]`.
pub(crate) const KV_KEYS: [&str; 2] = ["blocks", "block_size"];
/// The keys of `[kv]` that bound a sliding-window side: all three, or none.
pub(crate) const WINDOW_KEYS: [&str; 3] = ["sequences", "chunk_tokens", "max_tokens"];
/// The keys of `[caches]`.
pub(crate) const CACHE_KEYS: [&str; 8] = [
    "prefix_snapshot_slots",
    "ring",
    "carry",
    "verify_table_rows",
    "capture_rows",
    "lookup",
    "tree",
    "drafts",
];
/// The keys of `caches.ring`.
pub(crate) const RING_KEYS: [&str; 2] = ["ring_slots", "seq_slots"];
/// The keys of `caches.carry`.
pub(crate) const CARRY_KEYS: [&str; 2] = ["slots", "table_rows"];
/// The keys of `caches.lookup`.
pub(crate) const LOOKUP_KEYS: [&str; 2] = ["sequences", "history_tokens"];
/// The keys of `caches.tree`.
pub(crate) const TREE_KEYS: [&str; 2] = ["slots", "nodes"];
/// The keys of `caches.drafts`.
pub(crate) const DRAFT_KEYS: [&str; 2] = ["slots", "positions"];

/// `[parallel]` of an inputs file, owned: borrow it as [`Parallel`] through
/// [`ParallelCounts::parallel`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParallelCounts {
    /// `tp`: tensor-parallel ranks (default 1).
    pub tp: u64,
    /// `pp`: pipeline-parallel ranks (default 1).
    pub pp: u64,
    /// `pp_layers`: the layers of each pipeline rank, when not vLLM's default split.
    pub pp_layers: Option<Vec<u64>>,
}

impl ParallelCounts {
    /// One GPU.
    pub const SINGLE: ParallelCounts = ParallelCounts {
        tp: 1,
        pp: 1,
        pp_layers: None,
    };

    /// Borrowed as the runtime's [`Parallel`].
    #[must_use]
    pub fn parallel(&self) -> Parallel<'_> {
        Parallel {
            tp: self.tp,
            pp: self.pp,
            pp_layers: self.pp_layers.as_deref(),
        }
    }
}

/// The plan inputs of an inputs file, owned. Borrow them as [`StateInputs`] through
/// [`InputsFile::view`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputsFile {
    /// `[formats]`: what each format key holds (a dtype, or a packing its states declare), in
    /// file order.
    pub formats: Vec<(String, FormatChoice<String>)>,
    /// `slots`: sequence slots of the recurrent pools, the padding dummy included.
    pub slots: u64,
    /// `[verify]`; `None` when the file has no `[verify]` table.
    pub verify: Option<VerifyCounts>,
    /// `[kv]`; `None` when absent.
    pub kv: Option<KvInputs>,
    /// `[draft_kv]`; `None` when absent.
    pub draft_kv: Option<KvInputs>,
    /// `draft_kv_dtype`: the draft head's KV dtype, when not its format key's; `None` when
    /// absent.
    pub draft_kv_dtype: Option<StateDtype>,
    /// `[caches]`; [`CacheInputs::EMPTY`] when absent.
    pub caches: CacheInputs,
    /// `[parallel]`: the tensor- and pipeline-parallel sizes (1 and 1 when absent).
    pub parallel: ParallelCounts,
    /// `[serving]`, owning the tiers its profile borrows: read it through
    /// [`InputsFile::serving`].
    serving: Option<ServingCounts>,
    /// `[pool]`: the layout policy of what a request holds ([`PoolPolicy::Arenas`] when
    /// absent).
    pub pool: PoolPolicy,
    /// Where `[kv]` and `[draft_kv]` are written, to locate what planning finds missing.
    located: Located,
}

/// The file's text and where its KV tables are, for [`InputsFile::locate_kv`]; whether its
/// `[pool]` writes `context`, for [`InputsFile::lacks_context`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Located {
    source: Option<Source>,
    kv: Option<Range<usize>>,
    draft_kv: Option<Range<usize>>,
    pool_context: bool,
}

/// `[verify]`, owned: the counts of [`VerifyInputs`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyCounts {
    /// `h` intermediates per verify slot, the dummy last; it also says the verify slot count.
    pub h_steps: StepCounts,
    /// Conv-window intermediates per verify slot.
    pub conv_steps: u64,
}

pub use crate::model::StepCounts;

/// An [`InputsFile`] borrowed as [`StateInputs`]: it owns the `(&str, choice)` list that
/// [`StateInputs::formats`] borrows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputsView<'a> {
    file: &'a InputsFile,
    formats: Vec<(&'a str, FormatChoice<&'a str>)>,
}

impl InputsView<'_> {
    /// The plan inputs, borrowing this view's formats and the file's `h_steps`.
    #[must_use]
    pub fn inputs(&self) -> StateInputs<'_> {
        StateInputs {
            formats: &self.formats,
            ..self.file.counts()
        }
    }
}

impl InputsFile {
    /// Reads an inputs file from `text`; `name` is the path shown in errors, kept as given.
    ///
    /// # Errors
    /// Every error of the file, located: malformed TOML, an unknown key, a value of the wrong
    /// type, a negative, fractional or too large count, an unknown dtype or a bad key in
    /// `[formats]`, a missing required key (`slots`, or a key of `[verify]`, `[kv]`,
    /// `[draft_kv]` or a cache group).
    pub fn parse(name: &str, text: &str) -> Result<InputsFile, Diagnostics> {
        let mut sink = Sink::default();
        let file = sink.add_file(Source::new(name, text));
        let (root, errors) = DeTable::parse_recoverable(text);
        if !errors.is_empty() {
            sink.report_toml_errors(file, errors);
            return Err(sink.into_diagnostics());
        }
        let mut inputs = read(
            &mut Walk {
                sink: &mut sink,
                file,
            },
            root.get_ref(),
        );
        inputs.located.source = Some(Source::new(name, text));
        sink.into_diagnostics().into_result(inputs)
    }

    /// Reads the inputs file at `path` (shown in errors as given).
    ///
    /// # Errors
    /// A diagnostic naming the file when it cannot be read, else those of [`InputsFile::parse`].
    pub fn load(path: impl AsRef<Path>) -> Result<InputsFile, Diagnostics> {
        let name = path.as_ref().display().to_string();
        let source = read_source(path.as_ref(), &name, "inputs file")
            .map_err(|failure| *failure.diagnostic)?;
        Self::parse(&name, source.text())
    }

    /// The file borrowed as plan inputs: `file.view().inputs()`.
    #[must_use]
    pub fn view(&self) -> InputsView<'_> {
        InputsView {
            file: self,
            formats: self
                .formats
                .iter()
                .map(|(k, choice)| (k.as_str(), choice.as_ref()))
                .collect(),
        }
    }

    /// `diagnostic` located at the file's `[kv]` table (`[draft_kv]` for the draft head), or
    /// naming the file when that table is not written: for what planning finds missing in it.
    #[must_use]
    pub fn locate_kv(&self, section: Section, diagnostic: Diagnostic) -> Diagnostic {
        let span = match section {
            Section::Main => &self.located.kv,
            Section::Draft => &self.located.draft_kv,
        };
        match (&self.located.source, span) {
            (Some(source), Some(span)) => diagnostic.at(source, span.clone()),
            (Some(source), None) => diagnostic.in_file(source.name()),
            (None, _) => diagnostic,
        }
    }

    /// `diagnostic` located at the value of the key at `path` (`["kv", "blocks"]`,
    /// `["caches", "ring", "seq_slots"]`), or naming the file when the key is not written (the
    /// count then comes from a default or the serving profile).
    #[must_use]
    pub fn locate_key(&self, path: &[&str], diagnostic: Diagnostic) -> Diagnostic {
        self.locate(path, diagnostic, |_, value| value)
    }

    /// `diagnostic` located at the name of the key at `path` (for a key that should not be
    /// there, whatever its value), or naming the file when the key is not written.
    #[must_use]
    pub fn locate_key_name(&self, path: &[&str], diagnostic: Diagnostic) -> Diagnostic {
        self.locate(path, diagnostic, |key, _| key)
    }

    /// `diagnostic` located at the span `pick` takes of the key at `path` (its name's, its
    /// value's), or naming the file when the key is not written.
    fn locate(
        &self,
        path: &[&str],
        diagnostic: Diagnostic,
        pick: impl Fn(Range<usize>, Range<usize>) -> Range<usize>,
    ) -> Diagnostic {
        let Some(source) = &self.located.source else {
            return diagnostic;
        };
        let (root, _) = DeTable::parse_recoverable(source.text());
        let mut table = root.get_ref();
        let mut span = None;
        for (i, key) in path.iter().enumerate() {
            let Some((name, value)) = field(table, key) else {
                span = None;
                break;
            };
            span = Some(pick(name, value.span()));
            match value.get_ref() {
                ::toml::de::DeValue::Table(next) => table = next,
                _ if i + 1 < path.len() => {
                    span = None;
                    break;
                }
                _ => {}
            }
        }
        match span {
            Some(span) => diagnostic.at(source, span),
            None => diagnostic.in_file(source.name()),
        }
    }

    /// `[serving]`, when the file describes the server instead of (or as well as) its counts;
    /// every count of the file is then the one it derives. It borrows the file's
    /// `serving.h_steps` tiers.
    #[must_use]
    pub fn serving(&self) -> Option<ServingProfile<'_>> {
        let serving = self.serving.as_ref()?;
        Some(ServingProfile {
            draft_kv_dtype: self.draft_kv_dtype,
            pool: self.vllm_pool(),
            ..serving.profile()
        })
    }

    /// The file's text, when it was read from one.
    pub(super) fn source(&self) -> Option<&Source> {
        self.located.source.as_ref()
    }

    /// Its `[serving]` table, to change a count of it (then [`InputsFile::derive_again`]).
    pub(super) fn serving_counts_mut(&mut self) -> Option<&mut ServingCounts> {
        self.serving.as_mut()
    }

    /// With `[serving]`, holds the counts the profile derives again (after a change to it or to
    /// `[pool]`); `false` when they cannot be made. Without it, nothing to derive: `true`.
    pub(super) fn derive_again(&mut self) -> bool {
        let Some(serving) = self.serving.clone() else {
            return true;
        };
        let profile = ServingProfile {
            draft_kv_dtype: self.draft_kv_dtype,
            pool: self.vllm_pool(),
            ..serving.profile()
        };
        match profile.inputs() {
            Ok(derived) => {
                self.hold(&derived);
                true
            }
            Err(_) => false,
        }
    }

    /// Whether the file's vLLM pool leaves out `context`, the tokens one request may hold
    /// (`max_model_len`): its [`VllmPool::context`] is then 0 until the caller gives one (as
    /// `metrale-codegen fit --for sequences --context` does through
    /// [`ServingProfile::at`]), and a plan of the file as it is must be refused, at `[pool]`
    /// ([`InputsFile::locate_key_name`] with `["pool"]`). `false` under the arenas.
    #[must_use]
    pub fn lacks_context(&self) -> bool {
        matches!(self.pool, PoolPolicy::Vllm(_)) && !self.located.pool_context
    }

    /// The file's vLLM pool, under that policy.
    fn vllm_pool(&self) -> Option<VllmPool> {
        match self.pool {
            PoolPolicy::Vllm(pool) => Some(pool),
            PoolPolicy::Arenas => None,
        }
    }

    /// What the file gives a format key: a dtype or a packing.
    #[must_use]
    pub fn format(&self, key: &str) -> Option<FormatChoice<&str>> {
        self.formats
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, choice)| choice.as_ref())
    }
}

/// The whole file.
fn read(walk: &mut Walk<'_>, root: &Table<'_>) -> InputsFile {
    walk.check_keys(root, &TOP_KEYS, "the inputs file");
    let serving = field(root, "serving");
    let slots = if let Some((_, value)) = field(root, "slots") {
        walk.u64("slots", value).unwrap_or(0)
    } else {
        // A serving profile derives `slots`.
        if serving.is_none() && !misspelled(root, "slots", &TOP_KEYS) {
            let mut d = Diagnostic::error("missing key `slots`")
                .label("the inputs file starts here")
                .help(
                    "add `slots = N`: the sequence slots of the recurrent pools, the padding \
                     dummy included",
                );
            if let Some(mixup) = mixup::help(root, mixup::Kind::Inputs) {
                d = d.help(mixup);
            }
            walk.report(0..0, d);
        }
        0
    };
    let kv = |walk: &mut Walk<'_>, name: &str| {
        let (key, value) = field(root, name)?;
        kv(walk, key, value, name)
    };
    let mut file = InputsFile {
        formats: field(root, "formats").map_or_else(Vec::new, |(_, v)| formats(walk, v)),
        slots,
        verify: field(root, "verify").and_then(|(key, value)| verify(walk, key, value)),
        kv: kv(walk, "kv"),
        draft_kv: kv(walk, "draft_kv"),
        draft_kv_dtype: field(root, "draft_kv_dtype").and_then(|(_, v)| draft_kv_dtype(walk, v)),
        caches: field(root, "caches").map_or(CacheInputs::EMPTY, |(_, v)| caches(walk, v)),
        parallel: field(root, "parallel")
            .map_or(ParallelCounts::SINGLE, |(_, v)| parallel(walk, v)),
        serving: None,
        pool: field(root, "pool").map_or(PoolPolicy::Arenas, |(key, value)| {
            super::pool::pool(walk, key, value, serving.is_some()).unwrap_or(PoolPolicy::Arenas)
        }),
        located: Located {
            source: None,
            kv: field(root, "kv").map(|(key, _)| key),
            draft_kv: field(root, "draft_kv").map(|(key, _)| key),
            pool_context: field(root, "pool").is_some_and(|(_, v)| super::pool::writes_context(v)),
        },
    };
    // The counts agree only once each was read: check them when the file has no other error.
    let before = walk.sink.error_count();
    match serving {
        Some((key, value)) => {
            if let Some(serving) = agree::serving(walk, key.clone(), value)
                && walk.sink.error_count() == before
            {
                let written = file.counts();
                // The file's pool is the profile's: the profile's sequences size it.
                let profile = ServingProfile {
                    pool: file.vllm_pool(),
                    ..serving.profile()
                };
                if let Some(derived) = agree::with_profile(walk, root, key, &profile, &written) {
                    file.hold(&derived);
                }
                file.serving = Some(serving);
            }
        }
        None if before == 0 => agree::without_profile(walk, root, &file.counts()),
        None => {}
    }
    file
}

impl InputsFile {
    /// The counts, without formats, as the plan inputs take them.
    fn counts(&self) -> StateInputs<'_> {
        StateInputs {
            formats: &[],
            slots: self.slots,
            verify: self.verify.as_ref().map(|v| VerifyInputs {
                h_steps: v.h_steps.as_h_steps(),
                conv_steps: v.conv_steps,
            }),
            kv: self.kv,
            draft_kv: self.draft_kv,
            draft_kv_dtype: self.draft_kv_dtype,
            caches: self.caches,
            pool: self.pool,
        }
    }

    /// Holds `derived`'s counts (a serving profile's); the draft KV dtype, not a count, stays
    /// the file's.
    fn hold(&mut self, derived: &StateInputs<'_>) {
        self.slots = derived.slots;
        self.verify = derived.verify.map(|v| VerifyCounts {
            h_steps: StepCounts::from(v.h_steps),
            conv_steps: v.conv_steps,
        });
        self.kv = derived.kv;
        self.draft_kv = derived.draft_kv;
        self.caches = derived.caches;
        self.pool = derived.pool;
    }
}

/// `[kv]` or `[draft_kv]`: `blocks` and `block_size`, and the three window keys all or none.
fn kv(walk: &mut Walk<'_>, key: Range<usize>, value: &Value<'_>, path: &str) -> Option<KvInputs> {
    let table = walk.table(path, value)?;
    let all: Vec<&str> = KV_KEYS.iter().chain(&WINDOW_KEYS).copied().collect();
    walk.check_keys(table, &all, &format!("`{path}`"));
    let read = |walk: &mut Walk<'_>, name: &str, required: bool| -> Result<Option<u64>, ()> {
        match field(table, name) {
            Some((_, value)) => walk
                .u64(&format!("{path}.{name}"), value)
                .map(Some)
                .ok_or(()),
            None if required => {
                if !misspelled(table, name, &all) {
                    missing(walk, key.clone(), path, name, &KV_KEYS);
                }
                Err(())
            }
            None => Ok(None),
        }
    };
    let blocks = read(walk, "blocks", true);
    let mut block_size = read(walk, "block_size", true);
    if !agree::block_size_is_tokens(walk, table, path, block_size) {
        block_size = Err(());
    }
    let given = WINDOW_KEYS.map(|name| read(walk, name, false));
    let window = match given {
        [
            Ok(Some(sequences)),
            Ok(Some(chunk_tokens)),
            Ok(Some(max_tokens)),
        ] => Some(Some(WindowInputs {
            sequences,
            chunk_tokens,
            max_tokens,
        })),
        [Ok(None), Ok(None), Ok(None)] => Some(None),
        _ if given.iter().any(Result::is_err) => None,
        _ => {
            for (name, value) in WINDOW_KEYS.iter().zip(&given) {
                if matches!(value, Ok(None)) && !misspelled(table, name, &all) {
                    walk.report(
                        key.clone(),
                        Diagnostic::error(format!("missing key `{name}` in `{path}`"))
                            .label(format!("`{path}` needs `{name}`"))
                            .help(
                                "the window keys come together: `sequences`, `chunk_tokens`, \
                                 `max_tokens` (for a circuit with a sliding-window side)",
                            ),
                    );
                }
            }
            None
        }
    };
    Some(KvInputs {
        blocks: blocks.ok()??,
        block_size: block_size.ok()??,
        window: window?,
    })
}

/// Whether a key of `table` outside `keys` is a near spelling of `name` (already reported as
/// unknown with "did you mean `name`?", so `name` is not reported missing too).
fn misspelled(table: &Table<'_>, name: &str, keys: &[&str]) -> bool {
    table.iter().any(|(key, _)| {
        let found: &str = key.get_ref();
        !keys.contains(&found) && did_you_mean(found, keys) == Some(name)
    })
}

/// A table whose keys are all required counts (`[kv]`, `caches.ring`, ...), in `keys` order;
/// `None` after an error. A missing key is reported at the table's key.
fn group<const N: usize>(
    walk: &mut Walk<'_>,
    key: Range<usize>,
    value: &Value<'_>,
    path: &str,
    keys: [&str; N],
) -> Option<[u64; N]> {
    let table = walk.table(path, value)?;
    walk.check_keys(table, &keys, &format!("`{path}`"));
    let mut counts = [0; N];
    let mut complete = true;
    for (count, name) in counts.iter_mut().zip(keys) {
        if let Some((_, value)) = field(table, name) {
            match walk.u64(&format!("{path}.{name}"), value) {
                Some(n) => *count = n,
                None => complete = false,
            }
        } else {
            complete = false;
            if !misspelled(table, name, &keys) {
                missing(walk, key.clone(), path, name, &keys);
            }
        }
    }
    complete.then_some(counts)
}

/// Reports key `name` missing from the table `path` whose key is at `key`.
fn missing(walk: &mut Walk<'_>, key: Range<usize>, path: &str, name: &str, keys: &[&str]) {
    let all = keys
        .iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ");
    walk.report(
        key,
        Diagnostic::error(format!("missing key `{name}` in `{path}`"))
            .label(format!("`{path}` needs `{name}`"))
            .help(format!("`{path}` takes every one of: {all}")),
    );
}

/// `[verify]`: `h_steps`, an array of counts, and `conv_steps`, both required.
fn verify(walk: &mut Walk<'_>, key: Range<usize>, value: &Value<'_>) -> Option<VerifyCounts> {
    let table = walk.table("verify", value)?;
    walk.check_keys(table, &VERIFY_KEYS, "`verify`");
    for name in VERIFY_KEYS {
        if field(table, name).is_none() && !misspelled(table, name, &VERIFY_KEYS) {
            missing(walk, key.clone(), "verify", name, &VERIFY_KEYS);
        }
    }
    let h_steps = field(table, "h_steps").and_then(|(_, value)| {
        let items = walk.array("verify.h_steps", value)?;
        let counts: Vec<Option<u64>> = items
            .iter()
            .enumerate()
            .map(|(i, item)| walk.u64(&format!("verify.h_steps[{i}]"), item))
            .collect();
        counts.into_iter().collect::<Option<Vec<u64>>>()
    });
    let conv_steps =
        field(table, "conv_steps").and_then(|(_, value)| walk.u64("verify.conv_steps", value));
    Some(VerifyCounts {
        h_steps: StepCounts::PerSlot(h_steps?),
        conv_steps: conv_steps?,
    })
}

/// `[parallel]`: `tp` and `pp` (each at least 1, default 1) and `pp_layers` (each at least 1,
/// `pp` of them summing to the layers: checked against the checkpoint when planning).
fn parallel(walk: &mut Walk<'_>, value: &Value<'_>) -> ParallelCounts {
    let Some(table) = walk.table("parallel", value) else {
        return ParallelCounts::SINGLE;
    };
    walk.check_keys(table, &PARALLEL_KEYS, "`parallel`");
    let mut size = |key: &str| {
        let (_, value) = field(table, key)?;
        let n = walk.u64(&format!("parallel.{key}"), value)?;
        if n == 0 {
            walk.report(
                value.span(),
                Diagnostic::error(format!("`parallel.{key}` must be at least 1"))
                    .label("no rank")
                    .help("1 is one GPU: no tensor (`tp`) or pipeline (`pp`) parallelism"),
            );
            return None;
        }
        Some(n)
    };
    let tp = size("tp").unwrap_or(1);
    let pp = size("pp").unwrap_or(1);
    let ranks = tp.checked_mul(pp);
    if ranks.is_none_or(|n| n > MAX_RANKS) {
        let at = field(table, "pp")
            .or_else(|| field(table, "tp"))
            .map_or_else(|| value.span(), |(_, v)| v.span());
        walk.report(
            at,
            Diagnostic::error(format!(
                "`parallel` is tp {tp} x pp {pp}, {} ranks, past the limit of {MAX_RANKS}",
                ranks.map_or_else(|| "over 2^64".to_owned(), |n| n.to_string())
            ))
            .label("too many ranks")
            .help(format!(
                "a layout has 1 to {MAX_RANKS} ranks (GPUs): see \"Limits\" in docs/circuit-schema.md"
            )),
        );
        return ParallelCounts::SINGLE;
    }
    let pp_layers = field(table, "pp_layers").and_then(|(_, value)| {
        let items = walk.array("parallel.pp_layers", value)?;
        let counts: Vec<Option<u64>> = items
            .iter()
            .enumerate()
            .map(|(i, item)| walk.u64(&format!("parallel.pp_layers[{i}]"), item))
            .collect();
        let counts = counts.into_iter().collect::<Option<Vec<u64>>>()?;
        if u64::try_from(counts.len()).ok() != Some(pp) {
            walk.report(
                value.span(),
                Diagnostic::error(format!(
                    "`parallel.pp_layers` has {} counts for pp = {pp}",
                    counts.len()
                ))
                .label("one count per pipeline rank")
                .help("give the layers of each pipeline rank, in rank order"),
            );
            return None;
        }
        if let Some(zero) = counts.iter().position(|&c| c == 0) {
            walk.report(
                items[zero].span(),
                Diagnostic::error("a pipeline rank of `parallel.pp_layers` holds no layer")
                    .label("0 layers"),
            );
            return None;
        }
        Some(counts)
    });
    ParallelCounts { tp, pp, pp_layers }
}

/// `[formats]`: format key -> dtype or packing name, in file order. Whether a packing is one the
/// circuit's states declare is the plan's to say (the file serves any circuit).
fn formats(walk: &mut Walk<'_>, value: &Value<'_>) -> Vec<(String, FormatChoice<String>)> {
    let Some(table) = walk.table("formats", value) else {
        return Vec::new();
    };
    let mut formats = Vec::new();
    for (key, value) in entries(table) {
        let name: &str = key.get_ref();
        if !is_snake_identifier(name) {
            walk.report(
                key.span(),
                Diagnostic::error(format!(
                    "format key `{name}` is not a lower snake-case identifier"
                ))
                .label("a circuit names its format keys `[a-z][a-z0-9_]*`"),
            );
            continue;
        }
        let Some(spelling) = walk.string(&format!("formats.{name}"), value) else {
            continue;
        };
        match FormatChoice::parse(spelling) {
            Some(FormatChoice::Dtype(dtype)) => {
                formats.push((name.to_owned(), FormatChoice::Dtype(dtype)));
            }
            Some(FormatChoice::Packing(packing)) => {
                formats.push((name.to_owned(), FormatChoice::Packing(packing.to_owned())));
            }
            None => walk.report(
                value.span(),
                Diagnostic::error(format!(
                    "unknown dtype `{spelling}` for format key `{name}`"
                ))
                .label("not a dtype or a packing name")
                .expected_one_of("dtypes", spelling, StateDtype::spellings())
                .help("or the name of a packing the key's states declare (`[a-z][a-z0-9_]*`)"),
            ),
        }
    }
    formats
}

/// `draft_kv_dtype`: a dtype spelling ([`StateDtype::parse`]).
fn draft_kv_dtype(walk: &mut Walk<'_>, value: &Value<'_>) -> Option<StateDtype> {
    let spelling = walk.string("draft_kv_dtype", value)?;
    let dtype = StateDtype::parse(spelling);
    if dtype.is_none() {
        walk.report(
            value.span(),
            Diagnostic::error(format!("unknown dtype `{spelling}` for `draft_kv_dtype`"))
                .label("not a dtype")
                .expected_one_of("dtypes", spelling, StateDtype::spellings()),
        );
    }
    dtype
}

/// `[caches]`: plain counts default to 0, an absent group is `None`.
fn caches(walk: &mut Walk<'_>, value: &Value<'_>) -> CacheInputs {
    let Some(table) = walk.table("caches", value) else {
        return CacheInputs::EMPTY;
    };
    walk.check_keys(table, &CACHE_KEYS, "`caches`");
    let mut count = |name: &str| {
        field(table, name)
            .and_then(|(_, value)| walk.u64(&format!("caches.{name}"), value))
            .unwrap_or(0)
    };
    let prefix_snapshot_slots = count("prefix_snapshot_slots");
    let verify_table_rows = count("verify_table_rows");
    let capture_rows = count("capture_rows");
    let mut group_of = |name: &str, keys: [&str; 2]| {
        let (key, value) = field(table, name)?;
        group(walk, key, value, &format!("caches.{name}"), keys)
    };
    CacheInputs {
        prefix_snapshot_slots,
        ring: group_of("ring", RING_KEYS).map(|[ring_slots, seq_slots]| RingInputs {
            ring_slots,
            seq_slots,
        }),
        carry: group_of("carry", CARRY_KEYS)
            .map(|[slots, table_rows]| CarryInputs { slots, table_rows }),
        verify_table_rows,
        capture_rows,
        lookup: group_of("lookup", LOOKUP_KEYS).map(|[sequences, history_tokens]| LookupInputs {
            sequences,
            history_tokens,
        }),
        tree: group_of("tree", TREE_KEYS).map(|[slots, nodes]| TreeInputs { slots, nodes }),
        drafts: group_of("drafts", DRAFT_KEYS)
            .map(|[slots, positions]| DraftInputs { slots, positions }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimal_file_has_empty_groups() {
        let file = InputsFile::parse("m.toml", "slots = 3\n").unwrap();
        assert_eq!(file.slots, 3);
        assert_eq!(file.verify, None);
        assert_eq!(file.kv, None);
        assert_eq!(file.caches, CacheInputs::EMPTY);
        let view = file.view();
        assert_eq!(
            view.inputs(),
            StateInputs {
                slots: 3,
                ..StateInputs::EMPTY
            }
        );
    }

    #[test]
    fn counts_accept_toml_integer_spellings() {
        let file =
            InputsFile::parse("m.toml", "slots = 0x10\n[caches]\ncapture_rows = 1_000\n").unwrap();
        assert_eq!(file.slots, 16);
        assert_eq!(file.caches.capture_rows, 1000);
    }

    #[test]
    fn a_typo_of_a_required_key_is_one_error() {
        let err = InputsFile::parse("m.toml", "slot = 3\n").unwrap_err();
        assert_eq!(err.len(), 1, "{err}");
        let err = InputsFile::parse("m.toml", "slots = 1\n[kv]\nblock = 3\nblock_size = 4\n")
            .unwrap_err();
        assert_eq!(err.len(), 1, "{err}");
    }

    #[test]
    fn nothing_panics_on_odd_text() {
        for text in [
            "",
            "\u{feff}",
            "[",
            "slots = [",
            "slots = 1\n[caches]\nring = 3",
            "é = \"ü\"",
            "[verify]\nh_steps = [1, [2], -3, 4.0]",
        ] {
            let _ = InputsFile::parse("odd.toml", text);
        }
    }
}
