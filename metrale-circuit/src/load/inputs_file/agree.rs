//! The counts of an inputs file agree: with each other, and with its `[serving]` profile.
//!
//! This module owns the `[serving]` table (read into a [`ServingProfile`] and the `h_steps`
//! tiers it borrows, refused when they name no verify slots of their own: beside
//! `verify_batch`, without `verify_rows > 0`, or empty) and the rules that refuse counts that
//! cannot all be true of one server:
//! - with `[serving]`, every count the file also writes must be the one the profile derives
//!   ([`ServingProfile::inputs`]); the file then holds the derived counts;
//! - without it, only counts no server can have are refused: more verify slots (`[verify]
//!   h_steps` entries) or ring sequences (`ring.seq_slots`) than `slots`, and a `carry`,
//!   `tree` or `drafts` slot count other than the verify slots (at most `slots` without
//!   verify); `verify_table_rows` and `carry.table_rows` are capacities, any count.
//!
//! The rules themselves are the runtime's (`serve::agree`: [`StateInputs::disagreements`],
//! [`ServingProfile::disagreements`]); this module locates each disagreement in the file.
//!
//! Invariants: each refusal is located at the count that disagrees (its value, or its table's
//! key), names both figures and the rule, and says what would agree; only counts the file
//! writes are refused; nothing here panics.

use std::ops::Range;

use crate::law::SizeFault;
use crate::load::text::diag::Diagnostic;
use crate::load::text::walk::{Table, Value, Walk, field};
use crate::model::{HSteps, KvInputs, StateInputs};
use crate::serve::{Disagreement, KvTokens, ProfileKv, ServingProfile};

/// The keys of `[serving]`.
pub(crate) const SERVING_KEYS: [&str; 14] = [
    "sequences",
    "verify_rows",
    "verify_batch",
    "h_steps",
    "table_rows",
    "ring_dummy",
    "kv",
    "draft_kv",
    "prefix_snapshots",
    "ring_depth",
    "carry",
    "tree_nodes",
    "capture_rows",
    "lookup_history",
];

/// The keys of `[serving.kv]`.
pub(crate) const SERVING_KV_KEYS: [&str; 4] = [
    "block_size",
    "tokens_per_sequence",
    "blocks",
    "chunk_tokens",
];

/// `[serving]` as a file holds it: the profile, and the `h_steps` tiers it borrows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ServingCounts {
    /// The profile, its tiers left out (`h_steps: None`), and no draft KV dtype (the file's
    /// top-level key gives it).
    profile: ServingProfile<'static>,
    /// `serving.h_steps`.
    h_steps: Option<Vec<u64>>,
}

impl ServingCounts {
    /// Sets its count `key` (one of [`SERVING_COUNTS`]) to 1 ([`count_to_one`]); `false` when
    /// it does not have that count.
    pub(super) fn count_to_one(&mut self, key: &str) -> bool {
        if key == "h_steps" {
            return self.h_steps.replace(vec![1]).is_some();
        }
        count_to_one(&mut self.profile, key).is_some()
    }

    /// The profile, borrowing its tiers.
    pub(crate) fn profile(&self) -> ServingProfile<'_> {
        ServingProfile {
            h_steps: self.h_steps.as_deref(),
            ..self.profile
        }
    }
}

