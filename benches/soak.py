"""A soak of random faults, as one table (docs/benchmarks.md):

    .venv/bin/python benches/soak.py [--faults N] [--seed S] [--window FROM:TO] [--kinds K,...]

The long pipeline of benches/recovery.py (64 microbatches through three
512-wide stages, with JAX's outputs) on pw-server and three pw-workers of 2
devices (release binaries: `cargo build --release -p pw-tools -p pw-worker`),
a fresh cluster for each fault. Each fault strikes at a moment drawn
uniformly over a whole `pw-run --server` (client upload, lowering, upload to
the workers, the run, the fetch of its outputs, their return to the
client), and is one of:

* kill: SIGKILL of one worker;
* stop: SIGSTOP of one worker (it hangs: noticed when its lease runs out);
* kill 2: SIGKILL of two workers at once;
* kill + stop: SIGKILL of one worker and SIGSTOP of another at once.

Capacity returns at once: a new worker registers for each one struck (as a
restarted pod would). A stopped worker stays stopped until the run ends.
A run that did not finish well keeps its processes' logs (the path is
printed). The table counts outcomes per kind and per phase; the phase is where the
controller's run was when the fault struck, estimated from when it noticed
the loss less the usual delay (25 ms for a kill, the 1.5 s lease for a
stop), against the phases of a run without a fault ("before the run" when
that is before the run began, or no recovery was needed). Every process is started and ended by PID;
every wait is bounded.
"""

import argparse
import collections
import os
import random
import re
import signal
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from recovery import Cluster, program_args, pw_run  # noqa: E402

KINDS = ["kill", "stop", "kill 2", "kill + stop"]
# How long after a fault the controller notices it, by signal: a killed
# worker's session breaks at once; a stopped one's lease runs out
# (`--lease-ms`, 1.5 s by default).
NOTICE_MS = {"kill": 25.0, "stop": 1500.0}


def phases_of(out):
    """The phase boundaries (ms, the server's run clock) of a run's
    summary line."""
    m = re.search(
        r"executables ready at ([\d.]+) ms, inputs sent at ([\d.]+) ms, parts sent at ([\d.]+) ms, "
        r"every part done at ([\d.]+) ms, outputs on host at ([\d.]+) ms",
        out,
    )
    if not m:
        return None
    ready, sent, parts, done, host = map(float, m.groups())
    return [("compile", ready), ("upload", sent), ("run", done), ("fetch", host)]


def phase(noticed_ms, kind, phases):
    if noticed_ms is None:
        return "before the run"
    at = noticed_ms - NOTICE_MS["stop" if kind == "stop" else "kill"]
    if at < 0:
        return "before the run"
    for name, end in phases:
        if at <= end:
            return name
    return "fetch"


