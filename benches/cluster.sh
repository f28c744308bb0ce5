#!/usr/bin/env bash
# benches/cluster.rs: pw-server and pw-workers on 127.0.0.1. Builds the
# release binaries it starts, then prints the table (docs/benchmarks.md).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
source scripts/setup.sh
export TF_CPP_MIN_LOG_LEVEL="${TF_CPP_MIN_LOG_LEVEL:-2}"
cargo build --release --locked -p pw-tools -p pw-worker >&2
cargo bench --locked -p pw-benches --bench cluster
