//! The counts of one set of plan inputs agree: with each other, and with a serving profile.
//! Several counts name the same sequence slots (the padding dummy included), so they must be
//! equal, and some follow from others; inputs that break this describe no server and are
//! refused, as error values here and as located errors in the inputs file
//! (`load::inputs_file::agree`, which reports these very disagreements).
//!
//! Owner: metrale-circuit (runtime).
//! The rules ([`StateInputs::disagreements`]):
//! - `verify.h_steps` has one entry per slot: its slot count is `slots`;
//! - `caches.ring.seq_slots`, `caches.carry.slots`, `caches.tree.slots`, `caches.drafts.slots`
//!   are `slots`;
//! - `caches.verify_table_rows` (one row per verified row) is the total of `h_steps`, or 0 for
//!   an engine without verify tables.
//!
//! With a profile ([`ServingProfile::disagreements`]), every count must be the derived one.

use super::profile::ServingProfile;
use crate::law::SizeFault;
use crate::model::StateInputs;

/// Two counts of one set of plan inputs that cannot both be true of one server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Disagreement {
    /// `verify.h_steps` names `verify_slots` verify slots, not `slots`.
    VerifySlots {
        /// The verify slots.
        verify_slots: u64,
        /// `slots`.
        slots: u64,
    },
    /// A cache group's slot count is not `slots`.
    GroupSlots {
        /// The group (`ring`, `carry`, `tree`, `drafts`).
        group: &'static str,
        /// Its key that names the slots (`seq_slots`, `slots`).
        key: &'static str,
        /// Its count.
        count: u64,
        /// `slots`.
        slots: u64,
    },
    /// `caches.verify_table_rows` is neither 0 nor the total of `h_steps`.
    VerifyTableRows {
        /// `verify_table_rows`.
        rows: u64,
        /// The total of `h_steps`.
        total: u64,
    },
    /// A count is not the one the serving profile derives.
    Profile {
        /// The count, by its inputs-file key (`slots`, `verify`, `kv`, `draft_kv`,
        /// `caches.<key>`).
        count: &'static str,
    },
    /// The profile's counts cannot be made.
    ProfileFault(SizeFault),
}

impl std::fmt::Display for Disagreement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Disagreement::VerifySlots {
                verify_slots,
                slots,
            } => write!(
                f,
                "`verify.h_steps` has {verify_slots} entr{}, but `slots = {slots}`",
                if *verify_slots == 1 { "y" } else { "ies" }
            ),
            Disagreement::GroupSlots {
                group,
                key,
                count,
                slots,
            } => write!(f, "`caches.{group}.{key} = {count}`, but `slots = {slots}`"),
            Disagreement::VerifyTableRows { rows, total } => write!(
                f,
                "`caches.verify_table_rows = {rows}`, but `verify.h_steps` totals {total} rows"
            ),
            Disagreement::Profile { count } => {
                write!(f, "`{count}` is not what the serving profile derives")
            }
            Disagreement::ProfileFault(fault) => {
                write!(f, "the serving profile's counts cannot be made ({fault:?})")
            }
        }
    }
}

impl std::error::Error for Disagreement {}

impl StateInputs<'_> {
    /// Every pair of counts that disagree, in the order of this module's rules; empty when the
    /// inputs describe one server.
    #[must_use]
    pub fn disagreements(&self) -> Vec<Disagreement> {
        let slots = self.slots;
        let mut found = Vec::new();
        if let Some(verify) = self.verify
            && verify.slots() != slots
        {
            found.push(Disagreement::VerifySlots {
                verify_slots: verify.slots(),
                slots,
            });
        }
        let c = &self.caches;
        let groups = [
            ("ring", "seq_slots", c.ring.map(|r| r.seq_slots)),
            ("carry", "slots", c.carry.map(|r| r.slots)),
            ("tree", "slots", c.tree.map(|r| r.slots)),
            ("drafts", "slots", c.drafts.map(|r| r.slots)),
        ];
        for (group, key, count) in groups {
            if let Some(count) = count
                && count != slots
            {
                found.push(Disagreement::GroupSlots {
                    group,
                    key,
                    count,
                    slots,
                });
            }
        }
        if let Some(total) = self.verify.and_then(|v| v.h_steps.total())
            && c.verify_table_rows != 0
            && c.verify_table_rows != total
        {
            found.push(Disagreement::VerifyTableRows {
                rows: c.verify_table_rows,
                total,
            });
        }
        found
    }

    /// The inputs, when their counts agree ([`StateInputs::disagreements`]).
    ///
    /// # Errors
    /// The first disagreement.
    pub fn agreed(self) -> Result<Self, Disagreement> {
        match self.disagreements().first() {
            Some(first) => Err(*first),
            None => Ok(self),
        }
    }
}