/// `[serving]`: `sequences` required; every other key optional, absent meaning none (0,
/// `false`, no pool, no tiers).
pub(crate) fn serving(
    walk: &mut Walk<'_>,
    key: Range<usize>,
    value: &Value<'_>,
) -> Option<ServingCounts> {
    let table = walk.table("serving", value)?;
    walk.check_keys(table, &SERVING_KEYS, "`serving`");
    let mut valid = true;
    let mut count = |walk: &mut Walk<'_>, name: &str| -> u64 {
        match field(table, name) {
            Some((_, v)) => walk.u64(&format!("serving.{name}"), v).unwrap_or_else(|| {
                valid = false;
                0
            }),
            None => 0,
        }
    };
    let sequences = field(table, "sequences").map(|(_, v)| walk.u64("serving.sequences", v));
    let before = walk.sink.error_count();
    let verify_rows = count(walk, "verify_rows");
    let verify_rows_read = walk.sink.error_count() == before;
    let prefix_snapshots = count(walk, "prefix_snapshots");
    let ring_depth = count(walk, "ring_depth");
    let tree_nodes = count(walk, "tree_nodes");
    let capture_rows = count(walk, "capture_rows");
    let lookup_history = count(walk, "lookup_history");
    // A count that is absent rather than 0 when not written: the server's own default.
    let optional = |walk: &mut Walk<'_>, name: &str| -> Option<Option<u64>> {
        match field(table, name) {
            Some((_, v)) => walk.u64(&format!("serving.{name}"), v).map(Some),
            None => Some(None),
        }
    };
    let verify_batch = optional(walk, "verify_batch");
    let table_rows = optional(walk, "table_rows");
    let flag = |walk: &mut Walk<'_>, name: &str, absent: bool| -> Option<bool> {
        match field(table, name) {
            Some((_, v)) => {
                if let toml::de::DeValue::Boolean(b) = v.get_ref() {
                    Some(*b)
                } else {
                    walk.wrong_type(&format!("serving.{name}"), "a boolean", v);
                    None
                }
            }
            None => Some(absent),
        }
    };
    let draft_kv = flag(walk, "draft_kv", false);
    let carry = flag(walk, "carry", false);
    let ring_dummy = flag(walk, "ring_dummy", true);
    let kv = match field(table, "kv") {
        Some((kv_key, v)) => serving_kv(walk, kv_key, v).map(Some),
        None => Some(None),
    };
    let h_steps = match field(table, "h_steps") {
        Some((at, v)) => {
            let verify_rows = verify_rows_read.then_some(verify_rows);
            tiers(walk, table, at, v, verify_rows).map(Some)
        }
        None => Some(None),
    };
    let Some(sequences) = sequences else {
        walk.report(
            key,
            Diagnostic::error("missing key `sequences` in `serving`")
                .label("`serving` needs `sequences`")
                .help("add `sequences = N`: the concurrent sequences the server runs"),
        );
        return None;
    };
    if !valid {
        return None;
    }
    let profile = ServingProfile {
        sequences: sequences?,
        verify_rows,
        verify_batch: verify_batch?,
        h_steps: None,
        table_rows: table_rows?,
        ring_dummy: ring_dummy?,
        kv: kv?,
        draft_kv: draft_kv?,
        // The top-level key's, set by `InputsFile::serving`: not a count of the profile.
        draft_kv_dtype: None,
        prefix_snapshots,
        ring_depth,
        carry: carry?,
        tree_nodes,
        capture_rows,
        lookup_history,
        pool: None,
    };
    Some(ServingCounts {
        profile,
        h_steps: h_steps?,
    })
}

/// `serving.h_steps` (its key at `at`): an array of counts, at least the dummy's, naming the
/// verify slots of a server that verifies; so refused beside `verify_batch` (two counts of the
/// verify slots) and without `verify_rows > 0` (`verify_rows`: `None` when it is a bad count,
/// reported already). `None` after an error.
fn tiers(
    walk: &mut Walk<'_>,
    table: &Table<'_>,
    at: Range<usize>,
    value: &Value<'_>,
    verify_rows: Option<u64>,
) -> Option<Vec<u64>> {
    let items = walk.array("serving.h_steps", value)?;
    let counts: Vec<Option<u64>> = items
        .iter()
        .enumerate()
        .map(|(i, item)| walk.u64(&format!("serving.h_steps[{i}]"), item))
        .collect();
    let counts = counts.into_iter().collect::<Option<Vec<u64>>>()?;
    if counts.is_empty() {
        walk.report(
            value.span(),
            Diagnostic::error("`serving.h_steps` is empty")
                .label("no verify slot")
                .help(
                    "give each verify slot's `h` rows, the dummy's last, or remove `h_steps` \
                     for `verify_rows` rows in each verify slot",
                ),
        );
        return None;
    }
    let (message, help) = if field(table, "verify_batch").is_some() {
        (
            "`serving.h_steps` and `serving.verify_batch` are both given",
            "give one: h_steps names the verify slots (its length, the dummy included)",
        )
    } else if verify_rows == Some(0) {
        (
            "`serving.h_steps` without `verify_rows`",
            "tiers are the rows of a verify: set `verify_rows` (K, the rows a speculative \
             step verifies), or remove `h_steps`",
        )
    } else {
        return verify_rows.map(|_| counts);
    };
    walk.report(
        at,
        Diagnostic::error(message)
            .label("these tiers name the verify slots")
            .help(help),
    );
    None
}

