#!/usr/bin/env bash
# The main job: runs the shipped pipeline example (a 3-stage MLP pipeline of
# jax.jit functions over 4 microbatches, captured as one pw program) through
# pw-run on the PJRT CPU plugin, and compares its outputs with JAX's. Works
# on a fresh Debian 12 machine (as root): scripts/setup.sh installs what is
# missing first.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
source scripts/setup.sh

cargo build --release --locked -p pw-tools >&2
example=examples/pipeline
inputs=()
expected=()
for i in $(seq 0 9); do inputs+=("$example/input_$i.npy"); done
for i in $(seq 0 3); do expected+=("$example/expected_$i.npy"); done
out=target/pipeline-run
./target/release/pw-run "$example.mlir" "${inputs[@]}" \
  --expect "${expected[@]}" --out-dir "$out" --trace "$out/trace.json"
echo "trace (open in Perfetto or chrome://tracing): $out/trace.json"
