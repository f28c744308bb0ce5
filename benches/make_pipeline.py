"""Writes the 3-stage MLP pipeline of examples/generate.py with N
microbatches, for benches/run.rs:

    make_pipeline.py OUT.mlir N [WIDTH BATCH] [--data DIR]

With WIDTH, the layers are WIDTH -> 2·WIDTH -> 2·WIDTH -> WIDTH wide and
each microbatch has BATCH rows (default: the example's sizes). With
--data, DIR gets the inputs (input_<i>.npy) and the outputs plain JAX
computes from them (expected_<i>.npy), as examples/generate.py writes
them; the recovery tests use a long pipeline made this way."""

import importlib.util
import os
import sys

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("generate", os.path.join(here, "..", "examples", "generate.py"))
generate = importlib.util.module_from_spec(spec)
spec.loader.exec_module(generate)

args = sys.argv[1:]
data = None
if "--data" in args:
    at = args.index("--data")
    data = args[at + 1]
    del args[at : at + 2]
out, microbatches = args[0], int(args[1])
rng = np.random.default_rng(0)
if len(args) > 2:
    width, batch = int(args[2]), int(args[3])
    dims = [width, 2 * width, 2 * width, width]
    inputs = [rng.standard_normal((batch, width), dtype=np.float32) for _ in range(microbatches)]
    params = [
        (rng.standard_normal((dims[i], dims[i + 1]), dtype=np.float32) / np.float32(np.sqrt(dims[i])), np.zeros(dims[i + 1], np.float32))
        for i in range(3)
    ]
else:
    inputs, params = generate.pipeline_inputs(rng)
    inputs = [inputs[i % len(inputs)] for i in range(microbatches)]
generate.capture("pipeline", generate.pipeline_block, [inputs, params]).save(out)
if data is not None:
    os.makedirs(data, exist_ok=True)
    leaves = generate.jax.tree.leaves([inputs, params])
    for i, a in enumerate(leaves):
        np.save(os.path.join(data, f"input_{i}.npy"), np.asarray(a))
    for i, a in enumerate(generate.reference(generate.pipeline_block, [inputs, params])):
        np.save(os.path.join(data, f"expected_{i}.npy"), a)