/// `[serving.kv]`: `block_size`, and exactly one of `tokens_per_sequence` and `blocks`;
/// `chunk_tokens` optional.
fn serving_kv(walk: &mut Walk<'_>, key: Range<usize>, value: &Value<'_>) -> Option<ProfileKv> {
    let table = walk.table("serving.kv", value)?;
    walk.check_keys(table, &SERVING_KV_KEYS, "`serving.kv`");
    let read = |walk: &mut Walk<'_>, name: &str| -> Result<Option<u64>, ()> {
        match field(table, name) {
            Some((_, v)) => walk
                .u64(&format!("serving.kv.{name}"), v)
                .map(Some)
                .ok_or(()),
            None => Ok(None),
        }
    };
    let mut block_size = read(walk, "block_size");
    if !block_size_is_tokens(walk, table, "serving.kv", block_size) {
        block_size = Err(());
    }
    let per_sequence = read(walk, "tokens_per_sequence");
    let blocks = read(walk, "blocks");
    let chunk_tokens = read(walk, "chunk_tokens");
    if matches!(block_size, Ok(None)) {
        walk.report(
            key.clone(),
            Diagnostic::error("missing key `block_size` in `serving.kv`")
                .label("`serving.kv` needs `block_size`")
                .help("add `block_size = N`: the tokens of one KV block"),
        );
    }
    let tokens = match (per_sequence, blocks) {
        (Ok(Some(tokens)), Ok(None)) => Some(KvTokens::PerSequence(tokens)),
        (Ok(None), Ok(Some(blocks))) => Some(KvTokens::Pool(blocks)),
        (Ok(Some(_)), Ok(Some(_))) | (Ok(None), Ok(None)) => {
            walk.report(
                key,
                Diagnostic::error(
                    "`serving.kv` needs exactly one of `tokens_per_sequence` and `blocks`",
                )
                .label("the pool's size")
                .help(
                    "`tokens_per_sequence` sizes the pool for every sequence's context; \
                     `blocks` gives the pool as is",
                ),
            );
            None
        }
        _ => None,
    };
    Some(ProfileKv {
        block_size: block_size.ok()??,
        tokens: tokens?,
        chunk_tokens: chunk_tokens.ok()?,
    })
}

/// Whether a pool's `block_size`, read as `read`, is not a block of 0 tokens (which would
/// leave every KV side of the pool empty); reported at the value when it is.
pub(crate) fn block_size_is_tokens(
    walk: &mut Walk<'_>,
    table: &Table<'_>,
    path: &str,
    read: Result<Option<u64>, ()>,
) -> bool {
    let (Ok(Some(0)), Some((_, v))) = (read, field(table, "block_size")) else {
        return true;
    };
    walk.report(
        v.span(),
        Diagnostic::error(format!("`{path}.block_size` must be at least 1"))
            .label("a block of 0 tokens")
            .help("a block of 0 tokens holds nothing: every KV side of the pool would be empty"),
    );
    false
}

/// One count that disagrees: reported at `at`.
fn refuse(walk: &mut Walk<'_>, at: Range<usize>, message: String, rule: &str, agree: String) {
    walk.report(
        at,
        Diagnostic::error(message)
            .label("disagrees")
            .note(rule.to_owned())
            .help(agree),
    );
}

/// The span of key `key` in the file: a top-level key, or `caches.<key>` in `[caches]`; its
/// value's span when `value` is set. `None` when the file does not write it.
fn written(root: &Table<'_>, key: &str, value: bool) -> Option<Range<usize>> {
    let (table, name) = match key.strip_prefix("caches.") {
        Some(name) => (field(root, "caches")?.1.get_ref().as_table()?, name),
        None => (root, key),
    };
    let (at, v) = field(table, name)?;
    Some(if value { v.span() } else { at })
}

/// The counts of `[serving]`, by key (dotted under `kv`), in the order of [`SERVING_KEYS`].
pub(super) const SERVING_COUNTS: [&str; 14] = [
    "sequences",
    "verify_rows",
    "verify_batch",
    "h_steps",
    "table_rows",
    "kv.block_size",
    "kv.tokens_per_sequence",
    "kv.blocks",
    "kv.chunk_tokens",
    "prefix_snapshots",
    "ring_depth",
    "tree_nodes",
    "capture_rows",
    "lookup_history",
];

