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

See docs/frontend.md.
"""

from .errors import ProgramError, PwError, ToolError, TracingError
from .program import Program, Value, mesh, program, unplaced

__all__ = [
    "Program",
    "ProgramError",
    "PwError",
    "ToolError",
    "TracingError",
    "Value",
    "mesh",
    "program",
    "unplaced",
]
