#!/usr/bin/env bash
# Builds pw's wheel: the Python package `pw`, the `pw_jax_plugin` module (JAX's
# `proxy` platform) and pw's binaries (pw-server, pw-worker, pw-opt, pw-run,
# pw-status) under pw/_bin/, so that `pip install` of the one file gives a
# working pw on a machine with no checkout and no Rust toolchain.
#
#   bash scripts/build-wheel.sh [--build] [--profile release|debug] [OUT_DIR]
#
# The binaries are taken from target/<profile> (release by default) as they
# are; --build brings them up to date first (cargo rebuilds only what
# changed), and a missing one is built. The debug profile's binaries go in
# without their line tables (the tests' wheel: scripts/test.sh has built them
# already). OUT_DIR defaults to target/wheels. Python: $PYTHON, else the
# checkout's .venv, else python3; it needs pip and grpcio-tools (the wheel
# carries pw.proto's messages, generated here).
# Prints the wheel's path.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
die() { echo "build-wheel: $*" >&2; exit 1; }

build=0 out="" profile=release
while (($#)); do
  arg="$1"
  shift
  case "$arg" in
    --build) build=1 ;;
    --profile)
      (($#)) || die "--profile needs release or debug"
      profile="$1"
      shift
      [[ "$profile" == release || "$profile" == debug ]] || die "--profile is release or debug, not $profile"
      ;;
    -h | --help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option $arg (see --help)" ;;
    *) [[ -z "$out" ]] || die "one output directory only (see --help)"; out="$arg" ;;
  esac
done
out="${out:-$root/target/wheels}"

bins=(pw-server pw-worker pw-opt pw-run pw-status)
built="${CARGO_TARGET_DIR:-$root/target}/$profile"
for b in "${bins[@]}"; do
  [[ -x "$built/$b" ]] || build=1
done
if ((build)); then
  command -v cargo >/dev/null 2>&1 || die "cargo is needed to build the binaries into $built"
  flags=()
  [[ "$profile" == release ]] && flags=(--release)
  (cd "$root" && cargo build "${flags[@]}" --locked --bins -p pw-tools -p pw-worker) >&2
fi

python="${PYTHON:-}"
if [[ -z "$python" ]]; then
  python=python3
  [[ -x "$root/.venv/bin/python" ]] && python="$root/.venv/bin/python"
fi
"$python" -c 'import grpc_tools.protoc' 2>/dev/null ||
  die "$python has no grpcio-tools (pip install grpcio-tools); set PYTHON to a Python that has it"

stage="$(mktemp -d "${TMPDIR:-/tmp}/pw-wheel.XXXXXX")"
trap 'rm -rf "$stage"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A copy of the front end's sources, never the checkout itself: the binaries
# and generated files go into the copy only.
src="$root/frontend/python"
mkdir -p "$stage/pw/_bin" "$stage/pw/_generated"
cp "$src/pyproject.toml" "$src/setup.py" "$src/pw_jax_plugin.py" "$stage/"
cp "$src"/pw/*.py "$stage/pw/"
# Release builds go in as built: they carry no debug info, and their symbol
# tables (which name the functions of a backtrace) are a seventh of the
# compressed wheel. Debug builds lose their line tables.
for b in "${bins[@]}"; do
  install -m 755 "$built/$b" "$stage/pw/_bin/$b"
  if [[ "$profile" == debug ]]; then
    strip --strip-debug "$stage/pw/_bin/$b"
  fi
done

# pw.proto and its messages, named as pw/_proto.py looks for them
# (pw_pb2_<the first 16 hex digits of the .proto's SHA-256>.py).
proto=""
for p in "$root/runtime/wire/proto/pw.proto" "$root/runtime/proto/pw.proto"; do
  if [[ -f "$p" ]]; then proto="$p"; break; fi
done
[[ -n "$proto" ]] || die "pw.proto not found under $root/runtime"
cp "$proto" "$stage/pw/pw.proto"
"$python" -m grpc_tools.protoc -I"$stage/pw" --python_out="$stage/pw/_generated" pw.proto >&2
digest="$(sha256sum "$proto" | cut -c1-16)"
mv "$stage/pw/_generated/pw_pb2.py" "$stage/pw/_generated/pw_pb2_$digest.py"

# setuptools >= 70.1 has bdist_wheel: take the local one then, else let pip
# fetch setuptools into an isolated build environment.
isolation=()
if "$python" -c 'import setuptools.command.bdist_wheel' 2>/dev/null; then
  isolation=(--no-build-isolation)
fi
"$python" -m pip wheel -q --no-deps --no-cache-dir "${isolation[@]}" -w "$stage/dist" "$stage" >&2
wheels=("$stage"/dist/pw-*.whl)
((${#wheels[@]} == 1)) && [[ -f "${wheels[0]}" ]] || die "pip wheel made no single pw wheel"
case "${wheels[0]}" in
  *-none-any.whl) die "$(basename "${wheels[0]}") is tagged pure Python: setup.py did not see pw/_bin" ;;
esac
mkdir -p "$out"
mv -f "${wheels[0]}" "$out/"
echo "$(cd "$out" && pwd)/$(basename "${wheels[0]}")"
