"""Shared helpers of the front end's tests."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest

from pw.tools import find_tool

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def pw_opt(text: str, *args: str) -> subprocess.CompletedProcess:
    """Runs pw-opt over program text (standard input) with `args`."""
    return subprocess.run([find_tool("pw-opt"), *args, "-"], input=text, capture_output=True, text=True)


def assert_verifies(program) -> None:
    """The program's text, with and without locations, passes pw-opt's
    parser and verifier, and pw-opt prints it back."""
    for locations in (False, True):
        proc = pw_opt(program.text(locations=locations))
        assert proc.returncode == 0, proc.stderr
        assert f"module @{program.name}" in proc.stdout


def line_of(path: str, marker: str) -> int:
    """The 1-based line of `path` that ends with the comment `# marker`
    (exactly one does)."""
    with open(path) as f:
        hits = [i + 1 for i, line in enumerate(f) if line.rstrip().endswith(f"# {marker}")]
    assert len(hits) == 1, f"{marker!r} appears on lines {hits} of {path}"
    return hits[0]


def assert_names_line(error: BaseException, path: str, marker: str) -> None:
    """The error's message names `path:line` of the line marked `# marker`."""
    location = f"{path}:{line_of(path, marker)}"
    assert location in str(error), f"expected {location} in:\n{error}"


def load_examples():
    """examples/generate.py as a module: the example blocks, their inputs,
    the capture and the plain-JAX reference."""
    name = "pw_examples_generate"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, os.path.join(REPO, "examples", "generate.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def examples():
    return load_examples()
