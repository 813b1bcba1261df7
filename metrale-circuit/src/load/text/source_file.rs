//! Reading one source file from disk (a circuit, a block library, an inputs file, a config):
//! the one bounded read every loader uses.
//!
//! Invariants:
//! - Only a regular file is opened (after following symlinks): a directory, FIFO, socket or
//!   device is refused from its metadata, so reading never blocks on a special file and never
//!   streams from `/dev/zero`.
//! - At most [`MAX_FILE_BYTES`] are read, whatever the metadata said (a file that grows while
//!   read is still cut off and refused).
//! - Text that is not UTF-8 is refused at the byte of its first invalid sequence, located in the
//!   file's text as far as it decodes (the rest replaced by U+FFFD), so the error has a line and
//!   column.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use super::diag::{Diagnostic, Source};
use super::limits::MAX_FILE_BYTES;

/// Why a file could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadFailure {
    /// The error: naming the file, or located in `source`.
    pub diagnostic: Box<Diagnostic>,
    /// The text as far as it decodes, when the file was read but is not UTF-8 (the error is
    /// located in it).
    pub source: Option<Box<Source>>,
}

impl std::fmt::Display for ReadFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.diagnostic)
    }
}

impl std::error::Error for ReadFailure {}

/// Reads the file at `path` as a [`Source`] named `name`; `what` names it in errors ("circuit",
/// "block library", "inputs file").
///
/// # Errors
/// A [`ReadFailure`] when the file cannot be opened or read, is not a regular file, is larger
/// than [`MAX_FILE_BYTES`], or is not UTF-8 (located at the first invalid byte).
pub fn read_source(path: &Path, name: &str, what: &str) -> Result<Source, ReadFailure> {
    let unlocated = |message: String| ReadFailure {
        diagnostic: Box::new(
            Diagnostic::error(format!("cannot read {what} `{name}`: {message}")).in_file(name),
        ),
        source: None,
    };
    if path.as_os_str().is_empty() {
        return Err(ReadFailure {
            diagnostic: Box::new(Diagnostic::error(format!(
                "cannot read {what}: its path is empty"
            ))),
            source: None,
        });
    }
    let metadata = std::fs::metadata(path).map_err(|e| unlocated(io_message(&e)))?;
    if !metadata.is_file() {
        return Err(unlocated(format!(
            "not a regular file ({})",
            file_kind(metadata.file_type())
        )));
    }
    let too_large = || {
        unlocated(format!(
            "larger than the limit of {MAX_FILE_BYTES} bytes (`metrale_circuit::load::text::limits::MAX_FILE_BYTES`)"
        ))
    };
    if metadata.len() > MAX_FILE_BYTES {
        return Err(too_large());
    }
    let file = File::open(path).map_err(|e| unlocated(io_message(&e)))?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| unlocated(io_message(&e)))?;
    if u64::try_from(bytes.len()).map_or(true, |n| n > MAX_FILE_BYTES) {
        return Err(too_large());
    }
    match String::from_utf8(bytes) {
        Ok(text) => Ok(Source::new(name, text)),
        Err(error) => {
            let at = error.utf8_error().valid_up_to();
            let bytes = error.as_bytes();
            let byte = bytes.get(at).copied().unwrap_or(0);
            let source = Source::new(name, String::from_utf8_lossy(bytes).into_owned());
            let diagnostic = Diagnostic::error(format!(
                "{what} `{name}` is not UTF-8: byte 0x{byte:02x} at byte offset {at} starts no character"
            ))
            .at(&source, at..at + 1)
            .label("not UTF-8")
            .help("save the file as UTF-8");
            Err(ReadFailure {
                diagnostic: Box::new(diagnostic),
                source: Some(Box::new(source)),
            })
        }
    }
}

/// What a file that is not a regular one is, in words.
pub(crate) fn file_kind(kind: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_socket() {
            return "a socket";
        }
        if kind.is_char_device() || kind.is_block_device() {
            return "a device";
        }
    }
    if kind.is_dir() {
        "a directory"
    } else {
        "not a file"
    }
}

/// An I/O error's text without the trailing " (os error N)".
pub(crate) fn io_message(error: &std::io::Error) -> String {
    let text = error.to_string();
    match text.find(" (os error") {
        Some(i) => text.get(..i).unwrap_or(&text).to_owned(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_directories_and_devices_without_reading() {
        let dir = std::env::temp_dir();
        let failure = read_source(&dir, "d", "circuit").unwrap_err();
        assert!(
            failure
                .diagnostic
                .message
                .ends_with("not a regular file (a directory)"),
            "{}",
            failure.diagnostic.message
        );
        #[cfg(unix)]
        {
            let failure = read_source(Path::new("/dev/zero"), "z", "circuit").unwrap_err();
            assert!(failure.diagnostic.message.ends_with("(a device)"));
        }
    }
}
