//! `fit --weights PATH`: safetensors metadata read as safetensors validates it (no two
//! tensors on the same bytes, each span exactly its shape x dtype, no key twice in a header
//! or an index), only regular files opened (a FIFO refused, never waited on), and a symlink
//! loop or a directory refused with its real reason. Every file is written here, in a scratch
//! folder of its own; figures counted by hand.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::root;

/// A small circuit whose plan is quick.
const CIRCUIT: &str = "circuits/llama.toml";

/// A fresh scratch folder for one test.
fn scratch(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("metrale-cli-weights-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A safetensors file: `header` (its JSON), then `data` zero bytes.
fn safetensors(path: &Path, header: &str, data: usize) {
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header.as_bytes());
    bytes.resize(bytes.len() + data, 0);
    std::fs::write(path, bytes).unwrap();
}

/// `fit --gpu 80GiB --weights <weights> --for kv-blocks`: its exit status and stderr. A run
/// past 20 s is killed and the test fails: a FIFO must be refused, not waited on.
fn fit_with(weights: &Path) -> (i32, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_metrale-codegen"))
        .args(["fit", CIRCUIT, "--gpu", "80GiB", "--for", "kv-blocks"])
        .arg("--weights")
        .arg(weights)
        .current_dir(root())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let started = Instant::now();
    while child.try_wait().expect("waitable").is_none() {
        if started.elapsed() > Duration::from_secs(20) {
            child.kill().expect("killable");
            let _ = child.wait();
            panic!("`fit --weights {}` hangs", weights.display());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let output = child.wait_with_output().expect("exited");
    (
        output.status.code().expect("exited"),
        String::from_utf8(output.stderr).expect("utf-8 stderr"),
    )
}

/// The refusal of `weights`: exit 1 and its stderr.
fn refused(weights: &Path) -> String {
    let (code, stderr) = fit_with(weights);
    assert_eq!(code, 1, "stderr:\n{stderr}");
    stderr
}

#[test]
fn two_tensors_on_the_same_bytes_are_refused() {
    let dir = scratch("same");
    // `a` and `b` both claim bytes 0..12 (2 x 3 BF16 = 12 B each): 12 B of data, not 24.
    let file = dir.join("m.safetensors");
    safetensors(
        &file,
        r#"{"a":{"dtype":"BF16","shape":[2,3],"data_offsets":[0,12]},"b":{"dtype":"BF16","shape":[2,3],"data_offsets":[0,12]}}"#,
        12,
    );
    let stderr = refused(&file);
    assert!(
        stderr.contains(&format!(
            "error: `{}` is not a safetensors file: tensors `a` ([0, 12]) and `b` ([0, 12]) \
             share bytes of their `data_offsets`",
            file.display()
        )),
        "{stderr}"
    );
}

#[test]
fn a_span_other_than_its_shape_times_its_dtype_is_refused() {
    let dir = scratch("short");
    // 4 F32 are 16 B; the span says 8.
    let file = dir.join("m.safetensors");
    safetensors(
        &file,
        r#"{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,8]}}"#,
        8,
    );
    let stderr = refused(&file);
    assert!(
        stderr.contains(
            "tensor `a` spans 8 bytes (`data_offsets` [0, 8]), but its shape [4] of F32 is 16 \
             bytes"
        ),
        "{stderr}"
    );
    // A gap between spans, a first span not at 0, data the spans do not cover.
    safetensors(
        &file,
        r#"{"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},"b":{"dtype":"U8","shape":[2],"data_offsets":[6,8]}}"#,
        8,
    );
    assert!(
        refused(&file).contains("tensor `b` begins at byte 6, but `a` ends at 4"),
        "gap"
    );
    safetensors(
        &file,
        r#"{"a":{"dtype":"U8","shape":[4],"data_offsets":[2,6]}}"#,
        6,
    );
    assert!(
        refused(&file)
            .contains("the first tensor by `data_offsets`, `a` ([2, 6]), does not begin at byte 0"),
        "not at 0"
    );
    safetensors(
        &file,
        r#"{"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}}"#,
        9,
    );
    assert!(
        refused(&file)
            .contains("its tensors span 4 bytes of data, the file holds 9 after its header"),
        "incomplete"
    );
    // A valid one still reads: 4 U8 and 3 F4... not whole bytes is refused; 2 x 2 F4 = 2 B.
    safetensors(
        &file,
        r#"{"b":{"dtype":"F4","shape":[2,2],"data_offsets":[4,6]},"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}}"#,
        6,
    );
    let (code, stderr) = fit_with(&file);
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn a_key_twice_in_an_index_or_a_header_is_refused() {
    let dir = scratch("twice");
    let index = dir.join("model.safetensors.index.json");
    // Line 3, column 3: the second `metadata`.
    std::fs::write(
        &index,
        "{\n  \"metadata\": {\"total_size\": 1},\n  \"metadata\": {\"total_size\": 2},\n  \"weight_map\": {}\n}\n",
    )
    .unwrap();
    let stderr = refused(&index);
    assert!(
        stderr.contains("error: key `metadata` is written twice in one object"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("--> {}:3:3", index.display())),
        "{stderr}"
    );
    // Given as the folder, the same.
    assert!(refused(&dir).contains("key `metadata` is written twice"));
    let file = dir.join("m.safetensors");
    std::fs::remove_file(&index).unwrap();
    // The second `a` starts at byte 8 + 53 of the file, counted by hand.
    let header = r#"{"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}}"#;
    safetensors(&file, header, 4);
    let stderr = refused(&file);
    assert!(
        stderr.contains(&format!(
            "`{}` is not a safetensors file: key `a` is written twice in one object (byte 61 of \
             the file, in its header)",
            file.display()
        )),
        "{stderr}"
    );
}

#[cfg(unix)]
#[test]
fn a_fifo_is_refused_not_waited_on() {
    let dir = scratch("fifo");
    let mkfifo = |path: &Path| {
        let status = Command::new("mkfifo").arg(path).status().expect("mkfifo");
        assert!(status.success());
    };
    // Given directly.
    let fifo = dir.join("m.safetensors");
    mkfifo(&fifo);
    assert!(refused(&fifo).contains(&format!(
        "error: `{}` is not a regular file (a FIFO), not a safetensors file",
        fifo.display()
    )));
    // As a folder's entry.
    assert!(refused(&dir).contains("is not a regular file (a FIFO)"));
    // As a folder's index, given directly and as the folder.
    std::fs::remove_file(&fifo).unwrap();
    let index = dir.join("model.safetensors.index.json");
    mkfifo(&index);
    assert!(
        refused(&index).contains("is not a regular file (a FIFO), not a safetensors index"),
        "index"
    );
    assert!(
        refused(&dir).contains("is not a regular file (a FIFO), not a safetensors index"),
        "folder's index"
    );
}

#[cfg(unix)]
#[test]
fn a_symlink_loop_and_a_directory_shard_say_why() {
    let dir = scratch("why");
    let looped = dir.join("loop.safetensors");
    std::os::unix::fs::symlink(&looped, &looped).unwrap();
    let stderr = refused(&looped);
    assert!(
        stderr.contains(&format!(
            "error: cannot read `{}`: Too many levels of symbolic links",
            looped.display()
        )),
        "{stderr}"
    );
    // In a folder, the loop is an entry like any other.
    assert!(refused(&dir).contains("Too many levels of symbolic links"));
    std::fs::remove_file(&looped).unwrap();
    let shard = dir.join("model-00001-of-00001.safetensors");
    std::fs::create_dir(&shard).unwrap();
    let stderr = refused(&dir);
    assert!(
        stderr.contains(&format!(
            "error: `{}` is a directory, not a safetensors file",
            shard.display()
        )),
        "{stderr}"
    );
}
