"""Writes the example programs and JAX's reference outputs for them.

Run in the project venv from the repository root:

    .venv/bin/python examples/generate.py

For each example it writes `examples/<name>.mlir` (captured with the pw front
end from a block of jax.jit calls) and `examples/<name>/input_<i>.npy`,
`examples/<name>/expected_<i>.npy`: fixed inputs, and the outputs plain JAX
computes for them (the same functions, jitted without shardings, on one
device). Everything is deterministic; rerunning reproduces the files.
"""

from __future__ import annotations

import contextlib
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec as P

import pw

HERE = os.path.dirname(os.path.abspath(__file__))


# -- the computations --------------------------------------------------------


def mlp_layer(x, w, b):
    return jnp.tanh(x @ w + b)


def sampler(w, prompts):
    return jax.nn.softmax(prompts @ w, axis=-1)


def reward_model(w, prompts, probs):
    return jnp.sum(jnp.tanh(jnp.concatenate([prompts, probs], axis=-1) @ w), axis=-1)


def trainer(w, prompts, probs, rewards):
    def loss(w):
        logp = jax.nn.log_softmax(prompts @ w, axis=-1)
        advantage = rewards - jnp.mean(rewards)
        return -jnp.mean(advantage * jnp.sum(probs * logp, axis=-1))

    return w - 0.1 * jax.grad(loss)(w)


def embed(tokens, table):
    return jnp.take(table, tokens, axis=0)


def dense(h, w):
    return jax.nn.relu(h @ w)


def normalize(h):
    return h / jnp.sqrt(jnp.mean(h * h, axis=-1, keepdims=True) + 1e-6)


def head(h, w):
    return h @ w


def loss(logits, labels):
    logp = jax.nn.log_softmax(logits, axis=-1)
    return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=-1))


# -- the blocks: the same Python code, captured by pw or run by JAX ----------


def pipeline_block(place, jit, microbatches, params):
    """A 3-stage MLP pipeline over 4 microbatches; stage s runs on mesh
    `stage{s}`, each stage's weight sharded over the mesh's "x" axis."""
    stages = [
        jit(mlp_layer, (P(), P(None, "x"), P("x")), P(None, "x")),
        jit(mlp_layer, (P(None, "x"), P("x", None), P()), P()),
        jit(mlp_layer, (P("x", None), P(), P()), P("x", None)),
    ]
    outputs = []
    for x in microbatches:
        h = x
        for s, (w, b) in enumerate(params):
            with place(f"stage{s}", 2):
                h = stages[s](h, w, b)
        outputs.append(h)
    return outputs


def rl_block(place, jit, w_policy, w_reward, prompts, next_prompts):
    """One step of an RL loop: sample, score, train, then sample again with
    the trainer's new weights (which flow back to the sampler's mesh)."""
    sample = jit(sampler, (P(None, "x"), P()), P())
    score = jit(reward_model, (P(), P(), P()), P())
    train = jit(trainer, (P(), P("x", None), P("x", None), P("x")), P())
    with place("sampler", 2):
        probs = sample(w_policy, prompts)
    with place("reward", 1):
        rewards = score(w_reward, prompts, probs)
    with place("trainer", 2):
        new_w = train(w_policy, prompts, probs, rewards)
    with place("sampler", 2):
        next_probs = sample(new_w, next_prompts)
    return [new_w, rewards, next_probs]


def partial_block(place, jit, tokens, table, w1, w2, labels):
    """Some calls on explicit meshes, some left for the passes to place:
    `embed` and `loss` are single-device and unplaced; `normalize` is a
    2-device computation with no mesh."""
    h = jit(embed, None, None)(tokens, table)
    with place("encoder", 2):
        h = jit(dense, (P(), P(None, "x")), P(None, "x"))(h, w1)
    with place(None, 2):
        h = jit(normalize, (P("x", None),), P("x", None))(h)
    with place("decoder", 2):
        logits = jit(head, (P(), P(None, "x")), P())(h, w2)
    return [logits, jit(loss, None, None)(logits, labels)]


# -- capture and reference ---------------------------------------------------


def capture_place(name, devices):
    if name is None:
        return pw.unplaced(devices=devices)
    return pw.mesh(name, devices=devices, axes=("x",))


def capture_jit(fn, in_specs, out_spec):
    if in_specs is None:
        return jax.jit(fn)
    return jax.jit(fn, in_shardings=in_specs, out_shardings=out_spec)


def reference_place(name, devices):
    return contextlib.nullcontext()


def reference_jit(fn, in_specs, out_spec):
    return jax.jit(fn)


def pipeline_inputs(rng):
    dims = [16, 32, 32, 8]
    microbatches = [rng.standard_normal((8, dims[0]), dtype=np.float32) for _ in range(4)]
    params = []
    for i in range(3):
        w = rng.standard_normal((dims[i], dims[i + 1]), dtype=np.float32) / np.sqrt(dims[i])
        b = rng.standard_normal((dims[i + 1],), dtype=np.float32) * 0.1
        params.append((w.astype(np.float32), b.astype(np.float32)))
    return [microbatches, params]


def rl_inputs(rng):
    w_policy = rng.standard_normal((16, 8), dtype=np.float32) * 0.3
    w_reward = rng.standard_normal((24, 4), dtype=np.float32) * 0.3
    prompts = rng.standard_normal((8, 16), dtype=np.float32)
    next_prompts = rng.standard_normal((8, 16), dtype=np.float32)
    return [w_policy, w_reward, prompts, next_prompts]


def partial_inputs(rng):
    tokens = rng.integers(0, 32, size=(8,), dtype=np.int32)
    table = rng.standard_normal((32, 16), dtype=np.float32)
    w1 = rng.standard_normal((16, 32), dtype=np.float32) * 0.25
    w2 = rng.standard_normal((32, 8), dtype=np.float32) * 0.25
    labels = rng.integers(0, 8, size=(8,), dtype=np.int32)
    return [tokens, table, w1, w2, labels]


EXAMPLES = {
    "pipeline": (pipeline_block, pipeline_inputs),
    "rl_step": (rl_block, rl_inputs),
    "partially_placed": (partial_block, partial_inputs),
}


def capture(name, block, inputs):
    """The block captured as a pw program whose inputs are `inputs`."""
    with pw.program(name) as p:
        values = p.inputs(inputs)
        p.outputs(block(capture_place, capture_jit, *values))
    return p


def reference(block, inputs):
    with jax.default_device(jax.devices("cpu")[0]):
        return [np.asarray(o) for o in block(reference_place, reference_jit, *inputs)]


def write(name, program, inputs, expected):
    program.save(os.path.join(HERE, f"{name}.mlir"))
    data = os.path.join(HERE, name)
    os.makedirs(data, exist_ok=True)
    for f in os.listdir(data):
        if f.endswith(".npy"):
            os.remove(os.path.join(data, f))
    for i, a in enumerate(jax.tree.leaves(inputs)):
        np.save(os.path.join(data, f"input_{i}.npy"), np.asarray(a))
    for i, a in enumerate(expected):
        np.save(os.path.join(data, f"expected_{i}.npy"), a)


def main(names):
    for name in names or EXAMPLES:
        block, make_inputs = EXAMPLES[name]
        inputs = make_inputs(np.random.default_rng(20261130))
        program = capture(name, block, inputs)
        write(name, program, inputs, reference(block, inputs))
        print(f"wrote examples/{name}.mlir and examples/{name}/")


if __name__ == "__main__":
    main(sys.argv[1:])
