//! DLPack (the `dlpack` feature): round trips with the producer still writing and the ends of
//! an export with the consumer's work still queued (`round_trips`, GPU tests), and the
//! feature's compile-time rules (`ui`, trybuild).
//!
//! `cargo test --features dlpack --test dlpack` (scripts/test.sh); add `-- --ignored
//! --test-threads=1` on a GPU machine.

#[path = "../common/mod.rs"]
mod common;
#[path = "../ui_support/mod.rs"]
mod ui_support;

mod round_trips;
mod ui;
