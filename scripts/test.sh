#!/usr/bin/env bash
# Runs every test of pw on a fresh Debian 12 machine (as root): installs what
# is missing (scripts/setup.sh), builds, then runs the Rust tests, the Python
# front end's tests, a bounded run of every fuzz target, and the format and
# lint checks.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
source scripts/setup.sh

export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
# XLA logs every compilation at INFO/WARNING level; keep its errors.
export TF_CPP_MIN_LOG_LEVEL="${TF_CPP_MIN_LOG_LEVEL:-2}"
step() { printf '\n== %s\n' "$*" >&2; }

step "lock files"
# fuzz/ is its own workspace with its own Cargo.lock; it must follow the
# main one whenever a shared crate's dependencies change.
cargo metadata --locked --format-version 1 --manifest-path fuzz/Cargo.toml >/dev/null

step "build"
cargo build --workspace --all-targets --locked

step "test extras: chromium (the status page's browser test)"
# Only the cluster tests need it; installed here, not by setup.sh.
if ! command -v chromium >/dev/null 2>&1; then
  DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
export PW_REQUIRE_BROWSER=1

step "test extras: Ray (the Ray launcher's test, frontend/python/tests/test_ray.py)"
# Only that test needs it; installed into the venv here, not by setup.sh.
ray_version=2.60.0
if ! "$PW_VENV/bin/python" -c "import sys, ray; sys.exit(ray.__version__ != '$ray_version')" >/dev/null 2>&1; then
  "$PW_VENV/bin/pip" install -q "ray==$ray_version"
fi
export PW_REQUIRE_RAY=1

step "test extras: prometheus_client and promql_parser (the metrics test parses /metrics and the Grafana dashboard's queries with them), TensorStore and Orbax (the checkpoint tests read pw's checkpoints and write Orbax's)"
for pinned in prometheus-client==0.26.0 promql-parser==0.12.0 tensorstore==0.1.86 orbax-checkpoint==0.12.8; do
  if ! "$PW_VENV/bin/python" -c "import sys, importlib.metadata as m; sys.exit(m.version('${pinned%%==*}') != '${pinned##*==}')" >/dev/null 2>&1; then
    "$PW_VENV/bin/pip" install -q -c scripts/requirements.txt "$pinned"
  fi
done
export PW_REQUIRE_CHECKPOINT_LIBS=1
# pw-deploy's test that runs the manifests' command lines needs the binaries
# built above: fail rather than skip.
export PW_REQUIRE_BINARIES=1

step "the IFRT proxy protocol matches the installed jaxlib (scripts/gen-ifrt-proto.py --check)"
"$PW_VENV/bin/python" scripts/gen-ifrt-proto.py --check

step "Rust tests"
cargo test --workspace --locked

if [[ -d frontend/python/tests ]]; then
  step "Python front end tests"
  "$PW_VENV/bin/python" -m pytest -q frontend/python/tests
fi

step "wheel: built, installed into a fresh venv, trained through the proxy and run in a session (scripts/test-wheel.sh)"
# From the binaries the build step made (a release build would double it).
bash scripts/test-wheel.sh --profile debug

step "fuzz targets, 15 s each (scripts/fuzz.sh)"
bash scripts/fuzz.sh --seconds "${PW_FUZZ_SECONDS:-15}"

step "format and lint"
cargo fmt --all --check
cargo fmt --all --check --manifest-path fuzz/Cargo.toml
cargo clippy --workspace --all-targets --locked -- -D warnings

step "all tests passed"
