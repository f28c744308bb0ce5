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
import functools
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


# The RL loop. The policy is a small recurrent generator: from a prompt it
# refines a state for GENERATE_STEPS steps, then reads action logits off the
# last state. The sampler draws a batch of prompts and an action for each,
# and scores each (prompt, action) with a reward model of REWARD_LAYERS
# tied layers; the trainer takes one policy-gradient step on a batch,
# back-propagating through the generation, with an importance weight that
# corrects for a batch sampled by an older policy (1 when it is on-policy).
# Sized so that one sampler call and one trainer call each take a few
# milliseconds on one CPU device.
GENERATE_STEPS = 4
REWARD_LAYERS = 16
PROMPTS_PER_BATCH = 128
LEARNING_RATE = 0.5


def policy_logits(policy, prompts):
    w, head = policy

    def step(_, state):
        probs = jax.nn.softmax(jnp.tanh(state @ w) @ head, axis=-1)
        return jnp.tanh(state + probs @ head.T)

    state = jax.lax.fori_loop(0, GENERATE_STEPS, step, prompts)
    return jnp.tanh(state @ w) @ head


def action_logp(policy, prompts, actions):
    logp = jax.nn.log_softmax(policy_logits(policy, prompts), axis=-1)
    return jnp.take_along_axis(logp, actions[:, None], axis=-1)[:, 0]


def rl_sample(policy, w_reward, seed):
    """A batch drawn with the key `seed`: prompts, an action per prompt
    drawn from the policy, its log-probability, and the reward model's
    score of each (prompt, action) pair."""
    prompt_key, action_key = jax.random.split(jax.random.key(seed))
    prompts = jax.random.normal(prompt_key, (PROMPTS_PER_BATCH, policy[0].shape[0]), jnp.float32)
    logits = policy_logits(policy, prompts)
    actions = jax.random.categorical(action_key, logits, axis=-1).astype(jnp.int32)
    logp = jnp.take_along_axis(jax.nn.log_softmax(logits, axis=-1), actions[:, None], axis=-1)[:, 0]
    w_in, w_hidden, w_out = w_reward
    pairs = jnp.concatenate([prompts, jax.nn.one_hot(actions, logits.shape[-1])], axis=-1)
    h = jax.lax.fori_loop(0, REWARD_LAYERS, lambda _, h: h + jnp.tanh(h @ w_hidden), jnp.tanh(pairs @ w_in))
    return prompts, actions, logp, jnp.tanh(h @ w_out)


def rl_train(policy, prompts, actions, sampled_logp, rewards):
    """The policy after one importance-weighted policy-gradient step on a
    batch sampled with log-probabilities `sampled_logp`."""

    def loss(policy):
        weight = jnp.exp(action_logp(policy, prompts, actions) - sampled_logp)
        return -jnp.mean((rewards - jnp.mean(rewards)) * weight)

    grads = jax.grad(loss)(policy)
    return jax.tree.map(lambda p, g: p - LEARNING_RATE * g, policy, grads)


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


def rl_loop_block(place, jit, policy, w_reward, seeds, overlap=True):
    """len(seeds) - 1 iterations of an RL loop, unrolled, on two disjoint
    one-device meshes: iteration k trains on batch k-1 (mesh `trainer`) and
    samples batch k (mesh `sampler`); the trainer's new weights flow back to
    the sampler, the batches to the trainer.

    With `overlap` (one step off-policy) batch k is sampled with the weights
    the trainer is starting from, so the sampler and the trainer can run at
    the same time. Without it (on-policy, sequential) batch k is sampled with
    the weights the trainer has just produced from batch k-1, so each waits
    for the other. Both make the same calls; returns the final policy and
    every batch's rewards."""
    sample = jit(rl_sample, None, None)
    train = jit(rl_train, None, None)
    with place("sampler", 1):
        batch = sample(policy, w_reward, seeds[0])
    all_rewards = [batch[-1]]
    for k in range(1, len(seeds)):
        if overlap:
            with place("sampler", 1):
                next_batch = sample(policy, w_reward, seeds[k])
        with place("trainer", 1):
            policy = train(policy, *batch)
        if not overlap:
            with place("sampler", 1):
                next_batch = sample(policy, w_reward, seeds[k])
        batch = next_batch
        all_rewards.append(batch[-1])
    return [*policy, *all_rewards]


def stage_forward(w, b, x, depth=1):
    """`depth` tied tanh layers (benches/schedules.py makes stages deep)."""
    if depth == 1:
        return jnp.tanh(x @ w + b)
    return jax.lax.fori_loop(0, depth, lambda _, h: jnp.tanh(h @ w + b), x)


def stage_backward(w, b, x, g, depth=1):
    """The cotangents (dw, db, dx) of `stage_forward` at `x` for `g`: the
    stage's backward, recomputing its forward from the saved input."""
    _, vjp = jax.vjp(lambda w, b, x: stage_forward(w, b, x, depth), w, b, x)
    return vjp(g)


