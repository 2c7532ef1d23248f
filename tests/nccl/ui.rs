//! Compile-time guarantees of the `nccl` feature, checked with trybuild: each of
//! `ui-tests/nccl/*.rs` must fail to compile with exactly the messages in the `.stderr` next to
//! it (regenerate with `TRYBUILD=overwrite cargo test --features nccl --test nccl ui::`).
//!
//! Apart from tests/ui.rs because the cases need the feature: trybuild builds them with the
//! features this test was built with, so they live where only a build with `nccl` looks.

use crate::ui_support;

#[test]
fn nccl_ui() {
    ui_support::compile_fail("ui-tests/nccl/*.rs");
}
