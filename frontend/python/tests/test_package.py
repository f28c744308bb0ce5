"""The front end's structure: every module of the package imports on its
own, the modules' imports (at the top or inside functions) form no cycle,
only pw/_jax_compat.py touches JAX's private API, and the wire protocol's
.proto is found where the checkout keeps it."""

import ast
import os
import subprocess
import sys

import pytest

import pw
from pw import _proto

PACKAGE = os.path.dirname(os.path.abspath(pw.__file__))
FRONTEND = os.path.dirname(PACKAGE)
MODULES = sorted("pw." + f[: -len(".py")] for f in os.listdir(PACKAGE) if f.endswith(".py") and f != "__init__.py")
# Where JAX keeps what it does not promise to keep.
PRIVATE_JAX = ("jax._src", "jax.interpreters", "jax.core", "jaxlib")


def _source(module: str) -> str:
    return os.path.join(FRONTEND, *module.split(".")) + ".py"


def _imports(path: str, package: str = "pw") -> list[tuple[str, int]]:
    """The modules a file imports, anywhere in it (absolute names, with the
    line): `from . import x` names pw.x when pw/x.py exists, else pw."""
    found = []
    for node in ast.walk(ast.parse(open(path).read(), path)):
        if isinstance(node, ast.Import):
            found.extend((a.name, node.lineno) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package if node.level else ""
            base = ".".join(filter(None, [base, node.module]))
            for a in node.names:
                sub = f"{base}.{a.name}"
                is_module = os.path.isfile(_source(sub)) if sub.startswith("pw.") else False
                found.append((sub if is_module else base, node.lineno))
    return found


def _graph() -> dict[str, set[str]]:
    """pw's modules (the package itself as "pw") and the pw modules each imports."""
    graph = {}
    for module in ["pw", *MODULES]:
        path = os.path.join(PACKAGE, "__init__.py") if module == "pw" else _source(module)
        graph[module] = {name for name, _ in _imports(path) if name == "pw" or name.startswith("pw.")} - {module}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of `graph` as a path (first node repeated at the end), if any."""
    done: set[str] = set()

    def visit(node, path):
        if node in path:
            return path[path.index(node) :] + [node]
        if node in done:
            return None
        for nxt in sorted(graph.get(node, ())):
            cycle = visit(nxt, path + [node])
            if cycle:
                return cycle
        done.add(node)
        return None

    for node in sorted(graph):
        cycle = visit(node, [])
        if cycle:
            return cycle
    return None


def test_the_cycle_finder_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set(), "c": {"b"}}) is None


def test_the_modules_import_one_way():
    cycle = _cycle(_graph())
    assert cycle is None, "import cycle among pw's modules: " + " -> ".join(cycle)


def test_the_client_does_not_import_the_program():
    graph = _graph()
    assert "pw.program" not in graph["pw.client"]


@pytest.mark.parametrize("module", MODULES)
def test_each_module_imports_in_a_fresh_interpreter(module):
    proc = subprocess.run(
        [sys.executable, "-c", f"import importlib; importlib.import_module({module!r})"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [FRONTEND, os.environ.get("PYTHONPATH")]))},
    )
    assert proc.returncode == 0, proc.stderr


def test_only_the_compat_module_uses_private_jax():
    files = [_source(m) for m in MODULES]
    files += [os.path.join(PACKAGE, "__init__.py"), os.path.join(FRONTEND, "pw_jax_plugin.py")]
    offenders = []
    for path in files:
        if os.path.basename(path) == "_jax_compat.py":
            continue
        for name, line in _imports(path):
            if any(name == p or name.startswith(p + ".") for p in PRIVATE_JAX):
                offenders.append(f"{path}:{line}: {name}")
        source = open(path).read()
        for node in ast.walk(ast.parse(source, path)):
            if isinstance(node, ast.Attribute) and node.attr == "_src":
                offenders.append(f"{path}:{node.lineno}: ._src")
    assert not offenders, "private JAX outside pw/_jax_compat.py:\n" + "\n".join(offenders)


def test_the_wire_protocol_is_found_at_its_new_place_first():
    new, old = (os.path.relpath(p, os.path.dirname(os.path.dirname(FRONTEND))) for p in _proto.PROTO_CANDIDATES)
    assert new == os.path.join("runtime", "wire", "proto", "pw.proto")
    assert old == os.path.join("runtime", "proto", "pw.proto")
    assert any(os.path.isfile(p) for p in _proto.PROTO_CANDIDATES)
