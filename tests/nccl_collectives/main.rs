//! NCCL communicators on GPUs (the `nccl` feature): every collective and a send/receive ring
//! against a host reference, their stream ordering and the checks made before NCCL is called
//! (`collectives`), and communicators formed the way launched jobs form them, through the TCP
//! rendezvous and the launchers' variables (`launch`).
//!
//! `cargo test --features nccl --test nccl_collectives -- --ignored --test-threads=1` on a
//! machine with NCCL (`source scripts/nvrtc-env.sh` finds or installs it) and GPUs: the tests
//! use every GPU, one test at a time. A crate apart from tests/nccl/ (which CI runs) because
//! every test here needs GPUs; the failure tests are tests/nccl_failures.rs.

#[path = "../common/mod.rs"]
mod common;

/// NCCL_NVLS_ENABLE=0 unless set, before `main` and so before any thread or NCCL call: NVLink
/// multicast can take down NVLink switches that other users share (the child processes
/// inherit it).
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

mod collectives;
mod launch;
