//! `fit --weights`: the bytes of a checkpoint's weights, as a size (`17GiB`) or read exactly
//! from its safetensors metadata, never from its tensors: a `model.safetensors.index.json`'s
//! `metadata.total_size`, a `.safetensors` file's header (its tensors' `data_offsets`), or a
//! folder holding either (the index when there is one, else every `.safetensors` file in it).
//!
//! The safetensors format (huggingface/safetensors, `safetensors/src/tensor.rs` at 45c8c2cb,
//! `SafeTensors::read_metadata`): 8 bytes, the header's length `N` as a little-endian `u64`;
//! then `N` bytes of JSON, an object mapping each tensor's name to `{ dtype, shape,
//! data_offsets: [begin, end] }` (byte offsets into the data that follows the header) and an
//! optional `__metadata__` of strings.
//!
//! Invariants:
//! - At most [`MAX_HEADER`] bytes of a header are read, and an index file of at most
//!   [`MAX_INDEX`] bytes: a malformed or hostile file costs bounded memory.
//! - Every error names the file and what is wrong, and what would be valid; sums are checked.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use metrale_circuit::load::diag::{Diagnostic, Diagnostics};
use serde_json::Value;

/// The most bytes of a safetensors header read (safetensors itself refuses headers past
/// 100 MB: `MAX_HEADER_SIZE` in the same `tensor.rs`).
const MAX_HEADER: u64 = 100_000_000;

/// The most bytes of an index file read.
const MAX_INDEX: u64 = 64 << 20;

/// The index file a sharded checkpoint's folder holds.
const INDEX: &str = "model.safetensors.index.json";

/// The weights' bytes and where they were read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Weights {
    /// Bytes.
    pub bytes: u64,
    /// Where they come from: `given`, or the files read.
    pub source: String,
}

/// Reads `--weights`: a size, or a path as the module doc says.
///
/// # Errors
/// A diagnostic naming the file and what is wrong with it.
pub fn weights(arg: &str) -> Result<Weights, Diagnostics> {
    if let Ok(bytes) = metrale_circuit::load::parse_size(arg) {
        return Ok(Weights {
            bytes,
            source: "given".to_owned(),
        });
    }
    let path = Path::new(arg);
    if path.is_dir() {
        return folder(path);
    }
    if !path.exists() {
        let d = Diagnostic::error(format!("`--weights {arg}` is neither a size nor a file")).help(
            "give the weights' bytes (17GiB, 17179869184), a `model.safetensors.index.json`, a \
             `.safetensors` file, or the folder of a checkpoint",
        );
        return Err(d.into());
    }
    let bytes = if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"))
    {
        index(path)?
    } else {
        header(path)?
    };
    Ok(Weights {
        bytes,
        source: arg.to_owned(),
    })
}

/// A checkpoint's folder: its index, or the sum of its `.safetensors` files' headers.
fn folder(path: &Path) -> Result<Weights, Diagnostics> {
    let index_path = path.join(INDEX);
    if index_path.is_file() {
        return Ok(Weights {
            bytes: index(&index_path)?,
            source: index_path.display().to_string(),
        });
    }
    let listing = std::fs::read_dir(path).map_err(|e| {
        Diagnostic::error(format!("cannot read the folder `{}`: {e}", path.display()))
    })?;
    let mut files: Vec<PathBuf> = listing
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|p| p.extension().is_some_and(|e| e == "safetensors"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(Diagnostic::error(format!(
            "the folder `{}` holds no `{INDEX}` and no `.safetensors` file",
            path.display()
        ))
        .help("give the weights' bytes instead, or the checkpoint's folder")
        .into());
    }
    let mut bytes = 0u64;
    for file in &files {
        bytes = bytes.checked_add(header(file)?).ok_or_else(|| {
            Diagnostic::error(format!(
                "the weights of `{}` overflow u64 bytes",
                path.display()
            ))
        })?;
    }
    Ok(Weights {
        bytes,
        source: format!("{} ({} files)", path.display(), files.len()),
    })
}

/// A `model.safetensors.index.json`: its `metadata.total_size`.
fn index(path: &Path) -> Result<u64, Diagnostics> {
    let shown = path.display();
    let text = read_at_most(path, MAX_INDEX)?;
    let json: Value = serde_json::from_slice(&text).map_err(|e| {
        Diagnostic::error(format!("`{shown}` is not JSON: {e}")).in_file(shown.to_string())
    })?;
    let total = json
        .get("metadata")
        .and_then(|m| m.get("total_size"))
        .and_then(Value::as_u64)
        .ok_or_else(|| {
            Diagnostic::error(format!(
                "`{shown}` has no `metadata.total_size` (a non-negative integer)"
            ))
            .in_file(shown.to_string())
            .help("a safetensors index holds `{\"metadata\": {\"total_size\": <bytes>}, \"weight_map\": {...}}`")
        })?;
    Ok(total)
}

