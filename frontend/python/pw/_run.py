"""The run paths of ``p.run``: on a session of a pw-server (the client this
process opened last, or one opened for the run alone), or through the
pw-run tool (for topology files and traces).

May import errors, client and tools: not the program (it is passed in,
and used through its public API), the tracer or JAX's private API.
"""

from __future__ import annotations

import jax
import numpy as np

from . import tools
from .client import connect, open_client
from .errors import ProgramError, ToolError, where


def input_leaves(arrays, avals) -> list[np.ndarray]:
    """The leaves of `arrays` (pytrees) as numpy arrays, checked against
    the program's input `avals` in order."""
    leaves = [np.asarray(a) for a in jax.tree.leaves(arrays)]
    if len(leaves) != len(avals):
        raise ProgramError(f"{where()}: the program takes {len(avals)} inputs, got {len(leaves)}")
    for i, (a, aval) in enumerate(zip(leaves, avals)):
        if tuple(a.shape) != tuple(aval.shape) or a.dtype != aval.dtype:
            raise ProgramError(
                f"{where()}: input #{i} is {a.dtype}{list(a.shape)}, the program "
                f"expects {aval.dtype}{list(aval.shape)}"
            )
    return leaves


def on_session(program, leaves, devices: int | None, schedule: str | None, executables: dict):
    """The outputs (numpy) of `program` on the client this process opened
    last, compiled once per (text, schedule, devices, session) into
    `executables`; with no client open, on a session of `devices`
    devices opened for this run alone."""
    client = open_client()
    if client is None:
        # A session for this one run: the devices are free again after.
        with connect(devices=devices) as client:
            return jax.tree.map(np.asarray, client.compile(program, schedule=schedule)(*leaves))
    key = (program.text(locations=True), schedule, devices, client.session)
    exe = executables.get(key)
    if exe is None:
        exe = executables[key] = client.compile(program, schedule=schedule, devices=devices)
    return jax.tree.map(np.asarray, exe(*leaves))


def with_pw_run(program, leaves, dtypes, *, devices, topology, schedule, trace):
    """The outputs of `program` run by pw-run, as numpy arrays of the
    program's output `dtypes`."""
    results = tools.run(
        program.text(locations=True), leaves, devices=devices, topology=topology, schedule=schedule, trace=trace
    )
    if len(results) != len(dtypes):
        raise ToolError(f"pw-run returned {len(results)} outputs, the program has {len(dtypes)}")
    outputs = []
    for r, dtype in zip(results, dtypes):
        want = np.dtype(dtype)
        # .npy has no bfloat16: it comes back as raw 2-byte values.
        if r.dtype != want and r.dtype.kind == "V" and r.dtype.itemsize == want.itemsize:
            r = r.view(want)
        outputs.append(r)
    return program.unflatten_outputs(outputs)
