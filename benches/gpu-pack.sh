#!/usr/bin/env bash
# Builds (release) what benches/gpu.sh runs and puts it, stripped, in DIR:
# pw-server, pw-worker, and the bench binaries `dispatch` and `cluster`.
#
#   benches/gpu-pack.sh DIR
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:?usage: benches/gpu-pack.sh DIR}"
cd "$root"
source scripts/setup.sh
mkdir -p "$out"
cargo build --release --locked -p pw-tools -p pw-worker >&2
cp target/release/pw-server target/release/pw-worker "$out/"
cargo bench --locked --no-run -p pw-benches --bench cluster -p pw-pjrt --bench dispatch \
  --message-format=json 2>/dev/null |
  "$root/.venv/bin/python" -c '
import json, shutil, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == ["bench"]:
        shutil.copy(m["executable"], sys.argv[1] + "/" + m["target"]["name"])
' "$out"
for b in pw-server pw-worker dispatch cluster; do
  [[ -x "$out/$b" ]] || { echo "gpu-pack.sh: $b was not built" >&2; exit 1; }
  strip "$out/$b"
done
ls -la "$out" >&2
