//! One run-time path for an engine with several circuits ([`Registry`]): each generated module
//! lists its checkpoints as a [`CircuitEntry`] (`<arch>::ENTRY`), and the registry resolves a
//! model the server is asked for, by checkpoint name or Hugging Face id, across all of them,
//! reporting an ambiguity (`tiny` in two circuits) instead of picking the first.
//!
//! Owner: metrale-circuit (runtime).
//! Invariants:
//! - A name matches exactly; a Hugging Face id with ASCII case ignored, as the Hub resolves
//!   ids (`same_id`, the rule of a generated `Checkpoint::from_hf`). `<arch>:<name>` (or
//!   `<arch>:<id>`) asks one circuit only.
//! - Every match is reported: one is the answer, none or several an error listing what exists
//!   or what matched.
//! - No allocation but the error's list: an engine resolves once, at start.

use crate::model::inputs::{same_id, same_str};

/// The checkpoints one circuit has: its arch and each checkpoint's name and Hugging Face id, in
/// `Checkpoint::ALL` order (a generated module's `ENTRY`, `'static`; or built at run time, for a
/// circuit loaded then).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CircuitEntry<'a> {
    /// The circuit's arch, its module's name (`qwen3_5`).
    pub arch: &'a str,
    /// Each checkpoint's name and Hugging Face id, in `Checkpoint::ALL` order.
    pub checkpoints: &'a [(&'a str, Option<&'a str>)],
}

/// What a query resolved to: the circuit (its index in the registry, and its arch) and the
/// checkpoint (its index in that circuit's `Checkpoint::ALL`, and its name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resolved<'a> {
    /// The circuit's index in the registry.
    pub circuit: usize,
    /// The circuit's arch.
    pub arch: &'a str,
    /// The checkpoint's index in its circuit's `Checkpoint::ALL`.
    pub checkpoint: usize,
    /// The checkpoint's name.
    pub name: &'a str,
}

/// Why a query resolved to no one checkpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegistryError {
    /// No circuit has a checkpoint of that name or id.
    Unknown {
        /// The query.
        query: String,
        /// Every `<arch>:<name>` the registry has.
        known: Vec<String>,
    },
    /// Several checkpoints match: `<arch>:<name>` picks one.
    Ambiguous {
        /// The query.
        query: String,
        /// Every `<arch>:<name>` that matches.
        matches: Vec<String>,
    },
}

impl std::fmt::Display for RegistryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RegistryError::Unknown { query, known } => write!(
                f,
                "no checkpoint is named `{query}` or has that Hugging Face id; known: {}",
                known.join(", ")
            ),
            RegistryError::Ambiguous { query, matches } => write!(
                f,
                "`{query}` names several checkpoints: {}; ask for one as `<arch>:<name>`",
                matches.join(", ")
            ),
        }
    }
}

impl std::error::Error for RegistryError {}

/// The circuits an engine serves, each a generated module's `ENTRY`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Registry<'a> {
    /// The circuits, in the order given.
    pub circuits: &'a [CircuitEntry<'a>],
}

