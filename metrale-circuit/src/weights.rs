//! The bytes of a checkpoint's weights (feature `weights`), as a size (`17GiB`) or read exactly
//! from its safetensors metadata, never from its tensors: a `model.safetensors.index.json`'s
//! `metadata.total_size`, a `.safetensors` file's header (its tensors' `data_offsets`), or a
//! folder holding either (the index when there is one, else every `.safetensors` file in it).
//! What `metrale-codegen fit --weights` reads, so an engine sizing itself at start reads the
//! same figure ([`read`], then `serving::GpuMemory`'s budget).
//!
//! Owner: metrale-circuit (feature `weights`).
//!
//! The safetensors format (huggingface/safetensors, `safetensors/src/tensor.rs`,
//! `SafeTensors::read_metadata` and `Metadata::validate`): 8 bytes, the header's length `N` as a
//! little-endian `u64`; then `N` bytes of UTF-8 JSON, an object mapping each tensor's name to
//! `{ dtype, shape, data_offsets: [begin, end] }` (byte offsets into the data that follows the
//! header) and an optional `__metadata__` of strings; then the data, exactly as long as the
//! spans say. A header is refused as safetensors refuses it (`Tensor::validate`).
//!
//! Invariants:
//! - Only regular files are opened (as the loader's `read_source`): a FIFO, socket or device
//!   is refused before it is opened, so nothing waits on a writer; a directory, a symlink loop
//!   or a dangling link is refused with its real reason.
//! - At most [`MAX_HEADER`] bytes of a header are read, and an index file of at most
//!   [`MAX_INDEX`] bytes: a malformed or hostile file costs bounded memory.
//! - No JSON object in a header or an index holds a key twice: which one a reader takes is
//!   not defined, so no figure is read from either.
//! - Every error names the file and what is wrong, and what would be valid; sums are checked.

use std::fs::{File, Metadata};
use std::io::{ErrorKind, Read};
use std::ops::Range;
use std::path::{Path, PathBuf};

use crate::load::diag::{Diagnostic, Diagnostics, Source};
use jsonc_parser::ast::Value;
use jsonc_parser::{CollectOptions, parse_to_ast};

use crate::load::text::json::{prop_name, prop_span, span, strict_options};
use crate::load::text::source_file::file_kind;

/// The most bytes of a safetensors header read (safetensors itself refuses headers past
/// 100 MB: `MAX_HEADER_SIZE` in the same `tensor.rs`).
pub const MAX_HEADER: u64 = 100_000_000;

/// The most bytes of an index file read.
pub const MAX_INDEX: u64 = 64 << 20;

/// The index file a sharded checkpoint's folder holds.
const INDEX: &str = "model.safetensors.index.json";

/// What a safetensors file starts with, for every refusal of one.
const FORMAT_HELP: &str = "a safetensors file starts with its header's length (8 bytes, \
                           little-endian), then the header's JSON, then exactly the data its \
                           tensors' `data_offsets` span";

/// The weights' bytes and where they were read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Weights {
    /// Bytes.
    pub bytes: u64,
    /// Where they come from: `given`, or the files read.
    pub source: String,
}