/// Sets the count `key` of `profile` (one of [`SERVING_COUNTS`]) to 1 (`h_steps`: one tier of
/// one row): the one rule every search for what made the counts too large uses. Returns the
/// value it had (an `h_steps` list counts as its largest tier); `None` when the profile does
/// not have that count.
pub(super) fn count_to_one(profile: &mut ServingProfile<'_>, key: &str) -> Option<u64> {
    const ONE_TIER: &[u64] = &[1];
    let p = profile;
    let set = match key {
        "sequences" => Some(&mut p.sequences),
        "verify_rows" => Some(&mut p.verify_rows),
        "verify_batch" => p.verify_batch.as_mut(),
        "table_rows" => p.table_rows.as_mut(),
        "prefix_snapshots" => Some(&mut p.prefix_snapshots),
        "ring_depth" => Some(&mut p.ring_depth),
        "tree_nodes" => Some(&mut p.tree_nodes),
        "capture_rows" => Some(&mut p.capture_rows),
        "lookup_history" => Some(&mut p.lookup_history),
        "h_steps" => {
            let was = p.h_steps?.iter().copied().max().unwrap_or(0);
            p.h_steps = Some(ONE_TIER);
            return Some(was);
        }
        _ => p.kv.as_mut().and_then(|kv| match key {
            "kv.block_size" => Some(&mut kv.block_size),
            "kv.chunk_tokens" => kv.chunk_tokens.as_mut(),
            "kv.tokens_per_sequence" => match &mut kv.tokens {
                KvTokens::PerSequence(n) => Some(n),
                KvTokens::Pool(_) => None,
            },
            "kv.blocks" => match &mut kv.tokens {
                KvTokens::Pool(n) => Some(n),
                KvTokens::PerSequence(_) => None,
            },
            _ => None,
        }),
    };
    set.map(|count| std::mem::replace(count, 1))
}

/// Each `[serving]` count (its key, dotted under `kv`, its value and its value's span) that
/// alone keeps `profile`'s counts from being made: with it at 1 they can be. In the order of
/// [`SERVING_KEYS`]; empty when no one count does it (the product of several).
fn profile_causes(
    serving: &Table<'_>,
    profile: &ServingProfile<'_>,
) -> Vec<(Range<usize>, &'static str, u64)> {
    SERVING_COUNTS
        .into_iter()
        .filter_map(|key| {
            let mut smaller = *profile;
            let was = count_to_one(&mut smaller, key)?;
            if smaller == *profile || smaller.inputs().is_err() {
                return None;
            }
            let at = match key.strip_prefix("kv.") {
                Some(name) => field(field(serving, "kv")?.1.get_ref().as_table()?, name),
                None => field(serving, key),
            };
            at.map(|(_, value)| (value.span(), key, was))
        })
        .collect()
}

/// With a profile: every count `file` writes must be the derived one
/// ([`ServingProfile::disagreements`]). Returns the derived counts, which the file then holds
/// (`None` when the profile's counts cannot be made). `serving_at` is the `[serving]` key.
pub(crate) fn with_profile<'p>(
    walk: &mut Walk<'_>,
    root: &Table<'_>,
    serving_at: Range<usize>,
    profile: &ServingProfile<'p>,
    file: &StateInputs<'_>,
) -> Option<StateInputs<'p>> {
    let derived = match profile.inputs() {
        Ok(derived) => derived,
        Err(fault) => {
            let what = match fault {
                SizeFault::Overflow => "overflow u64",
                _ => "cannot be made",
            };
            let causes = field(root, "serving")
                .and_then(|(_, v)| v.get_ref().as_table())
                .map(|table| profile_causes(table, profile))
                .unwrap_or_default();
            // Blamed on the largest of the counts that alone cause it: the outlier.
            let Some((at, key, _)) = causes.iter().max_by_key(|(_, _, was)| *was) else {
                walk.report(
                    serving_at,
                    Diagnostic::error(format!("the serving profile's counts {what}"))
                        .label("these counts")
                        .help("lower `sequences` or the per-sequence counts"),
                );
                return None;
            };
            let keys: Vec<String> = causes.iter().map(|(_, k, _)| format!("`{k}`")).collect();
            walk.report(
                at.clone(),
                Diagnostic::error(format!("the serving profile's counts {what}"))
                    .label("this count")
                    .note(format!(
                        "with {} of `[serving]` at 1 they can be made",
                        keys.join(" or ")
                    ))
                    .help(format!("lower `[serving] {key}`")),
            );
            return None;
        }
    };
    let rule = "with `[serving]`, every count follows from the profile (docs/inputs.md)";
    for disagreement in profile.disagreements(file) {
        let Disagreement::Profile { count } = disagreement else {
            continue;
        };
        // Only what the file writes can disagree: an absent count is the derived one.
        let Some(at) = written(root, count, count == "slots") else {
            continue;
        };
        if count == "slots" {
            refuse(
                walk,
                at,
                format!(
                    "`slots = {}` disagrees with `[serving]`: {} sequences make {} slots",
                    file.slots, profile.sequences, derived.slots
                ),
                "slots = sequences + 1, the padding dummy batched kernels may write into",
                format!(
                    "remove `slots` (the profile gives it) or write `slots = {}`",
                    derived.slots
                ),
            );
            continue;
        }
        let want = derived_text(count, &derived);
        let shown = if count.starts_with("caches.") {
            format!("`{count}`")
        } else {
            format!("`[{count}]`")
        };
        refuse(
            walk,
            at,
            format!("{shown} disagrees with `[serving]`, which gives {want}"),
            rule,
            format!("remove {shown} (the profile gives it) or make it agree"),
        );
    }
    Some(derived)
}

