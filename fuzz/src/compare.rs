//! Generated == dynamic on fuzzed inputs: for each real circuit, the generated module compiled
//! into `metrale-tests` (its `Inputs::from_state_inputs` and `AnyPlan::new`) and the dynamic
//! `DynamicPlan::new` on the loaded circuit's declarations, compared term by term (region,
//! kind, lifetime, space), arena by arena, lifetime by lifetime, page pool and device bytes (an
//! `AnyPlan`'s the arena's or, under vLLM's policy, its pool's end), or error by error; and a
//! generated plan on dims read from a `config.json` at run time against the dynamic plan of the
//! checkpoint the same config adds.
//!
//! Owns the table of the generated modules ([`ARCHS`]): one entry per circuit of `circuits/`,
//! as `metrale-tests` includes them.
//!
//! Invariants: a comparison of equal plans returns no difference; inputs the generated
//! `Inputs` refuses (a format key the circuit names and the file lacks) are not compared,
//! since the dynamic plan needs only the keys of one checkpoint.

use metrale_circuit::dynamic::{DynamicPlan, decl::StateDecl};
use metrale_circuit::load::Circuit;
use metrale_circuit::serving::pages::PoolPlan;
use metrale_circuit::{DEFAULT_ALIGN, Lifetime, PlanError, Region, Space, StateInputs, TermInfo};

/// A real circuit, loaded, with every checkpoint instantiated once.
pub struct Loaded {
    /// Its path relative to the workspace root.
    pub path: &'static str,
    /// The checkpoints' names and declarations, in file order.
    pub checkpoints: Vec<(String, Vec<StateDecl>)>,
    /// The comparison of its generated module.
    pub compare: Compare,
    /// The comparison of its generated module on dims read from a config.
    pub agrees_with_config: ConfigCompare,
}

/// Compares one circuit's generated plans with its dynamic plans under `inputs` and `align`;
/// `Ok(false)` when the generated `Inputs` refused the formats (nothing compared).
pub type Compare = fn(&Loaded, &StateInputs<'_>, u64) -> Result<bool, String>;

/// Compares the generated plan of checkpoint `like` on `dims` (what `dims_from_config` read)
/// under `inputs` with `dynamic`, the dynamic plan of the checkpoint `with_config` added from
/// the same config; `Ok` too when the generated `Inputs` refuses the formats.
pub type ConfigCompare = fn(
    like: &str,
    dims: &[(String, u64)],
    inputs: &StateInputs<'_>,
    dynamic: &Result<DynamicPlan, PlanError<String>>,
) -> Result<(), String>;

impl Loaded {
    /// Loads `path` under `root` and instantiates every checkpoint.
    ///
    /// # Errors
    /// When the circuit does not load (the workspace is broken) or is not the generated one.
    pub fn new(
        root: &std::path::Path,
        path: &'static str,
        compare: Compare,
        agrees_with_config: ConfigCompare,
    ) -> Result<Self, String> {
        let circuit = Circuit::load(root.join(path)).map_err(|e| format!("{path}: {e}"))?;
        let mut checkpoints = Vec::new();
        for checkpoint in circuit.checkpoints() {
            let decls = circuit
                .instantiate(checkpoint.name())
                .map_err(|e| format!("{path}: {e}"))?;
            checkpoints.push((checkpoint.name().to_owned(), decls));
        }
        Ok(Self {
            path,
            checkpoints,
            compare,
            agrees_with_config,
        })
    }

    /// The declarations of checkpoint `name`.
    fn decls(&self, name: &str) -> Result<&[StateDecl], String> {
        self.checkpoints
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, d)| d.as_slice())
            .ok_or_else(|| {
                format!(
                    "{}: the generated checkpoint `{name}` is not in the circuit",
                    self.path
                )
            })
    }
}

/// A generated plan as compared: its regions, device and host bytes, per-lifetime bytes and
/// page pool.
struct Generated {
    regions: Vec<Region>,
    arenas: [u64; 2],
    lifetimes: Vec<u64>,
    pool: Option<PoolPlan>,
}

/// Bytes per (space, lifetime), in a fixed order.
fn lifetimes_of(bytes: impl Fn(Space, Lifetime) -> u64) -> Vec<u64> {
    Space::ALL
        .iter()
        .flat_map(|&space| Lifetime::LAYOUT_ORDER.map(|lifetime| bytes(space, lifetime)))
        .collect()
}

