#!/usr/bin/env bash
# Builds pw's fuzz targets (fuzz/) with libFuzzer on stable Rust, and runs
# each for a bounded time on its committed seed corpus (fuzz/corpus/TARGET).
#
#   scripts/fuzz.sh                    # every target, 15 s each (what CI runs)
#   scripts/fuzz.sh --seconds 3600 ir  # one target for an hour
#   scripts/fuzz.sh --jobs 2 ir        # parallel fuzzing processes
#
# New inputs libFuzzer finds go to target/fuzz/corpus/TARGET (not committed);
# a crash, panic, hang (-timeout) or memory blow-up (-rss_limit_mb) stops
# the run with a non-zero exit and leaves the input in
# target/fuzz/artifacts/TARGET/. Reproduce one with
#   target/fuzz/x86_64-unknown-linux-gnu/release/TARGET ARTIFACT
# The build needs a C++ compiler (libfuzzer-sys compiles libFuzzer) and the
# LLVM/MLIR packages of scripts/setup.sh.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

seconds=15
jobs=1
targets=()
while (($#)); do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) targets+=("$1"); shift ;;
  esac
done
((${#targets[@]})) || targets=(ir plan npy topology requests frames)

triple="$(rustc -vV | sed -n 's/^host: //p')"
out="$root/target/fuzz"
# Coverage instrumentation as cargo-fuzz sets it, all of it stable rustc
# options. The explicit --target keeps build scripts and proc macros
# uninstrumented.
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares -Cllvm-args=-sanitizer-coverage-stack-depth \
--cfg fuzzing"
cargo build --release --locked --manifest-path fuzz/Cargo.toml --target "$triple" \
  --target-dir "$out" --bins

status=0
for t in "${targets[@]}"; do
  corpus="$out/corpus/$t"
  artifacts="$out/artifacts/$t"
  log="$out/logs/$t.log"
  mkdir -p "$corpus" "$artifacts" "$out/logs"
  flags=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536
         -print_final_stats=1 -artifact_prefix="$artifacts/")
  [[ -f "fuzz/$t.dict" ]] && flags+=(-dict="$root/fuzz/$t.dict")
  ((jobs > 1)) && flags+=(-jobs="$jobs" -workers="$jobs")
  echo "fuzz: $t for ${seconds} s (log: $log)" >&2
  if (cd "$out/logs" && "$out/$triple/release/$t" "$corpus" "$root/fuzz/corpus/$t" "${flags[@]}") \
      > "$log" 2>&1; then
    grep -E '^stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb)' "$log" \
      | sed "s/^/fuzz: $t: /" >&2
  else
    tail -n 40 "$log" >&2
    echo "fuzz: $t FAILED; the input is in $artifacts/" >&2
    status=1
  fi
done
exit "$status"
