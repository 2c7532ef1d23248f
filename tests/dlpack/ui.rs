//! Compile-time guarantees of the `dlpack` feature, checked with trybuild: each of
//! `ui-tests/dlpack/*.rs` must fail to compile with exactly the messages in the `.stderr` next
//! to it (regenerate with `TRYBUILD=overwrite cargo test --features dlpack --test dlpack ui::`).
//!
//! Apart from tests/ui.rs because the cases need the feature (as tests/nccl/ui.rs).

use crate::ui_support;

#[test]
fn dlpack_ui() {
    ui_support::compile_fail("ui-tests/dlpack/*.rs");
}