def last_stage_backward(w, b, x, y, depth=1):
    """The last stage: its forward (`depth - 1` tanh layers, then a linear
    one), the squared-error loss against `y`, and the cotangents (dw, db,
    dx)."""

    def error(w, b, x):
        h = x if depth == 1 else stage_forward(w, b, x, depth - 1)
        return jnp.mean((h @ w + b - y) ** 2)

    value, grads = jax.value_and_grad(error, argnums=(0, 1, 2))(w, b, x)
    return (value, *grads)


def accumulate(acc_w, acc_b, dw, db):
    return acc_w + dw, acc_b + db


def sgd(w, b, dw, db, scale):
    return w - scale * dw, b - scale * db


def pipeline_train_block(place, jit, microbatches, targets, params, depth=1):
    """One training step of a pipeline (the example: 4 stages, 8
    microbatches), written as a plain loop: per microbatch the forward
    through every stage, the backward back through them (gradients summed
    per stage), then an SGD update per stage. Stage s runs on mesh
    `stage{s}`, one device each; each stage is `depth` layers. Returns the
    updated weights and each microbatch's loss."""

    def deep(fn):
        return fn if depth == 1 else functools.partial(fn, depth=depth)

    forward = jit(deep(stage_forward), None, None)
    backward = jit(deep(stage_backward), None, None)
    last = jit(deep(last_stage_backward), None, None)
    add = jit(accumulate, None, None)
    update = jax.jit(sgd, static_argnums=4)
    stages = len(params)
    grads = [None] * stages
    losses = []
    for x, y in zip(microbatches, targets):
        saved = []
        h = x
        for s in range(stages - 1):
            with place(f"stage{s}", 1):
                saved.append(h)
                h = forward(*params[s], h)
        with place(f"stage{stages - 1}", 1):
            value, dw, db, g = last(*params[-1], h, y)
            grads[-1] = (dw, db) if grads[-1] is None else add(*grads[-1], dw, db)
        losses.append(value)
        for s in reversed(range(stages - 1)):
            with place(f"stage{s}", 1):
                dw, db, g = backward(*params[s], saved[s], g)
                grads[s] = (dw, db) if grads[s] is None else add(*grads[s], dw, db)
    new_params = []
    for s in range(stages):
        with place(f"stage{s}", 1):
            new_params.append(update(*params[s], *grads[s], 0.1 / len(microbatches)))
    return [*jax.tree.leaves(new_params), *losses]


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


PIPELINE_TRAIN_STAGES, PIPELINE_TRAIN_MICROBATCHES, PIPELINE_TRAIN_ROWS, PIPELINE_TRAIN_WIDTH = 4, 8, 128, 64


def pipeline_train_inputs(rng):
    d, rows = PIPELINE_TRAIN_WIDTH, PIPELINE_TRAIN_ROWS
    microbatches = [rng.standard_normal((rows, d), dtype=np.float32) for _ in range(PIPELINE_TRAIN_MICROBATCHES)]
    targets = [rng.standard_normal((rows, d), dtype=np.float32) for _ in range(PIPELINE_TRAIN_MICROBATCHES)]
    params = [
        (
            rng.standard_normal((d, d), dtype=np.float32) / np.float32(np.sqrt(d)),
            rng.standard_normal((d,), dtype=np.float32) * np.float32(0.1),
        )
        for _ in range(PIPELINE_TRAIN_STAGES)
    ]
    return [microbatches, targets, params]


RL_LOOP_ITERATIONS = 6
RL_LOOP_WIDTH, RL_LOOP_ACTIONS, RL_LOOP_REWARD_WIDTH = 256, 64, 256


def rl_loop_inputs(rng):
    d, a, r = RL_LOOP_WIDTH, RL_LOOP_ACTIONS, RL_LOOP_REWARD_WIDTH
    policy = (
        rng.standard_normal((d, d), dtype=np.float32) / np.float32(np.sqrt(d)),
        rng.standard_normal((d, a), dtype=np.float32) / np.float32(np.sqrt(d)),
    )
    # The reward model's first layer: half of its input variance from the
    # prompt, half from the action (one row of the last `a`).
    w_in = rng.standard_normal((d + a, r), dtype=np.float32) / np.float32(np.sqrt(2 * d))
    w_in[d:] *= np.float32(np.sqrt(d))
    w_hidden = rng.standard_normal((r, r), dtype=np.float32) / np.float32(np.sqrt(r) * REWARD_LAYERS)
    w_reward = (w_in, w_hidden, rng.standard_normal((r,), dtype=np.float32) / np.float32(np.sqrt(r / 4)))
    seeds = [np.uint32(s) for s in rng.integers(0, 2**32, size=RL_LOOP_ITERATIONS + 1, dtype=np.uint32)]
    return [policy, w_reward, seeds]


EXAMPLES = {
    "pipeline": (pipeline_block, pipeline_inputs),
    "rl_step": (rl_block, rl_inputs),
    "partially_placed": (partial_block, partial_inputs),
    "rl_loop": (rl_loop_block, rl_loop_inputs),
    "pipeline_train": (pipeline_train_block, pipeline_train_inputs),
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
