//! NCCL (the `nccl` feature) without a GPU: loading the library (a missing one is an error, not
//! a panic), unique ids and options (`library`); the TCP rendezvous and the launchers' variables,
//! with ranks as threads and as processes of this binary (`rendezvous`); the feature's
//! compile-time rules (`ui`, trybuild).
//!
//! `source scripts/nvrtc-env.sh && cargo test --features nccl --test nccl` (scripts/test.sh;
//! the script installs the NCCL wheel when the machine has no NCCL). The tests that need GPUs
//! are tests/nccl_collectives/ and tests/nccl_failures.rs.

#[path = "../common/mod.rs"]
mod common;
#[path = "../ui_support/mod.rs"]
mod ui_support;

/// NCCL_NVLS_ENABLE=0 unless set, before `main` and so before any thread or NCCL call (the
/// child processes inherit it).
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static NVLS_OFF: extern "C" fn() = {
    extern "C" fn nvls_off() {
        if std::env::var_os("NCCL_NVLS_ENABLE").is_none() {
            std::env::set_var("NCCL_NVLS_ENABLE", "0");
        }
    }
    nvls_off
};

mod library;
mod rendezvous;
mod ui;
