//! Compile-time diagnostics of `#[kernel]`, checked with trybuild.
//!
//! `ui-tests/fail/*.rs` must fail to compile with exactly the messages in the `.stderr` file
//! next to each; `ui-tests/pass/*.rs` must compile (they never launch anything, so no GPU is
//! needed). After changing a message, regenerate the snapshots with
//! `TRYBUILD=overwrite cargo test --test ui` and read the diff. The messages are compared on
//! the rustc named in `ui-tests/RUSTC_VERSION` only (`tests/ui_support/mod.rs` says why).

mod ui_support;

#[test]
fn ui() {
    // The snapshots are of the build-time check as it runs by default, with NVRTC (which
    // `scripts/nvrtc-env.sh` provides): `GPU_RUNTIME_BUILD_CHECK=0` or `=require` in the shell
    // would change them. Set before trybuild starts cargo; this binary runs no other test.
    std::env::remove_var("GPU_RUNTIME_BUILD_CHECK");
    ui_support::compile_fail("ui-tests/fail/*.rs");
    trybuild::TestCases::new().pass("ui-tests/pass/*.rs");
}