/// Reads a checkpoint's weights as `metrale-codegen fit --weights` takes them: a size, or a
/// path as the module doc says.
///
/// # Errors
/// A diagnostic naming the file and what is wrong with it.
pub fn read(arg: &str) -> Result<Weights, Diagnostics> {
    let size = crate::load::text::parse_size(arg);
    if let Ok(bytes) = size {
        return Ok(Weights {
            bytes,
            source: "given".to_owned(),
        });
    }
    let path = Path::new(arg);
    let metadata = match std::fs::metadata(path) {
        Ok(metadata) => metadata,
        Err(e) if e.kind() == ErrorKind::NotFound => {
            let d = Diagnostic::error(format!("`--weights {arg}` is neither a size nor a file"));
            // A number meant as a size says why it is none (`1.5B`: a fraction of a byte).
            let d = match size {
                Err(why) if arg.starts_with(|c: char| c.is_ascii_digit()) => {
                    d.note(format!("as a size: {why}"))
                }
                _ => d,
            };
            let d = d.help(
                "give the weights' bytes (17GiB, 16.2GB, 17179869184), a \
                 `model.safetensors.index.json`, a `.safetensors` file, or the folder of a \
                 checkpoint",
            );
            return Err(d.into());
        }
        Err(e) => return Err(cannot_read(path, &e).into()),
    };
    if metadata.is_dir() {
        return folder(path);
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
    // Any entry of that name is the index, read (and refused) as one: a FIFO or a dangling
    // link there is an error, not a folder without an index.
    if std::fs::symlink_metadata(&index_path).is_ok() {
        return Ok(Weights {
            bytes: index(&index_path)?,
            source: index_path.display().to_string(),
        });
    }
    let files = safetensors_files(path)?;
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

/// The folder's entries named `*.safetensors`, sorted.
fn safetensors_files(path: &Path) -> Result<Vec<PathBuf>, Diagnostics> {
    let unreadable = |e: std::io::Error| {
        Diagnostic::error(format!("cannot read the folder `{}`: {e}", path.display()))
    };
    let mut files = Vec::new();
    for entry in std::fs::read_dir(path).map_err(unreadable)? {
        let file = entry.map_err(unreadable)?.path();
        if file.extension().is_some_and(|e| e == "safetensors") {
            files.push(file);
        }
    }
    files.sort();
    Ok(files)
}

/// A `model.safetensors.index.json`: its `metadata.total_size`.
fn index(path: &Path) -> Result<u64, Diagnostics> {
    let shown = path.display().to_string();
    regular(path, "a safetensors index")?;
    let bytes = read_at_most(path, MAX_INDEX)?;
    let text = String::from_utf8(bytes).map_err(|e| {
        Diagnostic::error(format!(
            "`{shown}` is not UTF-8: byte offset {} starts no character",
            e.utf8_error().valid_up_to()
        ))
        .in_file(shown.clone())
    })?;
    let source = Source::new(shown.clone(), text);
    let located = |fault: JsonFault| fault.diagnostic().at(&source, fault.at);
    let json = strict_json(source.text()).map_err(located)?;
    let total = json
        .as_object()
        .and_then(|o| o.get("metadata"))
        .and_then(|p| p.value.as_object())
        .and_then(|m| m.get("total_size"))
        .map(|p| &p.value);
    match total {
        Some(Value::NumberLit(n)) if n.value.parse::<u64>().is_ok() => {
            Ok(n.value.parse::<u64>().unwrap_or_default())
        }
        found => {
            let at = found.map_or(0..1, span);
            Err(Diagnostic::error(format!(
                "`{shown}` has no `metadata.total_size` (a non-negative integer up to u64::MAX)"
            ))
            .at(&source, at)
            .label("the index's bytes are read here")
            .help("a safetensors index holds `{\"metadata\": {\"total_size\": <bytes>}, \"weight_map\": {...}}`")
            .into())
        }
    }
}

/// A `.safetensors` file's tensor bytes, from its header: its tensors' `data_offsets` spans,
/// validated as safetensors validates them.
fn header(path: &Path) -> Result<u64, Diagnostics> {
    let shown = path.display().to_string();
    let bad = |what: String| -> Diagnostics {
        Diagnostic::error(format!("`{shown}` is not a safetensors file: {what}"))
            .in_file(shown.clone())
            .help(FORMAT_HELP)
            .into()
    };
    let on_disk = regular(path, "a safetensors file")?.len();
    if on_disk < 8 {
        return Err(bad(format!(
            "{on_disk} bytes, shorter than the 8 bytes of its header's length"
        )));
    }
    let mut file = File::open(path).map_err(|e| cannot_read(path, &e))?;
    let mut length = [0u8; 8];
    file.read_exact(&mut length)
        .map_err(|e| cannot_read(path, &e))?;
    let length = u64::from_le_bytes(length);
    if length > MAX_HEADER {
        return Err(bad(format!(
            "a header of {length} bytes, past safetensors' limit of {MAX_HEADER}"
        )));
    }
    let mut text = Vec::new();
    file.take(length)
        .read_to_end(&mut text)
        .map_err(|e| cannot_read(path, &e))?;
    if text.len() as u64 != length {
        return Err(bad(format!(
            "its header says {length} bytes, the file holds {}",
            text.len()
        )));
    }
    let text = String::from_utf8(text).map_err(|e| {
        bad(format!(
            "its header is not UTF-8 (byte {} of the file starts no character)",
            8 + e.utf8_error().valid_up_to()
        ))
    })?;
    let json = strict_json(&text).map_err(|fault| {
        bad(format!(
            "{} (byte {} of the file, in its header)",
            fault.message,
            8 + fault.at.start
        ))
    })?;
    let data = Tensor::read_all(&json).map_err(&bad)?;
    let end = Tensor::validate(data).map_err(&bad)?;
    // `MetadataIncompleteBuffer`: the spans cover the data after the header exactly.
    let held = on_disk - 8 - length;
    if end != held {
        return Err(bad(format!(
            "its tensors span {end} bytes of data, the file holds {held} after its header"
        )));
    }
    Ok(end)
}

/// One tensor of a header, as validation reads it.
#[derive(Debug)]
struct Tensor {
    /// Its name, the header's key.
    name: String,
    /// `data_offsets`: its first byte and the byte after its last, in the data.
    begin: u64,
    end: u64,
    /// Its bytes by shape and dtype (`None`: past u64).
    bytes: Option<u64>,
    /// Its shape and dtype, as a message says them: `[2, 3] of BF16`.
    described: String,
}

impl Tensor {
    /// Every tensor of a header (every key but `__metadata__`), or what is wrong.
    fn read_all(json: &Value<'_>) -> Result<Vec<Tensor>, String> {
        let Value::Object(object) = json else {
            return Err("its header is not a JSON object".to_owned());
        };
        let mut tensors = Vec::with_capacity(object.properties.len());
        for property in &object.properties {
            let name = prop_name(&property.name);
            if name == "__metadata__" {
                metadata_of_strings(&property.value)?;
                continue;
            }
            tensors.push(Self::read(name, &property.value)?);
        }
        Ok(tensors)
    }

    /// One tensor's `{ dtype, shape, data_offsets }`.
    fn read(name: &str, value: &Value<'_>) -> Result<Tensor, String> {
        let field = |key: &str| value.as_object().and_then(|o| o.get(key)).map(|p| &p.value);
        let dtype = match field("dtype") {
            Some(Value::StringLit(s)) => s.value.to_string(),
            _ => return Err(format!("tensor `{name}` has no `dtype` string")),
        };
        let Some(bits) = dtype_bits(&dtype) else {
            return Err(format!(
                "tensor `{name}` has dtype `{dtype}`, which safetensors does not define"
            ));
        };
        let shape: Option<Vec<u64>> = match field("shape") {
            Some(Value::Array(a)) => a.elements.iter().map(as_u64).collect(),
            _ => None,
        };
        let Some(shape) = shape else {
            return Err(format!(
                "tensor `{name}` has no `shape` (a list of non-negative integers)"
            ));
        };
        let offsets: Option<(u64, u64)> = match field("data_offsets") {
            Some(Value::Array(a)) => match a.elements.as_slice() {
                [begin, end] => as_u64(begin).zip(as_u64(end)),
                _ => None,
            },
            _ => None,
        };
        let Some((begin, end)) = offsets.filter(|(b, e)| b <= e) else {
            return Err(format!(
                "tensor `{name}` has no `data_offsets: [begin, end]` with begin <= end"
            ));
        };
        let nbits = shape.iter().try_fold(bits, |n, d| n.checked_mul(*d));
        let bytes = match nbits {
            Some(n) if n % 8 != 0 => {
                return Err(format!(
                    "tensor `{name}` of shape {shape:?} of {dtype} is {n} bits, not whole bytes"
                ));
            }
            n => n.map(|n| n / 8),
        };
        Ok(Tensor {
            name: name.to_owned(),
            begin,
            end,
            bytes,
            described: format!("{shape:?} of {dtype}"),
        })
    }

    /// safetensors' `Metadata::validate`: sorted by `data_offsets`, the spans are contiguous
    /// from 0 (no two tensors share bytes, none is left between them) and each is exactly its
    /// shape times its dtype's size. The data's length, the last span's end.
    fn validate(mut tensors: Vec<Tensor>) -> Result<u64, String> {
        tensors.sort_by_key(|t| (t.begin, t.end));
        let mut start = 0u64;
        let mut previous: Option<&Tensor> = None;
        for tensor in &tensors {
            if tensor.begin != start {
                return Err(not_contiguous(tensor, previous, start));
            }
            if tensor.bytes != Some(tensor.end - tensor.begin) {
                let by_shape = tensor
                    .bytes
                    .map_or_else(|| "past u64".to_owned(), |b| b.to_string());
                return Err(format!(
                    "tensor `{}` spans {} bytes (`data_offsets` [{}, {}]), but its shape {} is \
                     {by_shape} bytes",
                    tensor.name,
                    tensor.end - tensor.begin,
                    tensor.begin,
                    tensor.end,
                    tensor.described
                ));
            }
            start = tensor.end;
            previous = Some(tensor);
        }
        Ok(start)
    }
}

/// Why `tensor` does not begin at `start`, where the previous span (if any) ends.
fn not_contiguous(tensor: &Tensor, previous: Option<&Tensor>, start: u64) -> String {
    let offsets = format!("[{}, {}]", tensor.begin, tensor.end);
    match previous {
        Some(p) if tensor.begin < start => format!(
            "tensors `{}` ([{}, {}]) and `{}` ({offsets}) share bytes of their `data_offsets`: \
             each byte of data belongs to one tensor",
            p.name, p.begin, p.end, tensor.name
        ),
        Some(p) => format!(
            "tensor `{}` begins at byte {}, but `{}` ends at {start}: the spans must be \
             contiguous, sorted by `data_offsets`",
            tensor.name, tensor.begin, p.name
        ),
        None => format!(
            "the first tensor by `data_offsets`, `{}` ({offsets}), does not begin at byte 0",
            tensor.name
        ),
    }
}

/// Bits of one element of a safetensors dtype (`Dtype::bitsize` in `tensor.rs`, with the
/// sub-byte and FNUZ dtypes of later releases), `None` for a name it does not define.
fn dtype_bits(dtype: &str) -> Option<u64> {
    Some(match dtype {
        "F4" => 4,
        "F6_E2M3" | "F6_E3M2" => 6,
        "BOOL" | "U8" | "I8" | "F8_E5M2" | "F8_E4M3" | "F8_E8M0" | "F8_E4M3FNUZ"
        | "F8_E5M2FNUZ" => 8,
        "I16" | "U16" | "F16" | "BF16" => 16,
        "I32" | "U32" | "F32" => 32,
        "C64" | "F64" | "I64" | "U64" => 64,
        _ => return None,
    })
}

/// `__metadata__`: an object of strings, as safetensors reads it.
fn metadata_of_strings(value: &Value<'_>) -> Result<(), String> {
    let strings = value.as_object().is_some_and(|o| {
        o.properties
            .iter()
            .all(|p| matches!(p.value, Value::StringLit(_)))
    });
    if strings {
        Ok(())
    } else {
        Err("its `__metadata__` is not an object of strings".to_owned())
    }
}

/// Checks that `path` is a regular file (following links) before anything opens it.
fn regular(path: &Path, what: &str) -> Result<Metadata, Diagnostics> {
    let shown = path.display();
    let metadata = std::fs::metadata(path).map_err(|e| Diagnostics::from(cannot_read(path, &e)))?;
    if metadata.is_file() {
        return Ok(metadata);
    }
    let kind = if metadata.is_dir() {
        "a directory".to_owned()
    } else {
        format!("not a regular file ({})", file_kind(metadata.file_type()))
    };
    Err(
        Diagnostic::error(format!("`{shown}` is {kind}, not {what}"))
            .in_file(shown.to_string())
            .help(format!("{what} is read from a regular file"))
            .into(),
    )
}

/// "cannot read `path`: <the OS's reason>", e.g. a symlink loop or a missing shard.
fn cannot_read(path: &Path, error: &std::io::Error) -> Diagnostic {
    let shown = path.display();
    Diagnostic::error(format!("cannot read `{shown}`: {error}")).in_file(shown.to_string())
}

/// The file's bytes, refused past `max`.
fn read_at_most(path: &Path, max: u64) -> Result<Vec<u8>, Diagnostics> {
    let shown = path.display();
    let file = File::open(path).map_err(|e| cannot_read(path, &e))?;
    let mut text = Vec::new();
    file.take(max.saturating_add(1))
        .read_to_end(&mut text)
        .map_err(|e| cannot_read(path, &e))?;
    if text.len() as u64 > max {
        return Err(
            Diagnostic::error(format!("`{shown}` is larger than {max} bytes"))
                .in_file(shown.to_string())
                .into(),
        );
    }
    Ok(text)
}

/// What is wrong with a JSON text, at a byte span of it.
struct JsonFault {
    message: String,
    at: Range<usize>,
    /// For a key written twice: where it was first.
    first: Option<Range<usize>>,
}

impl JsonFault {
    /// The fault as an error, to be located by the caller.
    fn diagnostic(&self) -> Diagnostic {
        let d = Diagnostic::error(self.message.clone());
        match &self.first {
            Some(first) => d
                .label("written again")
                .note(format!("first written at byte {}", first.start))
                .help("keep one: which one a JSON reader takes is not defined"),
            None => d.label("here"),
        }
    }
}

/// Strict JSON (no comments, trailing commas or JSON5), with no object holding a key twice.
fn strict_json(text: &str) -> Result<Value<'_>, JsonFault> {
    let strict = strict_options(false);
    let parsed = parse_to_ast(text, &CollectOptions::default(), &strict).map_err(|e| {
        let range = e.range();
        JsonFault {
            message: format!("invalid JSON: {}", e.kind()),
            at: range.start..range.end,
            first: None,
        }
    })?;
    let Some(root) = parsed.value else {
        return Err(JsonFault {
            message: "no JSON value".to_owned(),
            at: 0..0,
            first: None,
        });
    };
    match twice_written(&root) {
        Some(fault) => Err(fault),
        None => Ok(root),
    }
}

/// The first key written twice in one object, anywhere in `value` (one pass; the parser
/// bounds the depth).
fn twice_written(value: &Value<'_>) -> Option<JsonFault> {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Object(object) => {
                let mut seen: std::collections::HashMap<&str, Range<usize>> =
                    std::collections::HashMap::new();
                for property in &object.properties {
                    let name = prop_name(&property.name);
                    let at = prop_span(&property.name);
                    if let Some(first) = seen.get(name) {
                        return Some(JsonFault {
                            message: format!("key `{name}` is written twice in one object"),
                            at,
                            first: Some(first.clone()),
                        });
                    }
                    seen.insert(name, at);
                    stack.push(&property.value);
                }
            }
            Value::Array(array) => stack.extend(array.elements.iter()),
            _ => {}
        }
    }
    None
}

