"""Drives pw-opt and pw-run for `Program.lower` and `Program.run`."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

import numpy as np

from .errors import ToolError

_REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def find_tool(name: str) -> str:
    """The path of a pw binary: $PW_BIN_DIR, the repository's target
    directory (release, then debug), then $PATH."""
    candidates = []
    if os.environ.get("PW_BIN_DIR"):
        candidates.append(os.path.join(os.environ["PW_BIN_DIR"], name))
    for profile in ("release", "debug"):
        candidates.append(os.path.join(_REPO, "target", profile, name))
    for c in candidates:
        if os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    found = shutil.which(name)
    if found:
        return found
    raise ToolError(f"{name} not found: build it (cargo build -p pw-tools) or set PW_BIN_DIR")


def _check(proc: subprocess.CompletedProcess, name: str) -> None:
    if proc.returncode != 0:
        raise ToolError(f"{name} failed (exit {proc.returncode}):\n{proc.stderr.strip()}")


def lower(text: str, topology: str | None = None) -> str:
    """`pw-opt --pw-lower` over program text; returns the lowered text."""
    args = [find_tool("pw-opt"), "--pw-lower", "-"]
    if topology:
        args.insert(2, f"--topology={topology}")
    proc = subprocess.run(args, input=text, capture_output=True, text=True)
    _check(proc, "pw-opt")
    return proc.stdout


def run(text: str, arrays: list[np.ndarray], devices: int | None = None, topology: str | None = None) -> list[np.ndarray]:
    """Runs program text with pw-run on `arrays`; returns its outputs."""
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
        args = [find_tool("pw-run"), program, *inputs, "--out-dir", out_dir]
        if devices is not None:
            args += ["--devices", str(devices)]
        if topology is not None:
            args += ["--topology", topology]
        proc = subprocess.run(args, capture_output=True, text=True)
        _check(proc, "pw-run")
        outputs = []
        i = 0
        while os.path.exists(os.path.join(out_dir, f"output_{i}.npy")):
            outputs.append(np.load(os.path.join(out_dir, f"output_{i}.npy")))
            i += 1
        return outputs
