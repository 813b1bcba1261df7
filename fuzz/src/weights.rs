//! The `weights` target: `fit --weights` on mutated safetensors metadata, laid out on disk as
//! each `@w:` token of the command line names (the input's body is the JSON a layout writes):
//!
//! | token | what is written | what `fit` must do |
//! | --- | --- | --- |
//! | `@w:file` | `model.safetensors`: the header's length, the body as header, the data its spans declare (none past [`MAX_DATA`]) | accepted: the weights are the data's bytes |
//! | `@w:short` | the same, one byte of data short | refuse |
//! | `@w:long` | the body after a length of `u64::MAX` | refuse |
//! | `@w:index` | the body as `model.safetensors.index.json` | accepted: the weights are its `metadata.total_size` |
//! | `@w:folder` | a folder of the `@w:file` file and a valid 8-byte shard | accepted: the weights are both files' data |
//! | `@w:fifo`, `@w:fifo-folder` | a FIFO, alone or as a folder's shard | refuse, at once |
//! | `@w:loop`, `@w:dir-shard` | a symlink to itself; a folder whose shard is a folder | refuse |
//!
//! Besides the command's own invariants ([`invariants::outcome`]): a layout it must refuse is
//! refused naming the file (its last component) on stderr; an answer under `--json` states the weights the
//! layout's metadata declares, computed here from the JSON with `serde_json`, not by the reader.

use std::path::{Path, PathBuf};

use metrale_cli::Status;

use crate::command;
use crate::invariants;
use crate::surfaces::cli_exec;
use crate::targets::{Context, Exec};

/// The most data bytes a layout writes: a header declaring more is laid out without data, so
/// the reader must refuse it for its missing bytes.
pub const MAX_DATA: u64 = 1 << 20;

/// A valid second shard of `@w:folder`: one F32 tensor of 2 elements.
const SECOND_SHARD_HEADER: &str = r#"{"b":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}"#;

/// What a layout wrote: the path given to `--weights`, the file `fit` must name if it refuses,
/// whether it must refuse, and the weights an answer must state.
struct Laid {
    path: PathBuf,
    named: String,
    refuse: bool,
    weights: Option<u64>,
}

impl Context<'_> {
    /// The `weights` target.
    pub(crate) fn weights(&self, bytes: &[u8]) -> Exec {
        let (tokens, body) = command::split(bytes);
        self.fresh();
        let dir = self.scratch.join("out/weights");
        if let Err(error) = std::fs::create_dir_all(&dir) {
            panic!("cannot create {}: {error}", dir.display());
        }
        let mut laid: Option<Laid> = None;
        let tokens: Vec<String> = tokens
            .iter()
            .map(|token| match token.strip_prefix("@w:") {
                Some(layout) if laid.is_none() => match lay_out(layout, body, &dir) {
                    Some(l) => {
                        let path = l.path.to_string_lossy().into_owned();
                        laid = Some(l);
                        path
                    }
                    None => token.clone(),
                },
                _ => token.clone(),
            })
            .collect();
        let args = self.expand(&tokens, None);
        let verdict = command::verdict(&tokens);
        let outcome = metrale_cli::run(args);
        let mut violations = invariants::outcome(&outcome, &verdict);
        let weights_given = command::option(&tokens, "--weights").is_some_and(|w| {
            laid.as_ref()
                .is_some_and(|l| Path::new(w) == l.path.as_path())
        });
        if let (Some(laid), true) = (&laid, weights_given) {
            match outcome.status {
                Status::Ok if laid.refuse => violations.push(format!(
                    "`fit --weights` accepts {}, which it must refuse",
                    laid.named
                )),
                Status::Ok => {
                    violations.extend(stated_weights(&outcome.stdout, &tokens, laid.weights));
                }
                Status::BadInput
                    if laid.refuse
                        && !outcome.stderr.contains(&laid.named)
                        && self.answers_with_a_size(&tokens) =>
                {
                    violations.push(format!(
                        "`fit --weights` refuses without naming `{}`: {}",
                        laid.named,
                        invariants::first_line(&outcome.stderr)
                    ));
                }
                _ => {}
            }
        }
        cli_exec(&outcome, violations)
    }
}