/// A `.safetensors` file's tensor bytes, from its header: the sum of its tensors'
/// `data_offsets` spans.
fn header(path: &Path) -> Result<u64, Diagnostics> {
    let shown = path.display().to_string();
    let bad = |what: String| {
        Diagnostic::error(format!("`{shown}` is not a safetensors file: {what}"))
            .in_file(shown.clone())
            .help("a safetensors file starts with its header's length (8 bytes, little-endian), then the header's JSON")
    };
    let mut file =
        File::open(path).map_err(|e| Diagnostic::error(format!("cannot read `{shown}`: {e}")))?;
    let mut length = [0u8; 8];
    file.read_exact(&mut length)
        .map_err(|_| bad("shorter than the 8 bytes of its header's length".to_owned()))?;
    let length = u64::from_le_bytes(length);
    if length > MAX_HEADER {
        return Err(bad(format!(
            "a header of {length} bytes, past safetensors' limit of {MAX_HEADER}"
        ))
        .into());
    }
    let mut text = Vec::new();
    file.take(length)
        .read_to_end(&mut text)
        .map_err(|e| Diagnostic::error(format!("cannot read `{shown}`: {e}")))?;
    if text.len() as u64 != length {
        return Err(bad(format!(
            "its header says {length} bytes, the file holds {}",
            text.len()
        ))
        .into());
    }
    let json: Value =
        serde_json::from_slice(&text).map_err(|e| bad(format!("its header is not JSON: {e}")))?;
    let Value::Object(tensors) = json else {
        return Err(bad("its header is not a JSON object".to_owned()).into());
    };
    let mut bytes = 0u64;
    for (name, tensor) in &tensors {
        if name == "__metadata__" {
            continue;
        }
        let span = tensor
            .get("data_offsets")
            .and_then(Value::as_array)
            .and_then(|o| match o.as_slice() {
                [begin, end] => Some((begin.as_u64()?, end.as_u64()?)),
                _ => None,
            })
            .and_then(|(begin, end)| end.checked_sub(begin))
            .ok_or_else(|| {
                bad(format!(
                    "tensor `{name}` has no `data_offsets: [begin, end]` with begin <= end"
                ))
            })?;
        bytes = bytes
            .checked_add(span)
            .ok_or_else(|| bad("its tensors' bytes overflow u64".to_owned()))?;
    }
    Ok(bytes)
}

/// The file's bytes, refused past `max`.
fn read_at_most(path: &Path, max: u64) -> Result<Vec<u8>, Diagnostics> {
    let shown = path.display();
    let file =
        File::open(path).map_err(|e| Diagnostic::error(format!("cannot read `{shown}`: {e}")))?;
    let mut text = Vec::new();
    file.take(max.saturating_add(1))
        .read_to_end(&mut text)
        .map_err(|e| Diagnostic::error(format!("cannot read `{shown}`: {e}")))?;
    if text.len() as u64 > max {
        return Err(
            Diagnostic::error(format!("`{shown}` is larger than {max} bytes"))
                .in_file(shown.to_string())
                .into(),
        );
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A safetensors file of `header` (its JSON) and `data` bytes of data, in a scratch folder.
    fn safetensors(dir: &Path, name: &str, header: &str, data: usize) -> PathBuf {
        let path = dir.join(name);
        let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
        bytes.extend_from_slice(header.as_bytes());
        bytes.resize(bytes.len() + data, 0);
        std::fs::write(&path, bytes).unwrap();
        path
    }

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("metrale-weights-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_size_an_index_a_file_and_a_folder() {
        assert_eq!(weights("17GiB").map(|w| w.bytes), Ok(17 << 30));
        let dir = scratch("shards");
        // Two shards: 2 x 3 bf16 (12 B) + 4 f32 (16 B) = 28 B, and 5 u8 = 5 B, by hand.
        let a = safetensors(
            &dir,
            "model-00001-of-00002.safetensors",
            r#"{"__metadata__":{"format":"pt"},"a":{"dtype":"BF16","shape":[2,3],"data_offsets":[0,12]},"b":{"dtype":"F32","shape":[4],"data_offsets":[12,28]}}"#,
            28,
        );
        safetensors(
            &dir,
            "model-00002-of-00002.safetensors",
            r#"{"c":{"dtype":"U8","shape":[5],"data_offsets":[0,5]}}"#,
            5,
        );
        assert_eq!(weights(a.to_str().unwrap()).map(|w| w.bytes), Ok(28));
        let folder = weights(dir.to_str().unwrap()).unwrap();
        assert_eq!(folder.bytes, 33);
        assert!(folder.source.ends_with("(2 files)"), "{}", folder.source);
        // With an index, the folder is its total.
        std::fs::write(
            dir.join(INDEX),
            r#"{"metadata":{"total_size":33},"weight_map":{"a":"model-00001-of-00002.safetensors"}}"#,
        )
        .unwrap();
        assert_eq!(weights(dir.to_str().unwrap()).map(|w| w.bytes), Ok(33));
    }

    #[test]
    fn bad_files_are_refused_with_what_is_wrong() {
        let dir = scratch("bad");
        let message = |arg: &Path| {
            weights(arg.to_str().unwrap()).unwrap_err().0[0]
                .message
                .clone()
        };
        let short = dir.join("short.safetensors");
        std::fs::write(&short, [1, 2, 3]).unwrap();
        assert!(message(&short).contains("shorter than the 8 bytes"));
        let huge = dir.join("huge.safetensors");
        std::fs::write(&huge, u64::MAX.to_le_bytes()).unwrap();
        assert!(message(&huge).contains("past safetensors' limit"));
        let cut = dir.join("cut.safetensors");
        let mut bytes = 100u64.to_le_bytes().to_vec();
        bytes.extend_from_slice(b"{}");
        std::fs::write(&cut, bytes).unwrap();
        assert!(message(&cut).contains("says 100 bytes, the file holds 2"));
        let offsets = safetensors(&dir, "o.safetensors", r#"{"a":{"data_offsets":[9,3]}}"#, 0);
        assert!(message(&offsets).contains("tensor `a` has no `data_offsets"));
        let index = dir.join("model.safetensors.index.json");
        std::fs::write(&index, r#"{"weight_map":{}}"#).unwrap();
        assert!(message(&index).contains("no `metadata.total_size`"));
        std::fs::remove_file(&index).unwrap();
        let empty = scratch("empty");
        assert!(message(&empty).contains("holds no"));
        assert!(
            weights("no/such/file").unwrap_err().0[0]
                .message
                .contains("neither a size nor a file")
        );
    }
}
