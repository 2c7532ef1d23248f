//! The trybuild suites' one rule for which rustc their `.stderr` files are compared under.
//!
//! rustc words its diagnostics differently from one release to the next, so a `.stderr` file is
//! exact for the release that wrote it. On that release (its major.minor is in
//! `ui-tests/RUSTC_VERSION`) every compile-fail case must fail with exactly its `.stderr`; on any
//! other (the MSRV, a newer stable, nightly) each must still fail to compile, but its messages
//! are not compared: the cases are copied without their `.stderr` files to a scratch directory
//! and trybuild runs there in its overwrite mode, which still refuses a case that compiles.
//! `GPU_SUITE_UI_STDERR=exact` (set by `.ci/run`) compares the messages on every rustc, so
//! that a CI toolchain newer than the snapshots fails and says to regenerate them.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs the compile-fail cases matching `pattern` (a trybuild glob relative to the suite's
/// root, such as `"ui-tests/fail/*.rs"`) under the rule above, and returns once they ran.
pub fn compile_fail(pattern: &str) {
    if compare_messages() {
        trybuild::TestCases::new().compile_fail(pattern);
        return;
    }
    let scratch = copy_without_stderr(pattern);
    // Set before trybuild reads it (when the `TestCases` below is dropped), restored after: the
    // caller may run further suites in this process.
    let before = std::env::var_os("TRYBUILD");
    std::env::set_var("TRYBUILD", "overwrite");
    trybuild::TestCases::new().compile_fail(scratch.join("*.rs"));
    match before {
        Some(value) => std::env::set_var("TRYBUILD", value),
        None => std::env::remove_var("TRYBUILD"),
    }
}

/// Whether this rustc's messages are compared with the `.stderr` files.
fn compare_messages() -> bool {
    let snapshots =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("ui-tests/RUSTC_VERSION"))
            .expect("ui-tests/RUSTC_VERSION names the rustc that wrote the .stderr files");
    let snapshots = snapshots.trim();
    let this = rustc_major_minor();
    if this.as_deref() == Some(snapshots) {
        return true;
    }
    if std::env::var("GPU_SUITE_UI_STDERR").is_ok_and(|v| v == "exact") {
        eprintln!(
            "note: GPU_SUITE_UI_STDERR=exact, but the .stderr files are rustc {snapshots}'s: where \
             the messages differ, regenerate them with TRYBUILD=overwrite and write this rustc's \
             major.minor into ui-tests/RUSTC_VERSION"
        );
        return true;
    }
    eprintln!(
        "note: the .stderr files are rustc {snapshots}'s and this is rustc {}: each case is checked \
         to fail to compile, without comparing its messages",
        this.as_deref().unwrap_or("of an unknown version")
    );
    false
}

/// The major.minor of the rustc cargo builds the cases with (`RUSTC`, or `rustc` as rustup
/// resolves it for this process's toolchain), as in `1.95`.
fn rustc_major_minor() -> Option<String> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let output = Command::new(rustc).arg("--version").output().ok()?;
    // "rustc 1.95.0 (59807616e 2026-04-14)" or "rustc 1.96.0-nightly (...)".
    let text = String::from_utf8(output.stdout).ok()?;
    let version = text.split_whitespace().nth(1)?;
    let mut parts = version.split(['.', '-']);
    Some(format!("{}.{}", parts.next()?, parts.next()?))
}

/// Copies the cases matching `pattern` (a directory and `*.rs`), without their `.stderr`
/// files, to an empty directory of the suite's scratch space, and returns that directory.
fn copy_without_stderr(pattern: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = Path::new(pattern)
        .parent()
        .expect("the pattern is a directory and a file glob");
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("ui-messages-not-compared")
        .join(dir);
    // A previous run's .stderr files would be compared: start empty.
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).expect("create the scratch directory");
    for entry in std::fs::read_dir(root.join(dir)).expect("read the cases' directory") {
        let path = entry.expect("read the cases' directory").path();
        if path.extension().is_some_and(|e| e == "rs") {
            std::fs::copy(&path, scratch.join(path.file_name().expect("a file")))
                .expect("copy a case to the scratch directory");
        }
    }
    scratch
}
