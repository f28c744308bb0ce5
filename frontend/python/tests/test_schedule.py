"""Pipeline schedules from the front end: `p.lower(schedule=...)` and
`p.run(..., schedule=...)` on the training step of examples/pipeline_train
(4 stages x 8 microbatches, forward, backward and SGD per stage), compared
with plain JAX under every policy."""

from __future__ import annotations

import re

import jax
import numpy as np
import pytest

import pw

from test_run import SEED, assert_matches_jax


@pytest.fixture(scope="module")
def train(examples):
    block, make_inputs = examples.EXAMPLES["pipeline_train"]
    inputs = make_inputs(np.random.default_rng(SEED))
    return examples.capture("pipeline_train", block, inputs), inputs, examples.reference(block, inputs)


@pytest.mark.parametrize("schedule", [None, "critical-path", "gpipe", "1f1b"])
def test_every_policy_gives_jax_results(train, schedule):
    program, inputs, expected = train
    assert_matches_jax(program.run(*inputs, devices=4, schedule=schedule), expected, rtol=1e-5, atol=1e-5)


def stage_order(lowered: str, stage: str) -> str:
    """The calls of one stage in the lowered program's order: F (forward),
    B (backward), L (the last stage's loss and gradient), + (a gradient sum),
    U (the update)."""
    letters = {
        "stage_forward": "F",
        "stage_backward": "B",
        "last_stage_backward": "L",
        "accumulate": "+",
        "sgd": "U",
    }
    calls = re.findall(r"pw\.call @jit_(\w+?)(?:_\d+)?\(.*\) on @(\w+)", lowered)
    return "".join(letters[f] for f, on in calls if on == stage)


def test_lower_orders_stages_by_the_policy(train):
    """The recognized stages run the textbook orders: GPipe every forward
    first; 1F1B a warm-up of 3 - s forwards on stage s, then one forward and
    one backward in turn."""
    program, _, _ = train
    gpipe = program.lower(devices=4, schedule="gpipe")
    assert 'pw.schedule = "gpipe"' in gpipe
    assert stage_order(gpipe, "stage0") == "F" * 8 + "BB" + "+B" * 6 + "+U"
    one_f_one_b = program.lower(devices=4, schedule="1f1b")
    assert 'pw.schedule = "1f1b"' in one_f_one_b
    assert stage_order(one_f_one_b, "stage0") == "FFFFB" + "FB+" * 4 + "B+" * 3 + "U"
    assert stage_order(one_f_one_b, "stage2") == "FFB" + "FB+" * 6 + "B+U"


def test_a_run_writes_its_trace(train, tmp_path):
    """`trace=` gives pw-run's Chrome trace: a track per device, and the
    calls of every stage on them."""
    import json

    program, inputs, _ = train
    path = tmp_path / "run.json"
    program.run(*inputs, devices=4, schedule="1f1b", trace=path)
    events = json.loads(path.read_text())["traceEvents"]
    tracks = {e["args"]["name"] for e in events if e.get("name") == "thread_name"}
    assert {f"device {d}" for d in range(4)} <= tracks, tracks
    calls = [e for e in events if e.get("cat") == "execute"]
    assert {e["tid"] for e in calls} == {0, 1, 2, 3}
    assert len(calls) == 8 * 3 * 2 + 8 + 7 * 4 + 4  # F and B on 3 stages, the fused last, sums, updates


def test_a_bad_policy_is_a_value_error(train):
    program, inputs, _ = train
    with pytest.raises(ValueError, match="schedule must be one of critical-path, gpipe, 1f1b"):
        program.lower(schedule="interleaved")
    with pytest.raises(ValueError, match="got 'GPipe'"):
        program.run(*inputs, schedule="GPipe")


def test_a_program_without_microbatches_cannot_take_1f1b():
    """The diagnostic comes from pw-opt and names why."""
    with pw.program("plain") as p:
        x = p.input(jax.ShapeDtypeStruct((4,), np.float32))
        with pw.mesh("a", devices=1):
            y = jax.jit(lambda v: v * 2)(x)
        p.outputs(y)
    with pytest.raises(pw.ToolError, match=r"no computation is called more than once on a mesh"):
        p.lower(devices=1, schedule="1f1b")
    np.testing.assert_array_equal(p.run(np.ones(4, np.float32), devices=1), 2 * np.ones(4, np.float32))
