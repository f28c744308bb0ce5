#!/usr/bin/env bash
# The main job: runs the shipped pipeline example (a 3-stage MLP pipeline of
# jax.jit functions over 4 microbatches, captured as one pw program) on the
# PJRT CPU plugin and compares its outputs with JAX's: first in one process
# (pw-run), then across a pw-server with three pw-workers on 127.0.0.1, one
# stage per worker, pieces going worker to worker; in between, the pipeline
# training step under GPipe and 1F1B with the bytes each device held. Works
# on a fresh Debian 12 machine (as root): scripts/setup.sh installs what is
# missing first.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
source scripts/setup.sh

cargo build --release --locked -p pw-tools -p pw-worker >&2
bin=target/release
example=examples/pipeline
inputs=()
expected=()
for i in $(seq 0 9); do inputs+=("$example/input_$i.npy"); done
for i in $(seq 0 3); do expected+=("$example/expected_$i.npy"); done
out=target/pipeline-run
mkdir -p "$out"

echo "== in one process"
"$bin/pw-run" "$example.mlir" "${inputs[@]}" \
  --expect "${expected[@]}" --out-dir "$out" --trace "$out/trace.json"
echo "trace (open in Perfetto or chrome://tracing): $out/trace.json"

echo
echo "== a pipeline training step (4 stages x 8 microbatches): each schedule, and the bytes each device held"
train=examples/pipeline_train
mapfile -t train_inputs < <(ls "$train"/input_*.npy | sort -V)
mapfile -t train_expected < <(ls "$train"/expected_*.npy | sort -V)
for policy in gpipe 1f1b; do
  echo "-- --schedule $policy"
  "$bin/pw-run" "$train.mlir" "${train_inputs[@]}" --expect "${train_expected[@]}" \
    --devices 4 --schedule "$policy" --stats | sed -n '/^peak device bytes/,/^steps/p' | sed '$d'
done

echo
echo "== across a pw-server and three pw-workers on 127.0.0.1"
pids=()
stop() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap stop EXIT
# Waits (at most 30 s) for text $2 in file $1.
wait_for() {
  for _ in $(seq 300); do
    grep -q "$2" "$1" 2>/dev/null && return
    sleep 0.1
  done
  echo "run-example: no \"$2\" in $1 after 30 s" >&2
  exit 1
}
"$bin/pw-server" --listen 127.0.0.1:0 --compile-cache "$out/compile-cache" >"$out/server.out" 2>"$out/server.log" &
pids+=($!)
wait_for "$out/server.out" "listening on"
server="$(sed -n 's/.*listening on //p' "$out/server.out" | head -n 1)"
for w in 0 1 2; do
  "$bin/pw-worker" --controller "$server" --devices 2 >"$out/worker$w.out" 2>"$out/worker$w.log" &
  pids+=($!)
  wait_for "$out/worker$w.log" "registered with the controller"
done
"$bin/pw-run" "$example.mlir" "${inputs[@]}" --expect "${expected[@]}" \
  --server "$server" --trace "$out/trace-cluster.json"
echo "trace across workers: $out/trace-cluster.json; server and worker logs: $out/*.log"
