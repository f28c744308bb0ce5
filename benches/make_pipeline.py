"""Writes the 3-stage MLP pipeline of examples/generate.py with N
microbatches, for benches/run.rs:

    make_pipeline.py OUT.mlir N [WIDTH BATCH]

With WIDTH, the layers are WIDTH -> 2·WIDTH -> 2·WIDTH -> WIDTH wide and
each microbatch has BATCH rows (default: the example's sizes)."""

import importlib.util
import os
import sys

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("generate", os.path.join(here, "..", "examples", "generate.py"))
generate = importlib.util.module_from_spec(spec)
spec.loader.exec_module(generate)

out, microbatches = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(0)
if len(sys.argv) > 3:
    width, batch = int(sys.argv[3]), int(sys.argv[4])
    dims = [width, 2 * width, 2 * width, width]
    inputs = [rng.standard_normal((batch, width), dtype=np.float32) for _ in range(microbatches)]
    params = [
        (rng.standard_normal((dims[i], dims[i + 1]), dtype=np.float32), np.zeros(dims[i + 1], np.float32))
        for i in range(3)
    ]
else:
    inputs, params = generate.pipeline_inputs(rng)
    inputs = [inputs[i % len(inputs)] for i in range(microbatches)]
generate.capture("pipeline", generate.pipeline_block, [inputs, params]).save(out)