impl Context<'_> {
    /// Whether the same command line with `--weights 1` (one byte) answers: then a refusal
    /// with the file is the file's, and must name it.
    fn answers_with_a_size(&self, tokens: &[String]) -> bool {
        let mut control = tokens.to_vec();
        if let Some(at) = control.iter().position(|t| t == "--weights")
            && let Some(value) = control.get_mut(at + 1)
        {
            "1".clone_into(value);
        }
        metrale_cli::run(self.expand(&control, None)).status == Status::Ok
    }
}

/// The weights an answer under `--json` states, against what the layout declared.
fn stated_weights(stdout: &str, tokens: &[String], declared: Option<u64>) -> Vec<String> {
    if !tokens.iter().any(|t| t == "--json") {
        return Vec::new();
    }
    let stated = serde_json::from_str::<serde_json::Value>(stdout)
        .ok()
        .and_then(|v| v.get("weights")?.as_u64());
    match (stated, declared) {
        (Some(stated), Some(declared)) if stated != declared => vec![format!(
            "`fit --json` states {stated} B of weights, the metadata declares {declared} B"
        )],
        (None, _) => vec!["`fit --json` with --weights states no `weights`".to_owned()],
        _ => Vec::new(),
    }
}

/// Writes `layout` under `dir` with `body`; `None` for a token no layout has.
fn lay_out(layout: &str, body: &[u8], dir: &Path) -> Option<Laid> {
    let file = dir.join("model.safetensors");
    let file_name = "model.safetensors".to_owned();
    let declared = declared_end(body);
    let data = declared.filter(|end| *end <= MAX_DATA).unwrap_or(0);
    Some(match layout {
        "file" | "short" => {
            let short = layout == "short" && data > 0;
            Context::put(&file, &safetensors(body, data - u64::from(short)));
            Laid {
                path: file,
                named: file_name,
                refuse: short,
                weights: Some(data),
            }
        }
        "long" => {
            let mut bytes = u64::MAX.to_le_bytes().to_vec();
            bytes.extend_from_slice(body);
            Context::put(&file, &bytes);
            Laid {
                path: file,
                named: file_name,
                refuse: true,
                weights: None,
            }
        }
        "index" => {
            let index = dir.join("model.safetensors.index.json");
            Context::put(&index, body);
            Laid {
                path: index,
                named: "model.safetensors.index.json".to_owned(),
                refuse: false,
                weights: total_size(body),
            }
        }
        "folder" => {
            Context::put(
                &dir.join("model-00001.safetensors"),
                &safetensors(body, data),
            );
            Context::put(
                &dir.join("model-00002.safetensors"),
                &safetensors(SECOND_SHARD_HEADER.as_bytes(), 8),
            );
            Laid {
                path: dir.to_path_buf(),
                named: "weights".to_owned(),
                refuse: false,
                weights: Some(data + 8),
            }
        }
        "fifo" | "fifo-folder" => {
            let fifo = dir.join("shard.safetensors");
            let made = std::process::Command::new("mkfifo").arg(&fifo).status();
            assert!(
                made.is_ok_and(|s| s.success()),
                "mkfifo {} failed",
                fifo.display()
            );
            Laid {
                path: if layout == "fifo" {
                    fifo
                } else {
                    dir.to_path_buf()
                },
                named: "shard.safetensors".to_owned(),
                refuse: true,
                weights: None,
            }
        }
        "loop" => {
            let link = dir.join("loop.safetensors");
            symlink(&link, &link);
            Laid {
                path: link,
                named: "loop.safetensors".to_owned(),
                refuse: true,
                weights: None,
            }
        }
        "dir-shard" => {
            let _ = std::fs::create_dir_all(dir.join("shard.safetensors"));
            Laid {
                path: dir.to_path_buf(),
                named: "shard.safetensors".to_owned(),
                refuse: true,
                weights: None,
            }
        }
        _ => return None,
    })
}

