#!/usr/bin/env bash
# Installs, idempotently, everything pw needs on Debian 12 (run as root):
# the LLVM/MLIR 22 packages, a project-local Python venv (.venv) with JAX and
# the PJRT CPU plugins, and the pw Python front end. Sourced by the scripts
# that run the example and the tests; safe to run any number of times.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

apt_packages=(
  llvm-22-dev libmlir-22-dev mlir-22-tools libpolly-22-dev libclang-22-dev lld-22
  libzstd-dev libz3-dev libxml2-dev zlib1g-dev
  python3-venv ca-certificates
  iproute2 procps
  liblapack3
)

missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo not found; install a Rust toolchain (rustup) first" >&2
  exit 1
fi

# The venv is rebuilt only when the requirements change.
venv="$root/.venv"
stamp="$venv/.pw-requirements"
want="$(cat "$root/scripts/requirements.txt")"
if [[ ! -x "$venv/bin/python" || ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
  echo "setup: creating the Python venv in $venv" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q -r "$root/scripts/requirements.txt"
  printf '%s' "$want" > "$stamp"
fi
# The front end is installed editable, and again when its pyproject.toml
# changes (the entry points, such as JAX's `proxy` plugin, live in the
# install's metadata, not in the sources).
frontend="$root/frontend/python"
frontend_stamp="$venv/.pw-frontend"
if [[ -f "$frontend/pyproject.toml" ]]; then
  frontend_want="$(cat "$frontend/pyproject.toml")"
  if [[ ! -f "$frontend_stamp" || "$(cat "$frontend_stamp")" != "$frontend_want" ]] ||
    ! "$venv/bin/python" -c 'import pw, pw_jax_plugin' >/dev/null 2>&1; then
    echo "setup: installing the pw Python front end" >&2
    isolation=()
    # The venv's own setuptools, when recent enough: no download.
    if "$venv/bin/python" -c 'import setuptools, sys; sys.exit(int(setuptools.__version__.split(".")[0]) < 61)' >/dev/null 2>&1; then
      isolation=(--no-build-isolation)
    fi
    "$venv/bin/pip" install -q --no-deps "${isolation[@]}" -e "$frontend"
    printf '%s' "$frontend_want" > "$frontend_stamp"
  fi
fi

export PW_VENV="$venv"
plugin="$("$venv/bin/python" -c 'import lammps_jax_pjrt_cpu, os; print(os.path.join(os.path.dirname(lammps_jax_pjrt_cpu.__file__), "pjrt_c_api_cpu_plugin.so"))')"
# Record the CPU plugin where pw's tools look for it from any directory
# (PW_PJRT_PLUGIN and --plugin still win).
config="${XDG_CONFIG_HOME:-$HOME/.config}/pw"
if [[ "$(cat "$config/pjrt-plugin" 2>/dev/null)" != "$plugin" ]]; then
  mkdir -p "$config"
  printf '%s\n' "$plugin" > "$config/pjrt-plugin.tmp" && mv "$config/pjrt-plugin.tmp" "$config/pjrt-plugin"
fi
export PW_PJRT_PLUGIN="${PW_PJRT_PLUGIN:-$plugin}"
