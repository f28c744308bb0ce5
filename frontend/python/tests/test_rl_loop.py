"""The RL loop with overlap (examples/rl_loop): run by the real pw-run on two
CPU devices, its outputs are JAX's, and its trace shows the sampler and the
trainer running at the same time; the sequential (on-policy) loop, the
negative control, shows no such overlap.

Without the pw-run binary these fail, they do not skip.

What a trace shows: pw-run's `--trace` draws one track per device (named
`device N`) with an `execute` span per call and a `transfer` span per copy,
named `#<step> pw.call @<computation> on @<mesh>`; a copy between devices is
drawn on both. A span ends when PJRT's completion callback ran, which is
after the work ended (late by up to a few milliseconds on a loaded machine).
PJRT does not report starts, so a span starts at a lower bound: when the
host had enqueued the step and the device had finished its earlier steps
(docs/execution.md). `device_spans` applies that rule again over every
earlier step of the track (pw-run's trace takes only the step just before,
whose end can be earlier than an older one's), so on each device the spans
follow one another. A call whose inputs come from the other device starts
after the copy bringing them, and so after their producer ended: calls that
depend on each other do not overlap, beyond the lateness of callbacks.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from functools import partial

import numpy as np
import pytest

from pw.tools import find_tool

from conftest import REPO

SEED = 20261130
RUN_TIMEOUT_S = 120  # one pw-run of the loop takes well under a second

_STEP = re.compile(r"^#(\d+) ")
_MESH = re.compile(r" on @(\w+)$")


@dataclass(frozen=True)
class Span:
    device: str
    step: int
    name: str
    category: str
    start_ms: float
    end_ms: float

    @property
    def mesh(self) -> str | None:
        m = _MESH.search(self.name)
        return m.group(1) if m else None

    @property
    def duration_ms(self) -> float:
        return self.end_ms - self.start_ms


def device_spans(trace: dict) -> list[Span]:
    """The execute and transfer spans of the trace's device tracks. On each
    device, in step order, a span starts no earlier than the end of every
    earlier step's span on that device."""
    tracks = {
        e["tid"]: e["args"]["name"]
        for e in trace["traceEvents"]
        if e.get("ph") == "M" and e.get("name") == "thread_name" and e["args"]["name"].startswith("device ")
    }
    raw: dict[str, list[tuple[int, dict]]] = {}
    for e in trace["traceEvents"]:
        if e.get("ph") == "X" and e.get("tid") in tracks and e.get("cat") in ("execute", "transfer"):
            m = _STEP.match(e["name"])
            assert m, f"a device span without a step number: {e}"
            raw.setdefault(tracks[e["tid"]], []).append((int(m.group(1)), e))
    spans = []
    for device, events in raw.items():
        busy_until = 0.0
        for step, e in sorted(events, key=lambda x: x[0]):
            start, end = e["ts"] / 1e3, (e["ts"] + e["dur"]) / 1e3
            start = min(max(start, busy_until), end)
            busy_until = max(busy_until, end)
            spans.append(Span(device, step, e["name"], e["cat"], start, end))
    return spans


def calls_on(spans: list[Span], mesh: str) -> list[Span]:
    return [s for s in spans if s.category == "execute" and s.mesh == mesh]


def intersection_ms(a: Span, b: Span) -> float:
    return max(0.0, min(a.end_ms, b.end_ms) - max(a.start_ms, b.start_ms))


def sampler_time_during(trainer_call: Span, spans: list[Span]) -> float:
    """How long, in ms, a sampler call ran on another device while
    `trainer_call` ran (the sampler's calls on one device do not overlap each
    other: `device_spans`)."""
    return sum(intersection_ms(s, trainer_call) for s in calls_on(spans, "sampler") if s.device != trainer_call.device)


def overlap_fraction(spans: list[Span]) -> float:
    """The fraction of the trainer's execution time during which the sampler
    was also executing (on another device)."""
    trainer = calls_on(spans, "trainer")
    total = sum(t.duration_ms for t in trainer)
    return sum(sampler_time_during(t, spans) for t in trainer) / total if total else 0.0


def overlapped_trainer_calls(spans: list[Span]) -> list[Span]:
    """The trainer calls during at least half of which a sampler call ran on
    another device."""
    return [t for t in calls_on(spans, "trainer") if sampler_time_during(t, spans) >= 0.5 * t.duration_ms > 0]


def sampler_and_trainer_overlap(spans: list[Span]) -> bool:
    """The check: at least half of the trainer's calls were overlapped by the
    sampler. Robust to the trace's noise: a completion callback that runs
    late (by a few ms on a loaded machine) stretches one span, which can make
    one call of a sequential loop look overlapped, not half of them."""
    trainer = calls_on(spans, "trainer")
    return bool(trainer) and 2 * len(overlapped_trainer_calls(spans)) >= len(trainer)


def describe(spans: list[Span]) -> str:
    lines = [f"overlap fraction {overlap_fraction(spans):.2f}; calls (device, start-end ms, sampler time during):"]
    for s in sorted((s for s in spans if s.category == "execute"), key=lambda s: s.start_ms):
        during = f", sampler ran {sampler_time_during(s, spans):.2f} ms of it" if s.mesh == "trainer" else ""
        lines.append(f"  {s.device} {s.start_ms:.2f}-{s.end_ms:.2f} {s.name}{during}")
    return "\n".join(lines)


