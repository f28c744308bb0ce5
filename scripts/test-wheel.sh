#!/usr/bin/env bash
# Tests pw's wheel the way a user gets it: builds it (scripts/build-wheel.sh),
# installs it with pip into a fresh venv in a temporary directory, beside the
# pinned JAX, Flax and Optax (scripts/requirements.txt, benches/requirements.txt;
# pip downloads them once where its cache works), then runs
# tests/wheel/check_wheel.py with that venv's Python in an empty environment:
# the current directory, HOME and TMPDIR in the temporary directory, PATH
# without the checkout, cargo or target/, no PW_* variable (no PW_BIN_DIR, no
# recorded CPU plugin). It trains a Flax NNX + Optax MLP through the proxy on
# the wheel's pw-server and pw-worker against the same loop in-process, and
# runs a pw.connect() session.
#
#   bash scripts/test-wheel.sh [--build] [--profile release|debug] [WHEEL]
#
# --build and --profile go to build-wheel.sh (bring the binaries up to date
# first; take them from target/debug rather than target/release);
# WHEEL tests that file instead of building one. Every step is bounded;
# whatever the script starts is ended by PID when it exits, and the temporary
# directory removed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
die() { echo "test-wheel: $*" >&2; exit 1; }

build=() wheel=""
while (($#)); do
  arg="$1"
  shift
  case "$arg" in
    --build) build+=(--build) ;;
    --profile)
      (($#)) || die "--profile needs release or debug"
      build+=(--profile "$1")
      shift
      ;;
    -h | --help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option $arg (see --help)" ;;
    *) [[ -z "$wheel" ]] || die "one wheel only (see --help)"; wheel="$(realpath "$arg")" ;;
  esac
done

tmp="$(mktemp -d "${TMPDIR:-/tmp}/pw-test-wheel.XXXXXX")"
# The running step's PID: a `timeout`, which leads a process group of its own
# (with the pw-server and pw-worker the check starts).
child=""
cleanup() {
  local rc=$?
  if [[ -n "$child" ]] && kill -0 "$child" 2>/dev/null; then
    kill -TERM -- "-$child" 2>/dev/null || kill -TERM "$child" 2>/dev/null || true
    for _ in $(seq 100); do
      kill -0 -- "-$child" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL -- "-$child" 2>/dev/null || true
  fi
  rm -rf "$tmp"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# bounded SECONDS COMMAND...: runs COMMAND in the background (so that a signal
# reaches the traps at once) and waits for it, for SECONDS at most.
bounded() {
  local limit="$1" rc=0
  shift
  timeout --kill-after=10 "$limit" "$@" &
  child=$!
  wait "$child" || rc=$?
  child=""
  if ((rc == 124 || rc == 137)); then
    echo "test-wheel: gave up after $limit s: $*" >&2
  fi
  return "$rc"
}

if [[ -z "$wheel" ]]; then
  bounded 3600 bash "$root/scripts/build-wheel.sh" "${build[@]}" "$tmp/dist" >/dev/null
  wheel="$(echo "$tmp"/dist/pw-*.whl)"
fi
[[ -f "$wheel" ]] || die "no wheel at $wheel"
echo "test-wheel: $(basename "$wheel"), $(du -m "$wheel" | cut -f1) MB" >&2

venv="$tmp/venv"
mkdir -p "$tmp/work" "$tmp/home" "$tmp/tmp"
bounded 300 python3 -m venv "$venv"
bounded 1800 env -C "$tmp/work" "$venv/bin/pip" install -q \
  -c "$root/scripts/requirements.txt" -r "$root/benches/requirements.txt" "$wheel"

# PATH: the venv's bin, then the caller's PATH less the checkout, cargo, rustup
# and target/ directories.
path="$venv/bin"
IFS=: read -ra dirs <<<"$PATH"
for d in "${dirs[@]}"; do
  case "$d" in
    "" | "$root" | "$root"/* | *cargo* | *rustup* | */target/*) ;;
    *) path="$path:$d" ;;
  esac
done

# A copy of the check, so that nothing it runs is read from the checkout.
cp "$root/tests/wheel/check_wheel.py" "$tmp/work/"
bounded 900 env -i -C "$tmp/work" PATH="$path" HOME="$tmp/home" TMPDIR="$tmp/tmp" LANG=C.UTF-8 \
  JAX_PLATFORMS=cpu TF_CPP_MIN_LOG_LEVEL=2 \
  "$venv/bin/python" -I check_wheel.py "$root"
echo "test-wheel: passed" >&2