impl ServingProfile {
    /// Every count of `inputs` (formats aside) that is not the one this profile derives, by
    /// inputs-file key; or the profile's own fault.
    #[must_use]
    pub fn disagreements(&self, inputs: &StateInputs<'_>) -> Vec<Disagreement> {
        let derived = match self.inputs() {
            Ok(derived) => derived,
            Err(fault) => return vec![Disagreement::ProfileFault(fault)],
        };
        let (given, want) = (&inputs.caches, &derived.caches);
        let verify_agrees = match (inputs.verify, derived.verify) {
            (Some(a), Some(b)) => {
                a.conv_steps == b.conv_steps
                    && a.slots() == b.slots()
                    && (0..b.slots()).all(|s| a.h_steps.rows_of(s) == b.h_steps.rows_of(s))
            }
            (None, None) => true,
            _ => false,
        };
        [
            ("slots", inputs.slots == derived.slots),
            ("verify", verify_agrees),
            ("kv", inputs.kv == derived.kv),
            ("draft_kv", inputs.draft_kv == derived.draft_kv),
            (
                "caches.prefix_snapshot_slots",
                given.prefix_snapshot_slots == want.prefix_snapshot_slots,
            ),
            ("caches.ring", given.ring == want.ring),
            ("caches.carry", given.carry == want.carry),
            (
                "caches.verify_table_rows",
                given.verify_table_rows == want.verify_table_rows,
            ),
            (
                "caches.capture_rows",
                given.capture_rows == want.capture_rows,
            ),
            ("caches.lookup", given.lookup == want.lookup),
            ("caches.tree", given.tree == want.tree),
            ("caches.drafts", given.drafts == want.drafts),
        ]
        .into_iter()
        .filter(|(_, agrees)| !agrees)
        .map(|(count, _)| Disagreement::Profile { count })
        .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CacheInputs, HSteps, RingInputs, VerifyInputs};

    #[test]
    fn slot_counts_must_be_slots() {
        let mut inputs = StateInputs {
            slots: 9,
            verify: Some(VerifyInputs {
                h_steps: HSteps::Uniform { slots: 9, rows: 4 },
                conv_steps: 4,
            }),
            caches: CacheInputs {
                verify_table_rows: 36,
                ring: Some(RingInputs {
                    ring_slots: 4,
                    seq_slots: 9,
                }),
                ..CacheInputs::EMPTY
            },
            ..StateInputs::EMPTY
        };
        assert_eq!(inputs.disagreements(), []);
        // The case: slots = 5 with the rest at 9.
        inputs.slots = 5;
        assert_eq!(
            inputs.disagreements(),
            [
                Disagreement::VerifySlots {
                    verify_slots: 9,
                    slots: 5
                },
                Disagreement::GroupSlots {
                    group: "ring",
                    key: "seq_slots",
                    count: 9,
                    slots: 5
                },
            ]
        );
        assert!(inputs.agreed().is_err());
        inputs.slots = 9;
        inputs.caches.verify_table_rows = 35;
        assert_eq!(
            inputs.disagreements(),
            [Disagreement::VerifyTableRows {
                rows: 35,
                total: 36
            }]
        );
        // 0: no verify tables.
        inputs.caches.verify_table_rows = 0;
        assert!(inputs.agreed().is_ok());
    }

    #[test]
    fn a_profile_names_each_count_it_does_not_derive() {
        let profile = ServingProfile {
            sequences: 2,
            verify_rows: 1,
            ..ServingProfile::EMPTY
        };
        let derived = profile.inputs().unwrap();
        assert_eq!(profile.disagreements(&derived), []);
        let other = StateInputs {
            slots: 4,
            verify: None,
            ..derived
        };
        assert_eq!(
            profile.disagreements(&other),
            [
                Disagreement::Profile { count: "slots" },
                Disagreement::Profile { count: "verify" }
            ]
        );
    }
}
