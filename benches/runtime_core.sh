#!/usr/bin/env bash
# Runtime-core benchmark (not a timed test): in one run on this machine, the
# host cost of one execute of a tiny computation and of one device-to-device
# copy, through pw's PJRT binding (pw-pjrt) and through JAX, as a table of
# medians (and 90th percentiles) in microseconds.
#
#   benches/runtime_core.sh [--iters N]
#
# Uses PW_PJRT_PLUGIN if set, else the CPU plugin of the project venv
# (.venv, made by scripts/setup.sh), and the venv's JAX.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${PW_VENV:-$root/.venv}"
iters=2000
if [[ "${1:-}" == "--iters" ]]; then iters="$2"; fi
if [[ ! -x "$venv/bin/python" ]]; then
  echo "runtime_core.sh: no venv at $venv; run scripts/setup.sh first" >&2
  exit 1
fi
export PW_VENV="$venv"

cd "$root"
rust_json="$(cargo bench -q -p pw-pjrt --bench dispatch -- --iters "$iters")"
jax_json="$("$venv/bin/python" benches/jax_dispatch.py --iters "$iters")"

"$venv/bin/python" - "$rust_json" "$jax_json" <<'PY'
import json, os, platform, sys
rust, jax = json.loads(sys.argv[1]), json.loads(sys.argv[2])
rows = [
    ("execute, dispatch only", "execute_dispatch", "LoadedExecutable::execute", "jitted call"),
    ("execute + wait for result", "execute_round_trip", "execute + Execution::wait", "call + block_until_ready"),
    ("device-to-device copy, dispatch only", "copy_dispatch", "Buffer::copy_to_device", "jax.device_put"),
    ("device-to-device copy + wait", "copy_round_trip", "copy_to_device + wait_ready", "device_put + block_until_ready"),
]
print(f"pw-pjrt: PJRT C API {rust['api']} plugin {os.path.basename(rust['plugin'])}; "
      f"JAX {jax['jax']} (its own CPU client); {rust['iters']} iterations after warm-up; "
      f"{os.cpu_count()} CPUs, {platform.machine()}")
print()
print("| operation (f32[4], CPU) | pw-pjrt median (p90) µs | JAX median (p90) µs | pw / JAX |")
print("| --- | ---: | ---: | ---: |")
for label, key, _, _ in rows:
    (rm, r9), (jm, j9) = rust[key], jax[key]
    print(f"| {label} | {rm:.1f} ({r9:.1f}) | {jm:.1f} ({j9:.1f}) | {rm / jm:.2f} |")
print()
print("pw-pjrt calls: " + "; ".join(f"{k}: {r}" for _, k, r, _ in rows))
print("JAX calls: " + "; ".join(f"{k}: {j}" for _, k, _, j in rows))
PY