/// A non-negative integer that fits u64.
fn as_u64(value: &Value<'_>) -> Option<u64> {
    match value {
        Value::NumberLit(n) => n.value.parse().ok(),
        _ => None,
    }
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
        assert_eq!(read("17GiB").map(|w| w.bytes), Ok(17 << 30));
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
        assert_eq!(read(a.to_str().unwrap()).map(|w| w.bytes), Ok(28));
        let folder = read(dir.to_str().unwrap()).unwrap();
        assert_eq!(folder.bytes, 33);
        assert!(folder.source.ends_with("(2 files)"), "{}", folder.source);
        // With an index, the folder is its total.
        std::fs::write(
            dir.join(INDEX),
            r#"{"metadata":{"total_size":33},"weight_map":{"a":"model-00001-of-00002.safetensors"}}"#,
        )
        .unwrap();
        assert_eq!(read(dir.to_str().unwrap()).map(|w| w.bytes), Ok(33));
    }

    #[test]
    fn bad_files_are_refused_with_what_is_wrong() {
        let dir = scratch("bad");
        let message = |arg: &Path| {
            read(arg.to_str().unwrap()).unwrap_err().0[0]
                .message
                .clone()
        };
        let short = dir.join("short.safetensors");
        std::fs::write(&short, [1, 2, 3]).unwrap();
        assert!(message(&short).contains("3 bytes, shorter than the 8 bytes"));
        let huge = dir.join("huge.safetensors");
        std::fs::write(&huge, u64::MAX.to_le_bytes()).unwrap();
        assert!(message(&huge).contains("past safetensors' limit"));
        let cut = dir.join("cut.safetensors");
        let mut bytes = 100u64.to_le_bytes().to_vec();
        bytes.extend_from_slice(b"{}");
        std::fs::write(&cut, bytes).unwrap();
        assert!(message(&cut).contains("says 100 bytes, the file holds 2"));
        let offsets = safetensors(
            &dir,
            "o.safetensors",
            r#"{"a":{"dtype":"U8","shape":[0],"data_offsets":[9,3]}}"#,
            0,
        );
        assert!(message(&offsets).contains("tensor `a` has no `data_offsets"));
        let index = dir.join("model.safetensors.index.json");
        std::fs::write(&index, r#"{"weight_map":{}}"#).unwrap();
        assert!(message(&index).contains("no `metadata.total_size`"));
        std::fs::remove_file(&index).unwrap();
        let empty = scratch("empty");
        assert!(message(&empty).contains("holds no"));
        assert!(
            read("no/such/file").unwrap_err().0[0]
                .message
                .contains("neither a size nor a file")
        );
    }
}
