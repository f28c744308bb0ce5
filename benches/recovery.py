"""Recovery from a lost worker, as one table (docs/benchmarks.md):

    .venv/bin/python benches/recovery.py [--kills N] [--seed S]

The long pipeline of the recovery tests (64 microbatches through three
512-wide stages, made by benches/make_pipeline.py with JAX's outputs) on
pw-server and three pw-workers of 2 devices (release binaries of
target/release: `cargo build --release -p pw-tools -p pw-worker`).

* Runs without a fault: the time of `pw-run --server` from start to exit.
* N runs where one worker, drawn at random, is killed (SIGKILL) at a random
  point while the run is under way, and a new worker registers at once
  (a restarted pod): total time, time from the kill to when the controller
  noticed it and to when the run had recovered, and whether it finished
  with JAX's outputs.
* Each kill twice, at the same moment of the same worker: with the
  server's checkpoints (values sent between workers kept at their senders,
  `--checkpoint-mb`, the default) and without them (`--checkpoint-mb 0`).
* The peer: restarting the whole job instead (what a run that cannot
  recover costs at best): the time until the kill plus one whole run.

Every process is started and ended by PID; every wait is bounded.
"""

import argparse
import datetime
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release")
DATA = os.path.join(ROOT, "target", "bench-recovery")


def tool(name):
    path = os.path.join(BIN, name)
    if not os.path.isfile(path):
        sys.exit(f"{path} is missing: cargo build --release -p pw-tools -p pw-worker")
    return path


def first_line(proc, prefix, limit=30.0):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        if prefix in line:
            return line.split(prefix, 1)[1].strip()
    raise RuntimeError(f"no {prefix!r} within {limit} s")


class Cluster:
    def __init__(self, workers=3, devices=2, server_args=()):
        self.dir = tempfile.mkdtemp(prefix="pw-bench-recovery-")
        self.procs = []
        server = self._start(
            [tool("pw-server"), "--listen", "127.0.0.1:0", "--compile-cache", os.path.join(DATA, "cache"),
             *server_args],
            "server",
        )
        self.address = first_line(server, "listening on ")
        self.workers = [self.add_worker(devices) for _ in range(workers)]
        self.wait_workers(workers)

    def _start(self, argv, name):
        err = open(os.path.join(self.dir, f"{name}.log"), "w")
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, text=True, env=env)
        self.procs.append(p)
        return p

    def add_worker(self, devices=2):
        w = self._start(
            [tool("pw-worker"), "--controller", self.address, "--devices", str(devices), "--listen", "127.0.0.1:0"],
            f"worker-{len(self.procs)}",
        )
        first_line(w, "listening on ")
        return w

    def status_workers(self):
        out = subprocess.run(
            [tool("pw-status"), "--server", self.address, "--json"], capture_output=True, text=True, timeout=20
        )
        return len(re.findall(r'"answering"', out.stdout))

    def wait_workers(self, n, limit=30.0):
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            if self.status_workers() == n:
                return
            time.sleep(0.05)
        raise RuntimeError(f"{n} workers never registered")

    def lost_at(self):
        """When the server's log says it noticed a worker was gone (epoch s)."""
        with open(os.path.join(self.dir, "server.log")) as f:
            for line in f:
                if " is gone: " in line:
                    stamp = re.sub(r"\x1b\[[0-9;]*m", "", line).split()[0]
                    return datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
        return None

    def close(self, keep_logs=False):
        """Ends the processes it started; removes its folder of logs unless
        `keep_logs`."""
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.wait(10)
        if not keep_logs:
            shutil.rmtree(self.dir, ignore_errors=True)


def program_args():
    program = os.path.join(DATA, "long.mlir")
    if not os.path.isfile(program):
        os.makedirs(DATA, exist_ok=True)
        subprocess.run(
            [sys.executable, os.path.join(ROOT, "benches", "make_pipeline.py"), program + ".tmp", "64", "512", "256",
             "--data", os.path.join(DATA, "data")],
            check=True, timeout=300,
        )
        os.replace(program + ".tmp", program)

    def numbered(prefix):
        files = [f for f in os.listdir(os.path.join(DATA, "data")) if f.startswith(prefix)]
        files.sort(key=lambda f: int(f[len(prefix) : -4]))
        return [os.path.join(DATA, "data", f) for f in files]

    return [program, *numbered("input_"), "--expect", *numbered("expected_")]


