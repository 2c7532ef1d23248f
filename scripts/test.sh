#!/usr/bin/env bash
# Sets up and runs the whole test suite on a fresh machine: makes NVRTC available (from the
# PyPI wheel when the system has none), then runs `cargo test --workspace`. Tests that need a
# GPU are #[ignore]d and reported as ignored; run them on a GPU machine with `-- --ignored`.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/nvrtc-env.sh
cargo test --workspace "$@"