/// The differences between one generated plan and the dynamic one; empty when they agree.
fn differences(
    what: &str,
    terms: &[TermInfo],
    generated: Result<Generated, PlanError>,
    dynamic: &Result<DynamicPlan, PlanError<String>>,
) -> Result<(), String> {
    match (generated, dynamic) {
        (Ok(generated), Ok(plan)) => {
            let mut matched = 0;
            for (info, region) in terms.iter().zip(&generated.regions) {
                match plan.term(info.state, info.holding) {
                    Some(term) => {
                        matched += 1;
                        if term.region() != *region {
                            return Err(format!(
                                "{what}: `{}` {:?}: generated {region:?}, dynamic {:?}",
                                info.state,
                                info.holding,
                                term.region()
                            ));
                        }
                        if (term.kind, term.lifetime, term.space)
                            != (info.kind, info.lifetime, info.space)
                        {
                            return Err(format!(
                                "{what}: `{}` {:?}: generated kind/lifetime/space {:?}, dynamic {:?}",
                                info.state,
                                info.holding,
                                (info.kind, info.lifetime, info.space),
                                (term.kind, term.lifetime, term.space)
                            ));
                        }
                    }
                    None if (region.units, region.bytes, region.offset) != (0, 0, 0) => {
                        return Err(format!(
                            "{what}: `{}` {:?} is absent from the dynamic plan but generated {region:?}",
                            info.state, info.holding
                        ));
                    }
                    None => {}
                }
            }
            if matched != plan.terms().len() {
                return Err(format!(
                    "{what}: {matched} generated fields match {} dynamic terms",
                    plan.terms().len()
                ));
            }
            let arenas = [plan.device_bytes(), plan.host_bytes()];
            if generated.arenas != arenas {
                return Err(format!(
                    "{what}: arenas generated {:?}, dynamic {arenas:?}",
                    generated.arenas
                ));
            }
            if generated.lifetimes != lifetimes_of(|s, l| plan.lifetime_bytes(s, l)) {
                return Err(format!("{what}: per-lifetime bytes differ"));
            }
            let pool = plan.pool().map(|pool| pool.plan);
            if generated.pool != pool {
                return Err(format!(
                    "{what}: page pool generated {:?}, dynamic {pool:?}",
                    generated.pool
                ));
            }
            Ok(())
        }
        (Err(generated), Err(dynamic)) => {
            if PlanError::<String>::from(generated) == *dynamic {
                Ok(())
            } else {
                Err(format!(
                    "{what}: generated error `{generated}`, dynamic error `{dynamic}`"
                ))
            }
        }
        (Ok(_), Err(dynamic)) => Err(format!(
            "{what}: generated a plan, dynamic error `{dynamic}`"
        )),
        (Err(generated), Ok(_)) => Err(format!(
            "{what}: generated error `{generated}`, dynamic a plan"
        )),
    }
}

/// An `AnyPlan` as compared; its device bytes must be its arena's or, under vLLM's policy, its
/// page pool's end (C1: they were the arena's alone).
macro_rules! generated_of {
    ($plan:expr) => {{
        let plan = $plan;
        let expected = plan
            .pool()
            .map_or(plan.arena().device_bytes, |pool: &PoolPlan| pool.end());
        if plan.device_bytes() == expected {
            Ok(Generated {
                regions: plan.regions().as_slice().to_vec(),
                arenas: [plan.device_bytes(), plan.host_bytes()],
                lifetimes: lifetimes_of(|s, l| plan.lifetime_bytes(s, l)),
                pool: plan.pool().copied(),
            })
        } else {
            Err(format!(
                "AnyPlan::device_bytes is {}, its arena and pool make {expected}",
                plan.device_bytes()
            ))
        }
    }};
}

