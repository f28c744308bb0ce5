#!/usr/bin/env bash
# The runtime-core and cluster benchmarks on an NVIDIA GPU, through the CUDA
# PJRT plugin of the machine's own JAX, with JAX on the same GPU as the peer.
#
#   benches/gpu.sh BIN_DIR [LOG_DIR]
#
# BIN_DIR holds release builds made elsewhere (a GPU machine need not have
# cargo or MLIR): pw-server, pw-worker, and the bench binaries `dispatch`
# (runtime/pjrt/benches/dispatch.rs) and `cluster` (benches/cluster.rs).
# benches/gpu-pack.sh makes such a folder. $PW_PYTHON (default python3) must
# import a JAX whose CUDA plugin (jax_plugins.xla_cuda12 or xla_cuda13) is
# installed; its xla_cuda_plugin.so is the plugin pw loads. Every process
# gets the plugin with preallocate=false, so that the workers, the bench and
# JAX can share one GPU. Each part is bounded by a timeout; a part that fails
# is reported and the next runs. Tables go to stdout; logs to LOG_DIR.
# PW_GPU_SECURED=0 leaves out the authenticated rerun of the cluster bench.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$(cd "${1:?usage: benches/gpu.sh BIN_DIR [LOG_DIR]}" && pwd)"
logs="${2:-$(mktemp -d)}"
mkdir -p "$logs"
python="${PW_PYTHON:-python3}"

plugin="$("$python" - <<'PY'
import glob, os
import jax_plugins
found = [p for d in jax_plugins.__path__ for p in sorted(glob.glob(os.path.join(d, "xla_cuda*", "xla_cuda_plugin.so")))]
print(found[0] if found else "")
PY
)"
if [[ -z "$plugin" ]]; then
  echo "gpu.sh: $python has no JAX CUDA plugin (jax_plugins/xla_cuda*/xla_cuda_plugin.so)" >&2
  exit 1
fi

export PW_PJRT_PLUGIN="$plugin"
export PW_PJRT_CLIENT_OPTIONS="preallocate=false"
export XLA_PYTHON_CLIENT_PREALLOCATE=false
export PW_PYTHON="$python"
export PW_BENCH_JAX_PLATFORM=cuda
export PW_BENCH_BIN_DIR="$bin"
export PW_ROOT="$root"
export TF_CPP_MIN_LOG_LEVEL="${TF_CPP_MIN_LOG_LEVEL:-2}"

echo "## Machine"
echo
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | sed 's/^/    /'
"$python" -c 'import jax, jaxlib; print("    JAX", jax.__version__, "jaxlib", jaxlib.__version__, "devices", jax.devices())' 2>&1 | tail -1
echo "    plugin $plugin"
echo "    $(nproc) CPUs, $(uname -m)"
echo

failed=0
part() {
  local name="$1" limit="$2"
  shift 2
  echo "## $name"
  echo
  local start=$SECONDS
  timeout --kill-after=10 "$limit" "$@" 2>"$logs/$name.log"
  local rc=$?
  if ((rc != 0)); then
    failed=1
    echo "$name failed (exit $rc after $((SECONDS - start)) s); the end of its log:"
    tail -n 30 "$logs/$name.log" | sed 's/^/    /'
  fi
  echo
}

part runtime-core 120 bash "$root/benches/runtime_core.sh" --iters 2000
PW_BENCH_VERBOSE=1 part cluster 180 "$bin/cluster"
if [[ "${PW_GPU_SECURED:-1}" == 1 ]]; then
  PW_BENCH_VERBOSE=1 PW_BENCH_SECURED=1 part cluster-secured 180 "$bin/cluster"
fi
exit $failed