def pw_run(c, args):
    return subprocess.Popen(
        [tool("pw-run"), *args, "--server", c.address], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"),
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kills", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--clean", type=int, default=3)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    args = program_args()

    clean = []
    c = Cluster()
    try:
        # The first run compiles; the cache serves the rest.
        for i in range(a.clean + 1):
            t = time.monotonic()
            r = pw_run(c, args)
            out, err = r.communicate(timeout=300)
            if r.returncode != 0 or "MISMATCH" in out:
                sys.exit(f"a run without a fault failed:\n{out}\n{err}")
            if i:
                clean.append(time.monotonic() - t)
    finally:
        c.close()
    clean_s = statistics.median(clean)

    configs = {"checkpoints": (), "none": ("--checkpoint-mb", "0")}
    rows = {name: [] for name in configs}
    for k in range(a.kills):
        victim = rng.randrange(3)
        # Somewhere in the run's execution (it starts ~0.5 s after pw-run).
        delay = 0.45 + rng.random() * max(0.1, clean_s - 0.6)
        for name, server_args in configs.items():
            rows[name].append(kill_once(args, victim, delay, server_args))
            print(f"kill {k + 1}/{a.kills} ({name}): worker {victim} at {rows[name][-1]['at']:.0f} ms: "
                  f"{rows[name][-1]['log']}", file=sys.stderr)

    hit = {name: [r for r in rs if r["recovered"]] for name, rs in rows.items()}

    def median_of(name, key):
        xs = [r[key] for r in hit[name] if r[key] is not None]
        return statistics.median(xs) if xs else float("nan")

    def row(what, cells, peer):
        print("| " + " | ".join([what, *cells, peer]) + " |")

    clean_ms = clean_s * 1000
    restart = statistics.median([r["at"] + clean_ms for r in rows["checkpoints"]])
    row("recovery, long pipeline (64 microbatches, 3 workers x 2 devices)",
        ["pw, checkpoints (`--checkpoint-mb 512`)", "pw, none (`--checkpoint-mb 0`)"], "peer, same run")
    row("---", ["---:", "---:"], "---:")
    row(f"run without a fault (median of {len(clean)})", [f"{clean_ms:.0f} ms", "—"], "—")
    row("run with one worker killed (median of the recovered)",
        ["%.0f ms" % median_of(n, "total") for n in configs], "restarting the job: %.0f ms" % restart)
    row("kill to noticed by the controller (median)", ["%.1f ms" % median_of(n, "notice") for n in configs], "—")
    def mean_of(name, key):
        xs = [r[key] for r in hit[name]]
        return statistics.mean(xs) if xs else float("nan")

    row("kill to the run's end: median; mean",
        ["%.0f ms (%.2fx the restart); %.0f ms (%.2fx)" % (
            median_of(n, "done"), median_of(n, "done") / clean_ms, mean_of(n, "done"), mean_of(n, "done") / clean_ms)
         for n in configs],
        "restart: %.0f ms" % clean_ms)
    row("kill to the run's end, kills that replayed steps: mean",
        ["%.0f ms (%.2fx the restart)" % (
            statistics.mean([r["done"] for r in hit[n] if r["replayed"]] or [float("nan")]),
            statistics.mean([r["done"] for r in hit[n] if r["replayed"]] or [float("nan")]) / clean_ms)
         for n in configs],
        "restart: %.0f ms" % clean_ms)
    row("steps replayed (of 576), per kill",
        [", ".join(str(r["replayed"]) for r in rows[n]) for n in configs], "all 576")
    row("MiB survivors kept at the loss (median)", ["%.0f" % median_of(n, "kept") for n in configs], "—")
    row("runs that finished with JAX's outputs",
        ["%d of %d (%d recovered mid-run)" % (sum(r["ok"] for r in rows[n]), len(rows[n]), len(hit[n]))
         for n in configs], "—")


def kill_once(args, victim, delay, server_args):
    """One run on a fresh cluster with worker `victim` killed `delay` s in
    and a new worker registered at once; what it measured."""
    c = Cluster(server_args=server_args)
    try:
        t = time.monotonic()
        r = pw_run(c, args)
        time.sleep(delay)
        killed, killed_wall = time.monotonic(), time.time()
        c.workers[victim].send_signal(signal.SIGKILL)
        c.add_worker()
        out, err = r.communicate(timeout=300)
        end = time.monotonic()
        ok = r.returncode == 0 and "matches" in out and "MISMATCH" not in out
        line = next((l for l in out.splitlines() if l.startswith("recovery")), "")
        lost_at = c.lost_at()
        replayed = re.search(r"replayed (\d+) of (\d+)", line)
        kept = re.search(r"kept \d+ values \((\d+) bytes\)", line)
        return dict(
            at=(killed - t) * 1000,
            total=(end - t) * 1000,
            ok=ok,
            recovered=bool(line) and "recovered at" in line,
            notice=None if lost_at is None else (lost_at - killed_wall) * 1000,
            done=(end - killed) * 1000,
            replayed=int(replayed.group(1)) if replayed else 0,
            kept=int(kept.group(1)) / 2**20 if kept else 0,
            log=("ok" if ok else "FAILED: " + err[-1500:]) + "; " + line,
        )
    finally:
        c.close()


if __name__ == "__main__":
    main()