/// One `Compare` and one `ConfigCompare` per generated module, and the table of them.
macro_rules! generated_modules {
    ($($arch:ident),* $(,)?) => {
        $(
            /// The comparisons of this circuit's generated module.
            mod $arch {
                use super::*;

                /// Compares the generated module of this circuit with its dynamic plans.
                pub(super) fn compare(
                    loaded: &Loaded,
                    inputs: &StateInputs<'_>,
                    align: u64,
                ) -> Result<bool, String> {
                    use metrale_tests::$arch::{AnyPlan, Checkpoint, Inputs};
                    let Ok(generated_inputs) = Inputs::from_state_inputs(inputs) else {
                        return Ok(false);
                    };
                    for checkpoint in Checkpoint::ALL {
                        let what = format!("{} checkpoint `{}`", loaded.path, checkpoint.name());
                        let dynamic = DynamicPlan::new(loaded.decls(checkpoint.name())?, inputs, align);
                        let generated = match AnyPlan::new(checkpoint, checkpoint.dims(), &generated_inputs, align) {
                            Ok(plan) => Ok(generated_of!(plan).map_err(|e| format!("{what}: {e}"))?),
                            Err(error) => Err(error),
                        };
                        differences(&what, checkpoint.terms(), generated, &dynamic)?;
                        if let Ok(plan) = &dynamic {
                            let violations = crate::invariants::layout(plan, &what);
                            if let Some(first) = violations.into_iter().next() {
                                return Err(first);
                            }
                        }
                    }
                    Ok(true)
                }

                /// The generated plan of `like` on `dims` against `dynamic`.
                pub(super) fn agrees_with_config(
                    like: &str,
                    dims: &[(String, u64)],
                    inputs: &StateInputs<'_>,
                    dynamic: &Result<DynamicPlan, PlanError<String>>,
                ) -> Result<(), String> {
                    use metrale_tests::$arch::{AnyPlan, Checkpoint, Dims, Inputs};
                    let what = format!("{}'s `{like}` on dims from a config", stringify!($arch));
                    let checkpoint = Checkpoint::from_name(like)
                        .ok_or_else(|| format!("{what}: no generated checkpoint"))?;
                    let dims = Dims::try_from(dims)
                        .map_err(|e| format!("{what}: Dims refuses what dims_from_config read: {e}"))?;
                    let Ok(generated_inputs) = Inputs::from_state_inputs(inputs) else {
                        return Ok(());
                    };
                    let generated = match AnyPlan::new(checkpoint, &dims, &generated_inputs, DEFAULT_ALIGN) {
                        Ok(plan) => Ok(generated_of!(plan).map_err(|e| format!("{what}: {e}"))?),
                        Err(error) => Err(error),
                    };
                    differences(&what, checkpoint.terms(), generated, dynamic)
                }
            }
        )*

        /// Every generated circuit's checkpoints, for a registry over all of them.
        pub const ENTRIES: &[metrale_circuit::serving::registry::CircuitEntry<'static>] =
            &[$(metrale_tests::$arch::ENTRY),*];

        /// Every circuit of `circuits/` (the arch is the file's stem) and its comparisons.
        pub const ARCHS: &[(&str, Compare, ConfigCompare)] = &[
            $((concat!("circuits/", stringify!($arch), ".toml"), $arch::compare, $arch::agrees_with_config)),*
        ];
    };
}

generated_modules!(
    deepseek_v3,
    deepseek_v32,
    falcon_h1,
    gemma2,
    gemma3,
    gemma3n,
    gpt_oss,
    granite_4_h,
    jamba,
    kimi_linear,
    llama,
    llama4,
    minimax_m1,
    mistral,
    nemotron_h,
    qwen3_5,
    qwen3_next,
    whisper,
);

/// Every real circuit loaded for the comparison.
///
/// # Errors
/// When one does not load, or `metrale-tests` includes circuits this table lacks.
pub fn load_all(root: &std::path::Path) -> Result<Vec<Loaded>, String> {
    let listed: Vec<&str> = ARCHS.iter().map(|(path, ..)| *path).collect();
    if listed != metrale_tests::CIRCUITS {
        return Err(format!(
            "the fuzzer compares {listed:?} but metrale-tests generates {:?}",
            metrale_tests::CIRCUITS
        ));
    }
    ARCHS
        .iter()
        .map(|&(path, compare, config)| Loaded::new(root, path, compare, config))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_inputs_agree_on_every_circuit() {
        let root = crate::corpus::workspace_root();
        let text = std::fs::read_to_string(root.join("metrale-codegen/cli/inputs/default.toml"))
            .expect("default inputs");
        let file = metrale_circuit::load::InputsFile::parse("default.toml", &text).expect("parses");
        let view = file.view();
        for loaded in load_all(&root).expect("loads") {
            assert_eq!(
                (loaded.compare)(&loaded, &view.inputs(), 256),
                Ok(true),
                "{}",
                loaded.path
            );
        }
    }
}