/// What the profile derives for `count`, in words.
fn derived_text(count: &str, derived: &StateInputs<'_>) -> String {
    let c = &derived.caches;
    match count {
        "verify" => match derived.verify {
            Some(v) => match v.h_steps {
                HSteps::PerSlot(rows) => {
                    format!("`h_steps = {rows:?}`, `conv_steps = {}`", v.conv_steps)
                }
                HSteps::Uniform { slots, rows } => format!(
                    "{slots} verify slots of {rows} rows, `conv_steps = {}`",
                    v.conv_steps
                ),
            },
            None => "no `[verify]` (`verify_rows` is 0)".to_owned(),
        },
        "kv" => describe_kv(derived.kv),
        "draft_kv" => describe_kv(derived.draft_kv),
        "caches.prefix_snapshot_slots" => c.prefix_snapshot_slots.to_string(),
        "caches.verify_table_rows" => c.verify_table_rows.to_string(),
        "caches.capture_rows" => c.capture_rows.to_string(),
        "caches.ring" => format!("{:?}", c.ring),
        "caches.carry" => format!("{:?}", c.carry),
        "caches.lookup" => format!("{:?}", c.lookup),
        "caches.tree" => format!("{:?}", c.tree),
        "caches.drafts" => format!("{:?}", c.drafts),
        _ => String::new(),
    }
}

/// "2048 blocks of 16 tokens" or "no pool".
fn describe_kv(kv: Option<KvInputs>) -> String {
    match kv {
        Some(kv) => format!("{} blocks of {} tokens", kv.blocks, kv.block_size),
        None => "no pool".to_owned(),
    }
}

/// Without a profile: the counts that name the same slots agree
/// ([`StateInputs::disagreements`]), each refused at the count the file writes.
pub(crate) fn without_profile(walk: &mut Walk<'_>, root: &Table<'_>, file: &StateInputs<'_>) {
    let slots = file.slots;
    let within = "a live sequence verifies in its own slot, and a ring covers live sequences: \
                  these count at most the `slots` (the padding dummy included)";
    let per_verify_slot = "a carried-state stash, a token tree and the draft tokens hold one unit \
                           per verify slot (the entries of `[verify] h_steps`)";
    for disagreement in file.disagreements() {
        let message = disagreement.to_string();
        match disagreement {
            Disagreement::VerifySlots { .. } => {
                let at = field(root, "verify")
                    .and_then(|(_, v)| v.get_ref().as_table().and_then(|t| field(t, "h_steps")))
                    .map(|(_, h)| h.span());
                if let Some(at) = at {
                    refuse(
                        walk,
                        at,
                        message,
                        within,
                        format!("give at most {slots} entries, or raise `slots`"),
                    );
                }
            }
            Disagreement::GroupSlots { group, key, .. } => {
                if let Some(at) = written(root, &format!("caches.{group}"), false) {
                    refuse(
                        walk,
                        at,
                        message,
                        within,
                        format!("write `{key}` of at most {slots}, or raise `slots`"),
                    );
                }
            }
            Disagreement::GroupVerifySlots {
                group,
                verify_slots,
                ..
            } => {
                if let Some(at) = written(root, &format!("caches.{group}"), false) {
                    refuse(
                        walk,
                        at,
                        message,
                        per_verify_slot,
                        format!("write `slots = {verify_slots}`"),
                    );
                }
            }
            Disagreement::Profile { .. } | Disagreement::ProfileFault(_) => {}
        }
    }
}