def one(args, kind, victims, delay, limit):
    c = Cluster()
    stopped = []
    keep = True  # the logs of a run that did not finish well
    r = None
    try:
        t = time.monotonic()
        r = pw_run(c, args)
        time.sleep(delay)
        struck = time.time()
        for i, v in enumerate(victims):
            sig = signal.SIGSTOP if (kind == "stop" or (kind == "kill + stop" and i == 1)) else signal.SIGKILL
            c.workers[v].send_signal(sig)
            if sig == signal.SIGSTOP:
                stopped.append(c.workers[v])
        for _ in victims:
            c.add_worker()
        try:
            out, err = r.communicate(timeout=limit)
            timed_out = False
        except Exception:
            r.kill()
            out, err = r.communicate(timeout=30)
            timed_out = True
        total = (time.monotonic() - t) * 1000
        ok = r.returncode == 0 and "matches" in out and "MISMATCH" not in out
        keep = not ok
        noticed = [float(x) for x in re.findall(r"noticed at ([\d.]+) ms", out)]
        replayed = [int(x) for x in re.findall(r"replayed (\d+) of \d+", out)]
        error = " / ".join(l for l in (err or "").splitlines() if "error" in l)
        gone = c.lost_at()
        return dict(
            kind=kind,
            at=delay * 1000,
            total=total,
            ok=ok,
            timed_out=timed_out,
            noticed=min(noticed) if noticed else None,
            replayed=sum(replayed),
            recoveries=len(noticed),
            notice=None if gone is None else (gone - struck) * 1000,
            error="timed out" if timed_out else error,
        )
    finally:
        if r is not None and r.poll() is None:
            r.kill()
            r.wait(10)
        for p in stopped:
            if p.poll() is None:
                p.send_signal(signal.SIGCONT)
        if keep:
            print(f"the failed run's logs are kept in {c.dir}", file=sys.stderr)
        c.close(keep_logs=keep)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--faults", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--window", metavar="FROM:TO",
                    help="draw fault moments within FROM to TO ms of pw-run's start (default: all of a clean run)")
    ap.add_argument("--kinds", default=",".join(KINDS), help=f"comma-separated, of: {', '.join(KINDS)}")
    a = ap.parse_args()
    kinds = a.kinds.split(",")
    if not kinds or any(k not in KINDS for k in kinds):
        sys.exit(f"--kinds: choose from {KINDS}")
    rng = random.Random(a.seed)
    args = program_args()

    # A run without a fault: its length and phases.
    c = Cluster()
    try:
        walls = []
        for i in range(3):
            t = time.monotonic()
            r = pw_run(c, args + ["--stats"])
            out, err = r.communicate(timeout=300)
            if r.returncode != 0 or "MISMATCH" in out:
                sys.exit(f"a run without a fault failed:\n{out}\n{err}")
            walls.append((time.monotonic() - t) * 1000)
        phases = phases_of(out)
    finally:
        c.close()
    clean_ms = statistics.median(walls[1:])

    rows = []
    for k in range(a.faults):
        kind = kinds[rng.randrange(len(kinds))]
        victims = rng.sample(range(3), 2 if kind in ("kill 2", "kill + stop") else 1)
        start, end = (float(x) for x in a.window.split(":")) if a.window else (0.0, clean_ms)
        delay = (start + rng.random() * (end - start)) / 1000
        row = one(args, kind, victims, delay, limit=120)
        row["phase"] = phase(row["noticed"], kind, phases)
        rows.append(row)
        print(f"fault {k + 1}/{a.faults}: {kind} of workers {victims} at {row['at']:.0f} ms ({row['phase']}): "
              f"{'ok' if row['ok'] else 'FAILED: ' + row['error']}; {row['total']:.0f} ms, "
              f"{row['recoveries']} recoveries, {row['replayed']} steps replayed", file=sys.stderr)

    def line(what, rs):
        ok = sum(r["ok"] for r in rs)
        recovered = [r for r in rs if r["recoveries"]]
        finish = statistics.median([r["total"] for r in rs]) if rs else float("nan")
        replay = statistics.median([r["replayed"] for r in recovered]) if recovered else 0
        failed = collections.Counter(r["error"] for r in rs if not r["ok"])
        notices = [r["notice"] for r in rs if r["notice"] is not None]
        notice = f"{statistics.median(notices):.0f} ms" if notices else "—"
        print(f"| {what} | {len(rs)} | {ok} ({100 * ok / max(1, len(rs)):.0f}%) | {len(recovered)} | "
              f"{replay:.0f} | {notice} | {finish:.0f} ms | "
              f"{'; '.join(f'{n}x {e}' for e, n in failed.items()) or '—'} |")

    print(f"Run without a fault: {clean_ms:.0f} ms (pw-run, median of 2); phases on the server's clock: "
          + ", ".join(f"{n} to {e:.0f} ms" for n, e in phases))
    print()
    print("| faults | N | finished with JAX's outputs | recovered mid-run | steps replayed (median, of 576) "
          "| fault to noticed (median) | fault run, start to end (median) | failures |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for kind in KINDS:
        line(kind, [r for r in rows if r["kind"] == kind])
    for p in ["before the run", "compile", "upload", "run", "fetch"]:
        line(f"struck in: {p}", [r for r in rows if r["phase"] == p])
    line("all", rows)
    sys.exit(0 if all(r["ok"] for r in rows) else 1)


if __name__ == "__main__":
    main()