impl<'a> Registry<'a> {
    /// The one checkpoint `query` names: a checkpoint name, a Hugging Face id (ASCII case
    /// ignored), or either after `<arch>:` to ask one circuit.
    ///
    /// # Errors
    /// [`RegistryError::Unknown`] when nothing matches, [`RegistryError::Ambiguous`] when
    /// several do.
    pub fn resolve(&self, query: &str) -> Result<Resolved<'a>, RegistryError> {
        let (arch, wanted) = match query.split_once(':') {
            Some((arch, rest)) => (Some(arch), rest),
            None => (None, query),
        };
        let mut matches = self.matches(arch, wanted);
        match (matches.next(), matches.next()) {
            (Some(one), None) => Ok(one),
            (None, _) => Err(RegistryError::Unknown {
                query: query.to_owned(),
                known: self.all().map(qualified).collect(),
            }),
            (Some(first), Some(second)) => Err(RegistryError::Ambiguous {
                query: query.to_owned(),
                matches: [first, second]
                    .into_iter()
                    .chain(matches)
                    .map(qualified)
                    .collect(),
            }),
        }
    }

    /// The checkpoints of circuit `arch` (every circuit when `None`) that `wanted` names: none
    /// when it is empty (`""`, `llama:`), which names nothing.
    fn matches<'s>(
        &'s self,
        arch: Option<&'s str>,
        wanted: &'s str,
    ) -> impl Iterator<Item = Resolved<'a>> + 's {
        self.circuits
            .iter()
            .enumerate()
            .filter(move |(_, c)| arch.is_none_or(|a| same_str(a, c.arch)))
            .flat_map(move |(circuit, entry)| {
                entry
                    .checkpoints
                    .iter()
                    .enumerate()
                    .filter(move |(_, (name, hf))| {
                        !wanted.is_empty()
                            && (same_str(name, wanted) || hf.is_some_and(|id| same_id(id, wanted)))
                    })
                    .map(move |(checkpoint, (name, _))| Resolved {
                        circuit,
                        arch: entry.arch,
                        checkpoint,
                        name,
                    })
            })
    }

    /// Every checkpoint of every circuit, in order.
    fn all(&self) -> impl Iterator<Item = Resolved<'a>> + '_ {
        self.circuits
            .iter()
            .enumerate()
            .flat_map(|(circuit, entry)| {
                entry
                    .checkpoints
                    .iter()
                    .enumerate()
                    .map(move |(checkpoint, (name, _))| Resolved {
                        circuit,
                        arch: entry.arch,
                        checkpoint,
                        name,
                    })
            })
    }
}

/// `<arch>:<name>`.
fn qualified(resolved: Resolved<'_>) -> String {
    format!("{}:{}", resolved.arch, resolved.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    const QWEN: CircuitEntry<'static> = CircuitEntry {
        arch: "qwen3_5",
        checkpoints: &[("qwen3_5_27b", Some("Qwen/Qwen3.5-27B")), ("tiny", None)],
    };
    const LLAMA: CircuitEntry<'static> = CircuitEntry {
        arch: "llama",
        checkpoints: &[
            ("llama_3_1_8b", Some("meta-llama/Llama-3.1-8B")),
            ("tiny", None),
        ],
    };

    #[test]
    fn names_ids_and_ambiguity() {
        let registry = Registry {
            circuits: &[QWEN, LLAMA],
        };
        let at = |q: &str| {
            registry
                .resolve(q)
                .map(|r| (r.circuit, r.checkpoint, r.arch, r.name))
        };
        assert_eq!(at("qwen3_5_27b"), Ok((0, 0, "qwen3_5", "qwen3_5_27b")));
        assert_eq!(
            at("META-LLAMA/llama-3.1-8b"),
            Ok((1, 0, "llama", "llama_3_1_8b"))
        );
        assert_eq!(at("llama:tiny"), Ok((1, 1, "llama", "tiny")));
        assert_eq!(
            registry.resolve("tiny"),
            Err(RegistryError::Ambiguous {
                query: "tiny".into(),
                matches: vec!["qwen3_5:tiny".into(), "llama:tiny".into()],
            })
        );
        let unknown = registry.resolve("Tiny").unwrap_err();
        assert_eq!(
            unknown.to_string(),
            "no checkpoint is named `Tiny` or has that Hugging Face id; known: \
             qwen3_5:qwen3_5_27b, qwen3_5:tiny, llama:llama_3_1_8b, llama:tiny"
        );
        // A name is exact; `<arch>:` of a circuit the registry lacks finds nothing.
        assert!(registry.resolve("mistral:tiny").is_err());
        assert!(registry.resolve("").is_err());
    }

    #[test]
    fn an_empty_or_bare_name_names_nothing() {
        // C3: with one checkpoint, `""` and `llama:` matched it (an empty name matched all).
        let one = Registry {
            circuits: &[CircuitEntry {
                arch: "llama",
                checkpoints: &[("llama_3_1_8b", Some("meta-llama/Llama-3.1-8B"))],
            }],
        };
        for query in ["", "llama:", ":"] {
            assert_eq!(
                one.resolve(query),
                Err(RegistryError::Unknown {
                    query: query.into(),
                    known: vec!["llama:llama_3_1_8b".into()],
                })
            );
        }
        assert_eq!(
            one.resolve("llama:llama_3_1_8b").map(|r| r.name),
            Ok("llama_3_1_8b")
        );
    }
}