def pw_run(program_text: str, inputs: list[np.ndarray], tmp: str, extra: tuple[str, ...] = ()):
    """pw-run on two CPU devices with --trace; returns (outputs, trace)."""
    program = os.path.join(tmp, "program.mlir")
    with open(program, "w") as f:
        f.write(program_text)
    paths = []
    for i, a in enumerate(inputs):
        paths.append(os.path.join(tmp, f"input_{i}.npy"))
        np.save(paths[-1], a)
    out_dir, trace_path = os.path.join(tmp, "out"), os.path.join(tmp, "trace.json")
    args = [find_tool("pw-run"), program, *paths, "--devices", "2", "--out-dir", out_dir, "--trace", trace_path, "-q", *extra]
    env = dict(os.environ)
    if "PW_PJRT_PLUGIN" not in env and "PW_VENV" not in env and sys.prefix != sys.base_prefix:
        env["PW_VENV"] = sys.prefix
    proc = subprocess.run(args, capture_output=True, text=True, env=env, timeout=RUN_TIMEOUT_S)
    assert proc.returncode == 0, f"pw-run failed (exit {proc.returncode}):\n{proc.stderr}"
    outputs = [np.load(os.path.join(out_dir, f"output_{i}.npy")) for i in range(len(os.listdir(out_dir)))]
    with open(trace_path) as f:
        return outputs, json.load(f)


def flat_inputs(inputs) -> list[np.ndarray]:
    import jax

    return [np.asarray(a) for a in jax.tree.leaves(inputs)]


def assert_outputs(outputs, expected):
    assert len(outputs) == len(expected)
    for i, (got, want) in enumerate(zip(outputs, expected)):
        assert got.shape == want.shape and got.dtype == want.dtype, f"output {i}"
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=f"output {i}")


def assert_calls_traced(spans, iterations):
    """The loop's calls are in the trace: K trainer calls and K + 1 sampler
    calls, less at most one of each. pw-run writes the trace when the outputs
    are on the host, and can do so before the completion callback of the
    last step has run: that step then has no device span."""
    for mesh, count in (("sampler", iterations + 1), ("trainer", iterations)):
        traced = len(calls_on(spans, mesh))
        assert count - 1 <= traced <= count, f"{traced} {mesh} calls traced, {count} made"


def assert_disjoint_meshes(spans):
    sampler = {s.device for s in calls_on(spans, "sampler")}
    trainer = {s.device for s in calls_on(spans, "trainer")}
    assert len(sampler) == 1 and len(trainer) == 1 and sampler != trainer, (sampler, trainer)


@pytest.fixture(scope="module")
def loop_inputs(examples):
    return examples.rl_loop_inputs(np.random.default_rng(SEED))


def test_rl_loop_example_is_what_the_generator_captures(examples, loop_inputs):
    block, _ = examples.EXAMPLES["rl_loop"]
    p = examples.capture("rl_loop", block, loop_inputs)
    with open(os.path.join(REPO, "examples", "rl_loop.mlir")) as f:
        assert p.text() == f.read(), "examples/generate.py no longer reproduces examples/rl_loop.mlir"


def test_overlapped_loop_matches_jax_and_sampler_runs_during_training(examples, loop_inputs):
    """examples/rl_loop.mlir on its .npy inputs: JAX's outputs, the two meshes
    on two devices, and a sampler call running during a trainer call."""
    data = os.path.join(REPO, "examples", "rl_loop")
    count = len([f for f in os.listdir(data) if f.startswith("input_")])
    inputs = [np.load(os.path.join(data, f"input_{i}.npy")) for i in range(count)]
    for got, want in zip(inputs, flat_inputs(loop_inputs)):
        np.testing.assert_array_equal(got, want)
    expected = [np.load(os.path.join(data, f"expected_{i}.npy")) for i in range(2 + len(loop_inputs[-1]))]
    with open(os.path.join(REPO, "examples", "rl_loop.mlir")) as f:
        text = f.read()
    with tempfile.TemporaryDirectory(prefix="pw-rl-loop-") as tmp:
        outputs, trace = pw_run(text, inputs, tmp)
    assert_outputs(outputs, expected)
    spans = device_spans(trace)
    assert_calls_traced(spans, iterations=len(loop_inputs[-1]) - 1)
    assert_disjoint_meshes(spans)
    assert sampler_and_trainer_overlap(spans), describe(spans)


def test_sequential_loop_matches_jax_and_does_not_overlap(examples, loop_inputs):
    """The negative control: the same calls on-policy (each batch sampled
    with the weights the trainer has just produced) cannot overlap, and the
    trace shows they did not."""
    block = partial(examples.rl_loop_block, overlap=False)
    p = examples.capture("rl_loop_sequential", block, loop_inputs)
    expected = examples.reference(block, loop_inputs)
    with tempfile.TemporaryDirectory(prefix="pw-rl-loop-") as tmp:
        outputs, trace = pw_run(p.text(), flat_inputs(loop_inputs), tmp)
    assert_outputs(outputs, expected)
    # Stale weights change the result: the two loops are different programs.
    overlapped = examples.reference(examples.rl_loop_block, loop_inputs)
    assert not np.allclose(overlapped[0], expected[0], rtol=1e-5, atol=1e-6)
    spans = device_spans(trace)
    assert_calls_traced(spans, iterations=len(loop_inputs[-1]) - 1)
    assert_disjoint_meshes(spans)
    assert not sampler_and_trainer_overlap(spans), describe(spans)
