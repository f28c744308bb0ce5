"""pw: capture a block of jax.jit calls as one program, and run it.

    import pw
    with pw.program("pipeline") as p:
        x = p.input(jax.ShapeDtypeStruct((8, 16), jnp.float32))
        with pw.mesh("stage0", devices=2):
            h = layer0(x)
        with pw.mesh("stage1", devices=2):
            y = layer1(h)
        p.outputs(y)
    p.save("pipeline.mlir")
    y_np = p.run(x_np)

    client = pw.connect()                 # a session: devices, arrays on them
    step = p.compile(client)              # lowered and compiled once
    y = step(x_np)                        # pw.Arrays, computed on the devices
    np.asarray(y)                         # fetched when asked for

See docs/frontend.md.

The package's public names, from client, errors, program and
_sidecar_step; it owns nothing else. Its modules import each other, never the package's names.
"""

from .client import Array, Client, Executable, Sharding, connect, default_client
from .errors import (
    AccessDeniedError,
    ArrayDeletedError,
    ArrayError,
    DevicesBusyError,
    LimitError,
    ProgramError,
    PwError,
    RunError,
    ServerError,
    SessionError,
    ToolError,
    TracingError,
)
from .program import Program, Value, mesh, program, unplaced
from ._sidecar_step import SidecarFunction, sidecar

__all__ = [
    "AccessDeniedError",
    "Array",
    "ArrayDeletedError",
    "ArrayError",
    "Client",
    "DevicesBusyError",
    "Executable",
    "LimitError",
    "Program",
    "ProgramError",
    "PwError",
    "RunError",
    "ServerError",
    "SessionError",
    "SidecarFunction",
    "Sharding",
    "ToolError",
    "TracingError",
    "Value",
    "connect",
    "default_client",
    "mesh",
    "program",
    "sidecar",
    "unplaced",
]
