"""JAX's own test suite, in-process and through pw's IFRT proxy.

For each chosen file of JAX's `tests/` folder: the tests that pass
in-process (`JAX_PLATFORMS=cpu`; the files ask for their 8 CPU devices
themselves), how many of those pass through pw (`JAX_PLATFORMS=proxy`
against a fresh pw-server with one pw-worker of 8 CPU devices, or two of
4 with `--workers 2x4`), and the commonest failure messages of the rest.
It fetches nothing: it runs a copy of JAX's sources you already have.

Getting JAX's tests (tag `jax-v0.10.2` of the public jax-ml/jax repository
on GitHub, matching the jax 0.10.2 of the venv), and what they import:

    git clone --depth 1 --branch jax-v0.10.2 <that repository> jax-src
    .venv/bin/pip install absl-py hypothesis      # pytest is in the venv

Then (release binaries: `cargo build --release -p pw-tools -p pw-worker`):

    .venv/bin/python benches/jax_suite.py jax-src array_test.py api_test.py
    .venv/bin/python benches/jax_suite.py jax-src array_test.py --workers 2x4 --failures 20
    .venv/bin/python benches/jax_suite.py jax-src pjit_test.py -k Layout --json out.json
    .venv/bin/python benches/jax_suite.py jax-src pjit_test.py --in-process-from out.json
    .venv/bin/python benches/jax_suite.py jax-src colocated_python_test.py --platforms proxy,cpu

`--platforms` is JAX_PLATFORMS of the side through pw (default `proxy`).
colocated_python_test.py needs `proxy,cpu`: its setUp counts the CPU
devices of a local `cpu` backend (`jax.devices("cpu")`) and skips every
test without 8 of them, while its functions run on the proxy's devices
(`colocated_cpu_devices(jax.local_devices())`).

The sources are copied (tests/, conftest.py, pyproject.toml) into a
temporary folder first, so that `import jax` finds the installed jax and
not the checkout's. Each file runs in its own pytest process per side,
bounded by --timeout; the cluster of a file is started before it and ended
by PID after it.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "frontend", "python"))

from pw._local import LocalServer  # noqa: E402

# What the environment says about JAX's platform is ours to set.
SCRUB = (
    "JAX_PLATFORMS",
    "JAX_PLATFORM_NAME",
    "JAX_BACKEND_TARGET",
    "XLA_FLAGS",
    "JAX_ENABLE_X64",
    "JAX_NUM_GENERATED_CASES",
)


def environ(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in SCRUB}
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    env.update(extra)
    return env


def copy_sources(src: str) -> str:
    """tests/, conftest.py and pyproject.toml of `src` in a fresh folder."""
    if not os.path.isdir(os.path.join(src, "tests")):
        sys.exit(f"jax_suite.py: {src} has no tests/ folder (give the root of a JAX checkout)")
    dst = tempfile.mkdtemp(prefix="pw-jax-suite-")
    shutil.copytree(os.path.join(src, "tests"), os.path.join(dst, "tests"))
    for name in ("conftest.py", "pyproject.toml"):
        if os.path.exists(os.path.join(src, name)):
            shutil.copy(os.path.join(src, name), dst)
    return dst


class Cluster:
    """pw-server and `workers` pw-workers of `devices` CPU devices each."""

    def __init__(self, workers: int, devices: int):
        # Colocated Python (colocated_python_test.py) runs in the workers'
        # sidecars (of this interpreter).
        self.local = LocalServer(devices)
        self.address = self.local.address
        for _ in range(1, workers):
            self.local.add_worker()

    def stop(self):
        self.local.stop()


def run_pytest(root: str, file: str, env: dict, select: str | None, timeout: float, xml: str):
    """Runs one test file; (outcomes by test id, seconds, how it ended)."""
    cmd = [sys.executable, "-m", "pytest", os.path.join("tests", file), "-q", "-p", "no:cacheprovider",
           f"--junitxml={xml}", "-o", "junit_family=xunit1"]
    if select:
        cmd += ["-k", select]
    start = time.monotonic()
    try:
        done = subprocess.run(cmd, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=timeout)
        ended = f"exit {done.returncode}"
        tail = done.stdout[-2000:]
    except subprocess.TimeoutExpired as e:
        ended = f"timed out after {timeout:.0f} s"
        tail = (e.stdout or b"")[-2000:] if isinstance(e.stdout, bytes) else (e.stdout or "")[-2000:]
    seconds = time.monotonic() - start
    outcomes = read_junit(xml) if os.path.exists(xml) else {}
    if not outcomes:
        ended += ": no results; the end of its output:\n" + tail
    return outcomes, seconds, ended


def read_junit(path: str) -> dict:
    """Test id -> ("passed" | "failed" | "skipped", first line of the message)."""
    out = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "failed"
                message = child.get("message") or child.text or ""
            elif child.tag == "skipped":
                outcome = "skipped"
        out[name] = (outcome, first_line(message))
    return out


_NOISE = [
    (re.compile(r"0x[0-9a-f]+"), "0x…"),
    (re.compile(r"\b\d+(\.\d+)?\b"), "N"),
    (re.compile(r"'[^']{40,}'"), "'…'"),
]


def first_line(message: str) -> str:
    line = next((l.strip() for l in message.splitlines() if l.strip()), "")
    return line[:300]


def kind(message: str) -> str:
    """A failure message with its numbers and addresses blurred, to count alike ones."""
    text = message[:160]
    for pattern, replacement in _NOISE:
        text = pattern.sub(replacement, text)
    return text or "(no message)"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("jax_src", help="the root of a JAX checkout at tag jax-v0.10.2")
    parser.add_argument("files", nargs="+", help="test files of its tests/ folder (array_test.py ...)")
    parser.add_argument("--workers", default="1x8", choices=["1x8", "2x4"], help="pw-workers x CPU devices each")
    parser.add_argument("-k", dest="select", help="pytest -k expression, on both sides")
    parser.add_argument("--platforms", default="proxy", choices=["proxy", "proxy,cpu"],
                        help="JAX_PLATFORMS through pw (default proxy; see above)")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per file and side (default 1800)")
    parser.add_argument("--failures", type=int, default=8, help="failure kinds listed per file (default 8)")
    parser.add_argument("--json", help="write every test's outcome on both sides here")
    parser.add_argument("--in-process-from", metavar="JSON",
                        help="take the in-process side from an earlier --json of the same files and -k "
                             "(it does not depend on pw): only the side through pw runs")
    args = parser.parse_args()
    earlier = {}
    if args.in_process_from:
        with open(args.in_process_from) as f:
            earlier = json.load(f)

    import jax

    if jax.__version__ != "0.10.2":
        print(f"jax_suite.py: the installed jax is {jax.__version__}, the suite's tag is for 0.10.2", file=sys.stderr)
    workers, devices = (int(x) for x in args.workers.split("x"))
    root = copy_sources(os.path.abspath(args.jax_src))
    out = tempfile.mkdtemp(prefix="pw-jax-suite-out-")
    report, rows = {}, []
    try:
        for file in args.files:
            base = os.path.splitext(os.path.basename(file))[0]
            if file in earlier:
                before = earlier[file]
                local = {t: tuple(v) for t, v in before["in_process"].items()}
                local_s, local_end = before.get("in_process_seconds", float("nan")), before["in_process_ended"]
            else:
                print(f"{file}: in-process...", file=sys.stderr, flush=True)
                local, local_s, local_end = run_pytest(
                    root, file, environ(JAX_PLATFORMS="cpu"), args.select, args.timeout,
                    os.path.join(out, f"{base}-in-process.xml"))
            print(f"{file}: through pw ({args.workers})...", file=sys.stderr, flush=True)
            cluster = Cluster(workers, devices)
            try:
                proxied, proxy_s, proxy_end = run_pytest(
                    root, file, environ(JAX_PLATFORMS=args.platforms, JAX_BACKEND_TARGET=f"grpc://{cluster.address}"),
                    args.select, args.timeout, os.path.join(out, f"{base}-proxy.xml"))
            finally:
                cluster.stop()
            passing = [t for t, (o, _) in local.items() if o == "passed"]
            through = [t for t in passing if proxied.get(t, ("missing", ""))[0] == "passed"]
            failed = collections.Counter()
            examples = {}
            for t in passing:
                outcome, message = proxied.get(t, ("missing", "did not run through pw (the file stopped first)"))
                if outcome != "passed":
                    k = kind(message if outcome == "failed" else f"{outcome}: {message}")
                    failed[k] += 1
                    examples.setdefault(k, t)
            share = 100.0 * len(through) / len(passing) if passing else float("nan")
            rows.append((file, len(local), len(passing), len(through), share, local_s, proxy_s))
            report[file] = {
                "in_process": {t: list(v) for t, v in local.items()},
                "proxy": {t: list(v) for t, v in proxied.items()},
                "in_process_ended": local_end,
                "proxy_ended": proxy_end,
                "in_process_seconds": local_s,
                "proxy_seconds": proxy_s,
            }
            print(f"\n{file}: {len(through)} of {len(passing)} pass through pw ({share:.1f}%); "
                  f"in-process {local_end}, {local_s:.0f} s; through pw {proxy_end}, {proxy_s:.0f} s")
            for k, n in failed.most_common(args.failures):
                print(f"  {n:4d}  {k}\n        e.g. {examples[k]}")
            sys.stdout.flush()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)

    print(f"\nJAX {jax.__version__}; pw: {workers} worker(s) of {devices} CPU devices; "
          f"{os.cpu_count()} CPUs" + (f"; -k {args.select}" if args.select else ""))
    print()
    print("| file | tests | pass in-process | of those, pass through pw | share | in-process | through pw |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    total = [0, 0, 0]
    for file, n, passing, through, share, ls, ps in rows:
        total = [total[0] + n, total[1] + passing, total[2] + through]
        print(f"| {file} | {n} | {passing} | {through} | {share:.1f}% | {ls:.0f} s | {ps:.0f} s |")
    if len(rows) > 1:
        share = 100.0 * total[2] / total[1] if total[1] else float("nan")
        print(f"| all | {total[0]} | {total[1]} | {total[2]} | {share:.1f}% | | |")


if __name__ == "__main__":
    main()
