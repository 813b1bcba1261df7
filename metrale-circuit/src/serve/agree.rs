//! The counts of one set of plan inputs agree: with each other, and with a serving profile.
//! Only counts no server can have are refused: real engines verify fewer sequences at once
//! than they keep live, and size their pointer tables as fixed capacities. Refusals are error
//! values here and located errors in the inputs file (`load::inputs_file::agree`, which
//! reports these very disagreements).
//!
//! Owner: metrale-circuit (runtime).
//! The rules ([`StateInputs::disagreements`]), each with its reason:
//! - the verify slots (`verify.h_steps`'s entries, the dummy included) are at most `slots`:
//!   a sequence verifies in the slot it lives in;
//! - `caches.carry.slots`, `caches.tree.slots` and `caches.drafts.slots` hold one unit per
//!   verify slot, so with verify inputs they equal the verify slots; without, at most `slots`;
//! - `caches.ring.seq_slots` is at most `slots`: a ring covers live sequences, and may leave
//!   the dummy (or more) out;
//! - `caches.verify_table_rows` and `caches.carry.table_rows` are an engine's fixed table
//!   capacities: any count.
//!
//! With a profile ([`ServingProfile::disagreements`]), every count must be the derived one.

use super::profile::ServingProfile;
use crate::law::SizeFault;
use crate::model::StateInputs;

/// Two counts of one set of plan inputs that cannot both be true of one server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Disagreement {
    /// `verify.h_steps` names more verify slots than there are `slots`.
    VerifySlots {
        /// The verify slots.
        verify_slots: u64,
        /// `slots`.
        slots: u64,
    },
    /// A cache group's slot count exceeds `slots` (`ring`, and the verify groups without
    /// verify inputs).
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
    /// A verify group's slot count is not the verify slots (`carry`, `tree`, `drafts`: one unit
    /// per verify slot).
    GroupVerifySlots {
        /// The group (`carry`, `tree`, `drafts`).
        group: &'static str,
        /// Its count (`slots`).
        count: u64,
        /// The verify slots `verify.h_steps` names.
        verify_slots: u64,
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
                "`verify.h_steps` has {verify_slots} entr{}, more than `slots = {slots}`",
                if *verify_slots == 1 { "y" } else { "ies" }
            ),
            Disagreement::GroupSlots {
                group,
                key,
                count,
                slots,
            } => write!(
                f,
                "`caches.{group}.{key} = {count}`, more than `slots = {slots}`"
            ),
            Disagreement::GroupVerifySlots {
                group,
                count,
                verify_slots,
            } => write!(
                f,
                "`caches.{group}.slots = {count}`, but `verify.h_steps` names {verify_slots} \
                 verify slot{}",
                if *verify_slots == 1 { "" } else { "s" }
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
        let verify_slots = self.verify.map(|v| v.slots());
        let mut found = Vec::new();
        if let Some(verify_slots) = verify_slots
            && verify_slots > slots
        {
            found.push(Disagreement::VerifySlots {
                verify_slots,
                slots,
            });
        }
        let c = &self.caches;
        if let Some(ring) = c.ring
            && ring.seq_slots > slots
        {
            found.push(Disagreement::GroupSlots {
                group: "ring",
                key: "seq_slots",
                count: ring.seq_slots,
                slots,
            });
        }
        let per_verify_slot = [
            ("carry", c.carry.map(|r| r.slots)),
            ("tree", c.tree.map(|r| r.slots)),
            ("drafts", c.drafts.map(|r| r.slots)),
        ];
        for (group, count) in per_verify_slot {
            match (count, verify_slots) {
                (Some(count), Some(verify_slots)) if count != verify_slots => {
                    found.push(Disagreement::GroupVerifySlots {
                        group,
                        count,
                        verify_slots,
                    });
                }
                (Some(count), None) if count > slots => found.push(Disagreement::GroupSlots {
                    group,
                    key: "slots",
                    count,
                    slots,
                }),
                _ => {}
            }
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

impl ServingProfile<'_> {
    /// Every count of `inputs` (formats and the draft KV dtype aside: not counts) that is not
    /// the one this profile derives, by inputs-file key; or the profile's own fault.
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
    fn only_counts_no_server_can_have_are_refused() {
        use crate::model::CarryInputs;
        // The reference engine's shape: 129 live slots, 33 verify slots (32 sequences and the
        // dummy), a carried-state stash per verify slot, tables of a fixed capacity, a ring
        // over the real sequences only.
        let h_steps = [4; 33];
        let mut inputs = StateInputs {
            slots: 129,
            verify: Some(VerifyInputs {
                h_steps: HSteps::PerSlot(&h_steps),
                conv_steps: 4,
            }),
            caches: CacheInputs {
                verify_table_rows: 128,
                carry: Some(CarryInputs {
                    slots: 33,
                    table_rows: 128,
                }),
                ring: Some(RingInputs {
                    ring_slots: 8,
                    seq_slots: 128,
                }),
                ..CacheInputs::EMPTY
            },
            ..StateInputs::EMPTY
        };
        assert_eq!(inputs.disagreements(), []);
        // More verify slots than live ones, a ring over more sequences than live: refused.
        inputs.slots = 32;
        assert_eq!(
            inputs.disagreements(),
            [
                Disagreement::VerifySlots {
                    verify_slots: 33,
                    slots: 32
                },
                Disagreement::GroupSlots {
                    group: "ring",
                    key: "seq_slots",
                    count: 128,
                    slots: 32
                },
            ]
        );
        assert!(inputs.agreed().is_err());
        // A carry stash of another count than the verify slots: refused.
        inputs.slots = 129;
        inputs.caches.carry = Some(CarryInputs {
            slots: 129,
            table_rows: 128,
        });
        assert_eq!(
            inputs.disagreements(),
            [Disagreement::GroupVerifySlots {
                group: "carry",
                count: 129,
                verify_slots: 33
            }]
        );
        // Without verify inputs a verify group is only bounded by the slots.
        inputs.verify = None;
        assert!(inputs.agreed().is_ok());
        inputs.slots = 100;
        assert_eq!(
            inputs.disagreements(),
            [
                Disagreement::GroupSlots {
                    group: "ring",
                    key: "seq_slots",
                    count: 128,
                    slots: 100
                },
                Disagreement::GroupSlots {
                    group: "carry",
                    key: "slots",
                    count: 129,
                    slots: 100
                },
            ]
        );
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
