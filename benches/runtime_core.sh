#!/usr/bin/env bash
# Runtime-core benchmark (not a timed test): in one run on this machine, the
# host cost of one execute of a tiny computation and of one device-to-device
# copy, through pw's PJRT binding (pw-pjrt) and through JAX, as a table of
# medians (and 90th percentiles) in microseconds.
#
#   benches/runtime_core.sh [--iters N]
#
# Uses PW_PJRT_PLUGIN if set, else the CPU plugin of the project venv
# (.venv, made by scripts/setup.sh), and the venv's JAX. On a GPU machine
# (benches/gpu.sh): PW_PJRT_PLUGIN names the CUDA plugin,
# PW_PJRT_CLIENT_OPTIONS='preallocate=false', PW_PYTHON a Python whose JAX
# has CUDA, PW_BENCH_JAX_PLATFORM=cuda, and PW_BENCH_BIN_DIR a folder with
# the dispatch bench already built (`dispatch`), for a machine without cargo.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${PW_VENV:-$root/.venv}"
python="${PW_PYTHON:-$venv/bin/python}"
iters=2000
if [[ "${1:-}" == "--iters" ]]; then iters="$2"; fi
if [[ ! -x "$python" ]]; then
  echo "runtime_core.sh: no Python at $python; run scripts/setup.sh first, or set PW_PYTHON" >&2
  exit 1
fi
export PW_VENV="$venv"

cd "$root"
if [[ -n "${PW_BENCH_BIN_DIR:-}" ]]; then
  rust_json="$("$PW_BENCH_BIN_DIR/dispatch" --iters "$iters")"
else
  rust_json="$(cargo bench -q -p pw-pjrt --bench dispatch -- --iters "$iters")"
fi
jax_json="$("$python" benches/jax_dispatch.py --iters "$iters")"

"$python" - "$rust_json" "$jax_json" <<'PY'
import json, os, platform, sys
rust, jax = json.loads(sys.argv[1]), json.loads(sys.argv[2])
rows = [
    ("execute, dispatch only", "execute_dispatch", "LoadedExecutable::execute", "jitted call"),
    ("execute + wait for result", "execute_round_trip", "execute + Execution::wait", "call + block_until_ready"),
    ("device-to-device copy, dispatch only", "copy_dispatch", "Buffer::copy_to_device", "jax.device_put"),
    ("device-to-device copy + wait", "copy_round_trip", "copy_to_device + wait_ready", "device_put + block_until_ready"),
    ("a ready result read to the host", "to_host", "Buffer::to_host", "np.asarray"),
    ("host bytes put on the device + wait", "from_host", "buffer_from_host + wait_ready", "device_put(numpy) + block_until_ready"),
    ("host bytes written into an async-transfer buffer + wait", "async_write", "AsyncTransfer::write + wait_ready", "(none)"),
]
print(f"pw-pjrt: PJRT C API {rust['api']} plugin {os.path.basename(rust['plugin'])} "
      f"({rust['platform']}, {rust['kind']}); JAX {jax['jax']} (its own {jax['platform']} client, "
      f"{jax['kind']}); {rust['iters']} iterations after warm-up; "
      f"{os.cpu_count()} CPUs, {platform.machine()}")
print()
print(f"| operation (f32[4], {rust['platform']}) | pw-pjrt median (p90) µs | JAX median (p90) µs | pw / JAX |")
print("| --- | ---: | ---: | ---: |")
for label, key, _, _ in rows:
    if rust[key] is None:
        print(f"| {label} | n/a: one device | n/a: one device | |")
        continue
    if jax[key] is None:
        (rm, r9) = rust[key]
        print(f"| {label} | {rm:.1f} ({r9:.1f}) | n/a | |")
        continue
    (rm, r9), (jm, j9) = rust[key], jax[key]
    print(f"| {label} | {rm:.1f} ({r9:.1f}) | {jm:.1f} ({j9:.1f}) | {rm / jm:.2f} |")
print()
print("pw-pjrt calls: " + "; ".join(f"{k}: {r}" for _, k, r, _ in rows))
print("JAX calls: " + "; ".join(f"{k}: {j}" for _, k, _, j in rows))
PY
