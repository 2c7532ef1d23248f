#!/usr/bin/env bash
# Sets up and runs the whole test suite on a fresh machine: makes NVRTC (and NCCL, for the
# `nccl` feature) available (from the PyPI wheels when the system has none), then runs
# `cargo test --workspace`, and the `nccl` feature's tests that need no GPU (loading NCCL,
# unique ids, the TCP rendezvous and the launchers' variables, its compile-time rules), and the `cublas` feature's. Tests that need a GPU are #[ignore]d and reported as
# ignored; run them on a GPU machine with `-- --ignored --test-threads=1` (one at a time: each
# test crate is one process, and some tests measure what the whole process holds).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/nvrtc-env.sh
cargo test --workspace "$@"
cargo test --features nccl --test nccl "$@"
# The `dlpack` feature: the checks of an import (no GPU), its compile-time rules, and its GPU
# round trips (ignored without a GPU).
cargo test -p gpu-runtime --features dlpack --lib interop "$@"
cargo test --features dlpack --test dlpack "$@"
# cudarc's libraries on our memory (the `cublas` feature): the gemm checks, the compile-time
# rule (ui-tests/cudarc/), and with `-- --ignored` the GPU tests, cuBLAS's and gpuarray's
# matmul included.
cargo test -p gpu-runtime --features cublas --lib cudarc_interop "$@"
cargo test --features cublas --test cudarc "$@"
