//! Helpers shared by the test files that run the `metrale-codegen` binary from the workspace
//! root.

#![allow(dead_code)] // each test file uses its own part of these

use std::path::Path;
use std::process::Command;

/// What one run printed and how it ended.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// The workspace root, where every run starts: this crate sits in `metrale-codegen/cli/`.
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .and_then(Path::parent)
        .expect("the crate sits two folders below the workspace root")
}

/// Runs `metrale-codegen args...` from the workspace root.
pub fn run(args: &[&str]) -> Run {
    let output = Command::new(env!("CARGO_BIN_EXE_metrale-codegen"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("the binary runs");
    Run {
        code: output.status.code().expect("exited"),
        stdout: String::from_utf8(output.stdout).expect("utf-8 stdout"),
        stderr: String::from_utf8(output.stderr).expect("utf-8 stderr"),
    }
}