#[cfg(unix)]
fn symlink(link: &Path, to: &Path) {
    if let Err(error) = std::os::unix::fs::symlink(to, link) {
        panic!("cannot link {}: {error}", link.display());
    }
}

#[cfg(not(unix))]
fn symlink(_: &Path, _: &Path) {}

/// A safetensors file: `header`'s length, `header`, then `data` zero bytes.
fn safetensors(header: &[u8], data: u64) -> Vec<u8> {
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header);
    bytes.resize(bytes.len() + usize::try_from(data).unwrap_or(0), 0);
    bytes
}

/// The end of the data a header's tensors declare (the largest `data_offsets` end), when the
/// header is a JSON object.
fn declared_end(header: &[u8]) -> Option<u64> {
    let value: serde_json::Value = serde_json::from_slice(header).ok()?;
    let tensors = value.as_object()?;
    Some(
        tensors
            .iter()
            .filter(|(name, _)| *name != "__metadata__")
            .filter_map(|(_, t)| t.get("data_offsets")?.get(1)?.as_u64())
            .max()
            .unwrap_or(0),
    )
}

/// An index's `metadata.total_size`.
fn total_size(index: &[u8]) -> Option<u64> {
    let value: serde_json::Value = serde_json::from_slice(index).ok()?;
    value.get("metadata")?.get("total_size")?.as_u64()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::{Corpus, workspace_root};
    use crate::targets::Target;

    #[test]
    fn every_weights_seed_passes_and_each_layout_answers_as_it_must() {
        let corpus = Corpus::read(&workspace_root()).expect("corpus");
        let scratch =
            std::env::temp_dir().join(format!("metrale-fuzz-weights-{}", std::process::id()));
        let context = Context::new(&corpus, &[], scratch.clone(), 0).expect("context");
        let mut accepted = std::collections::BTreeMap::new();
        for index in 0..context.seed_count(Target::Weights) {
            let (name, text) = context.seed(Target::Weights, index);
            let exec = context.exec(Target::Weights, index, text.as_bytes());
            assert!(exec.violations.is_empty(), "{name}@{index}: {exec:?}");
            let layout = text
                .split("@w:")
                .nth(1)
                .and_then(|t| t.split_whitespace().next());
            *accepted.entry(layout.unwrap_or("")).or_insert(0) += usize::from(exec.accepted);
        }
        let _ = std::fs::remove_dir_all(scratch);
        // Each header body is a valid file (3 of 5 bodies are headers), `short` only of the
        // empty header (no byte to cut); of the 2 index bodies one answers (the other declares
        // 8 PB, more than the GPU); the refused layouts never answer.
        for (layout, count) in [
            ("file", 3),
            ("short", 1),
            ("index", 1),
            ("folder", 3),
            ("long", 0),
            ("fifo", 0),
            ("fifo-folder", 0),
            ("loop", 0),
            ("dir-shard", 0),
        ] {
            assert_eq!(accepted.get(layout), Some(&count), "{layout}: {accepted:?}");
        }
    }

    #[test]
    fn an_answer_stating_other_weights_than_declared_is_a_finding() {
        let json = "{\"weights\": 64}";
        let tokens = ["--json".to_owned()];
        assert!(stated_weights(json, &tokens, Some(64)).is_empty());
        assert_eq!(stated_weights(json, &tokens, Some(32)).len(), 1);
        assert_eq!(stated_weights("{}", &tokens, Some(32)).len(), 1);
    }

    #[test]
    fn a_header_declares_its_largest_span_end() {
        assert_eq!(
            declared_end(
                br#"{"__metadata__":{},"a":{"data_offsets":[8,24]},"b":{"data_offsets":[0,8]}}"#
            ),
            Some(24)
        );
        assert_eq!(declared_end(b"{}"), Some(0));
        assert_eq!(declared_end(b"[1]"), None);
        assert_eq!(
            safetensors(b"{}", 3),
            [2, 0, 0, 0, 0, 0, 0, 0, b'{', b'}', 0, 0, 0]
        );
    }
}
