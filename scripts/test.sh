#!/usr/bin/env bash
# Sets up and runs the whole test suite on a fresh machine: makes NVRTC (and NCCL, for the
# `nccl` feature) available (from the PyPI wheels when the system has none), then runs
# `cargo test --workspace`, and the `nccl` feature's tests that need no GPU (loading NCCL,
# unique ids, the TCP rendezvous and the launchers' variables, its compile-time rules), the `dlpack` feature's and the `cublas` feature's. Tests that need a GPU are #[ignore]d and reported as
# ignored; run them on a GPU machine with `-- --ignored --test-threads=1` (one at a time: each
# test crate is one process, and some tests measure what the whole process holds).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/nvrtc-env.sh
# What CI sets (.ci/run), unless the caller set them: line tables instead of full debug info
# (most of a test binary's size, and of each of its links) and no incremental state (nothing
# here is rebuilt in place). The README's time and disk figures are measured so.
export CARGO_INCREMENTAL=${CARGO_INCREMENTAL:-0}
export CARGO_PROFILE_DEV_DEBUG=${CARGO_PROFILE_DEV_DEBUG:-line-tables-only}
export CARGO_PROFILE_TEST_DEBUG=${CARGO_PROFILE_TEST_DEBUG:-line-tables-only}
cargo test --workspace "$@"
# The features' tests, in one build of the library with all three features (each feature set
# is a build of gpu-runtime of its own, and of its ui-tests' copy in trybuild's target): the
# `nccl` feature's tests that need no GPU, the `dlpack` feature's (the checks of an import, its
# compile-time rules, its GPU round trips) and cudarc's libraries on our memory (the `cublas`
# feature: the gemm checks, the compile-time rule in ui-tests/cudarc/, the GPU tests, cuBLAS's
# and gpuarray's matmul included). `--workspace`, as above, so that the proc-macro crates and
# their dependencies keep the feature set they were built with and are not built again.
cargo test --workspace --features gpu-suite/nccl,gpu-suite/dlpack,gpu-suite/cublas \
  --test nccl --test dlpack --test cudarc "$@"
# The library's own unit tests of those features (`dlpack`, `driver::cublas`),
# with the same features, so that only the library's test harness is built again (once: the
# second filter reruns the same binary).
cargo test -p gpu-runtime --features nccl,dlpack,cublas --lib dlpack:: "$@"
cargo test -p gpu-runtime --features nccl,dlpack,cublas --lib driver::cublas:: "$@"
