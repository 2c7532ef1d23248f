//! Compile-time guarantees of cudarc's libraries on this crate's memory (the `cublas`
//! feature), checked with trybuild: each of `ui-tests/cudarc/*.rs` must fail to compile with
//! exactly the messages in the `.stderr` next to it (regenerate with
//! `TRYBUILD=overwrite cargo test --features cublas --test cudarc ui::`).
//!
//! Apart from tests/ui.rs because the cases need the feature.

use crate::ui_support;

#[test]
fn cudarc_ui() {
    ui_support::compile_fail("ui-tests/cudarc/*.rs");
}
