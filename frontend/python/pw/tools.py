"""Drives pw-opt and pw-run for `Program.lower` and `Program.run`, and
checks the schedule policies they (and the server's lowering) take.

May import errors, numpy and the standard library only."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

from .errors import ToolError

_REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
# The binaries pw's wheel carries (scripts/build-wheel.sh); absent in a checkout.
_BIN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bin")

# `file:line:col: error: message`, as pw-opt and pw-run render diagnostics.
_HEADER = re.compile(r"^(?P<file>.+?):\d+:\d+: (?:error|warning|note|remark): ")
_CARET = re.compile(r"^\s*\^\s*$")


SCHEDULES = ("critical-path", "gpipe", "1f1b")


def check_schedule(schedule: str | None) -> str | None:
    """`schedule` if it names one of pw-schedule's policies (or is None);
    a ValueError otherwise."""
    if schedule is not None and schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {', '.join(SCHEDULES)}; got {schedule!r}")
    return schedule


def tool_dirs() -> list[str]:
    """Where `find_tool` looks before $PATH, in order: the package's own
    binaries (`pw/_bin`, in an install of pw's wheel), $PW_BIN_DIR, then a
    checkout's target/release and target/debug."""
    dirs = [_BIN] if os.path.isdir(_BIN) else []
    if os.environ.get("PW_BIN_DIR"):
        dirs.append(os.environ["PW_BIN_DIR"])
    if os.path.isfile(os.path.join(_REPO, "Cargo.toml")):
        dirs += [os.path.join(_REPO, "target", profile) for profile in ("release", "debug")]
    return dirs


def find_tool(name: str) -> str:
    """The path of a pw binary: the first in `tool_dirs()`, else on $PATH."""
    dirs = tool_dirs()
    for d in dirs:
        path = os.path.join(d, name)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    found = shutil.which(name)
    if found:
        return found
    raise ToolError(
        f"{name} not found (looked in {', '.join(dirs + ['$PATH'])}): install pw's wheel (scripts/build-wheel.sh), "
        f"build the binaries (cargo build --release -p pw-tools -p pw-worker) or set PW_BIN_DIR"
    )


def _diagnostics(stderr: str, source: str) -> str:
    """The tool's diagnostics without the quoted source lines of those that
    point outside `source` (the text it read): the tools quote a line of
    their input whatever file a location names, and the front end's
    locations name the user's Python files."""
    lines = stderr.strip().splitlines()
    out = []
    i = 0
    while i < len(lines):
        out.append(lines[i])
        m = _HEADER.match(lines[i])
        if m and m.group("file") != source and i + 2 < len(lines) and _CARET.match(lines[i + 2]):
            i += 3
            continue
        i += 1
    return "\n".join(out)


def _check(proc: subprocess.CompletedProcess, name: str, source: str) -> None:
    if proc.returncode != 0:
        raise ToolError(f"{name} failed (exit {proc.returncode}):\n{_diagnostics(proc.stderr, source)}")


def _option_word(key: str, value) -> str:
    """One `key=value` word of a pass option (pw-opt splits them on spaces)."""
    text = str(value)
    if not text or any(c.isspace() for c in text):
        raise ToolError(f"pw-opt pass option {key}={text!r} must be one word without spaces")
    return f"{key}={text}"


def lower(
    text: str, topology=None, devices: int | None = None, kind: str | None = None, schedule: str | None = None
) -> str:
    """`pw-opt --pw-lower` over program text; returns the lowered text.
    `topology`, `devices` and `kind` are the options of the
    pw-lower-to-physical pass, `schedule` pw-schedule's policy
    (`pw-opt --list-passes`)."""
    with tempfile.TemporaryDirectory(prefix="pw-opt-") as tmp:
        options = []
        if topology is not None:
            path = os.path.abspath(os.fspath(topology))
            if not os.path.isfile(path):
                raise ToolError(f"topology file {path} does not exist")
            if any(c.isspace() for c in path):
                # Pass options are space-separated words: use a copy at a
                # path without spaces, keeping the extension (TOML or JSON).
                copy = os.path.join(tmp, "topology" + os.path.splitext(path)[1])
                shutil.copyfile(path, copy)
                path = copy
            options.append(_option_word("topology", path))
        if devices is not None:
            options.append(_option_word("devices", int(devices)))
        if kind is not None:
            options.append(_option_word("kind", kind))
        if schedule is not None:
            options.append(_option_word("schedule", schedule))
        flag = "--pw-lower" + ("=" + " ".join(options) if options else "")
        args = [find_tool("pw-opt"), flag, "-"]
        proc = subprocess.run(args, input=text, capture_output=True, text=True)
    _check(proc, "pw-opt", "<stdin>")
    return proc.stdout


def run(
    text: str,
    arrays: list[np.ndarray],
    devices: int | None = None,
    topology=None,
    schedule: str | None = None,
    trace=None,
) -> list[np.ndarray]:
    """Runs program text with pw-run on `arrays`; returns its outputs.

    pw-run's contract: `pw-run PROGRAM.mlir IN0.npy IN1.npy ... --out-dir
    DIR [--devices N] [--topology FILE] [--schedule POLICY] [--trace FILE]` writes `DIR/output_<i>.npy`, one
    per program result, and exits 0; on failure it exits non-zero with
    `error:` diagnostics on stderr."""
    with tempfile.TemporaryDirectory(prefix="pw-run-") as tmp:
        program = os.path.join(tmp, "program.mlir")
        with open(program, "w") as f:
            f.write(text)
        inputs = []
        for i, a in enumerate(arrays):
            path = os.path.join(tmp, f"input_{i}.npy")
            np.save(path, a)
            inputs.append(path)
        out_dir = os.path.join(tmp, "out")
        # Python steps (pw.sidecar) run in this interpreter.
        args = [find_tool("pw-run"), program, *inputs, "--out-dir", out_dir, "--sidecar-python", sys.executable]
        if devices is not None:
            args += ["--devices", str(int(devices))]
        if topology is not None:
            path = os.path.abspath(os.fspath(topology))
            if not os.path.isfile(path):
                raise ToolError(f"topology file {path} does not exist")
            args += ["--topology", path]
        if schedule is not None:
            args += ["--schedule", schedule]
        if trace is not None:
            args += ["--trace", os.path.abspath(os.fspath(trace))]
        env = dict(os.environ)
        if "PW_PJRT_PLUGIN" not in env and "PW_VENV" not in env and sys.prefix != sys.base_prefix:
            # pw-run finds the PJRT CPU plugin in a venv: this one, from
            # whatever directory the program runs in.
            env["PW_VENV"] = sys.prefix
        proc = subprocess.run(args, capture_output=True, text=True, env=env)
        _check(proc, "pw-run", program)
        outputs = []
        i = 0
        while os.path.exists(os.path.join(out_dir, f"output_{i}.npy")):
            outputs.append(np.load(os.path.join(out_dir, f"output_{i}.npy")))
            i += 1
        return outputs
