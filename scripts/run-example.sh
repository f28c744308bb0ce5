#!/usr/bin/env bash
# The main job: runs the shipped pipeline example on a fresh Debian 12
# machine (as root), installing what is missing first (scripts/setup.sh).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
source scripts/setup.sh

cargo build --release --locked -p pw-tools >&2
./target/release/pw-opt examples/pipeline.mlir
