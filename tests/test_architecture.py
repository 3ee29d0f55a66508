"""The package's layering, read from its source with ``ast`` (nothing is imported or executed).

The data flow is model -> compat -> host -> rules -> recommend -> doctor -> fleet, with probe (all host
and Docker I/O), app (the one room where inputs are assembled: the reader of user-named files, the
overlay, the atomic writer), report (all output) and cli (click) around it. The checker is ``find_violations``, a plain function over ``(path, source)``
pairs, so the self-tests at the bottom can prove it fires on synthetic modules.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional

import pytest

PACKAGE = "cudadoctor"
PACKAGE_DIR = Path(__file__).resolve().parent.parent / PACKAGE

ROOT = "<root>"  # cudadoctor/__init__.py
MAIN = "<main>"  # cudadoctor/__main__.py

# The pure core, in data-flow order (informational; ALLOWED below is the rule).
PURE = ("model", "compat", "host", "rules", "recommend", "doctor", "fleet", "binaries")
# What each layer may import from the package, besides itself. rules and recommend are siblings
# above host: neither may import the other (rules/context.py names Recommendation as a type only).
ALLOWED: dict[str, frozenset[str]] = {
    "model": frozenset(),
    "compat": frozenset({"model"}),
    "host": frozenset({"model", "compat"}),
    "rules": frozenset({"model", "compat", "host"}),
    "recommend": frozenset({"model", "compat", "host"}),
    "doctor": frozenset({"model", "compat", "host", "rules", "recommend"}),
    # fleet: the pure check run per group of hosts; GFD labels and snapshots in, the fleet's answer out.
    "fleet": frozenset({"model", "compat", "host", "rules", "recommend", "doctor"}),
    "about": frozenset(),  # __version__ alone
    # binaries: the pure readers of CUDA fat binaries (over a stream the caller opened) and the scan's verdict.
    "binaries": frozenset({"model"}),
    "probe": frozenset({"model", "about", "binaries"}),
    # The input room: the user-file loader, the table overlay, the atomic writer, and the assembly
    # of every input a command reads (table, families, config, request, host facts, today), which
    # both cli and api call. It resolves the request (doctor.request) and probes the host (probe).
    "app": frozenset({"model", "compat", "host", "doctor", "probe"}),
    # report renders every result, the fleet's too (report/fleet_text.py); fleet never imports report.
    "report": frozenset({"model", "compat", "host", "rules", "recommend", "doctor", "fleet", "binaries"}),
    "cli": frozenset({"model", "compat", "host", "rules", "recommend", "doctor", "fleet", "probe", "app", "report", "about", "binaries"}),
    # The Python API (`from cudadoctor import check`): the CLI's pipeline without click or rich.
    "api": frozenset({"model", "compat", "host", "recommend", "doctor", "probe", "app", "report", "about"}),
    ROOT: frozenset({"about", "api"}),  # api only lazily, through the package's __getattr__
    MAIN: frozenset({"cli"}),
}

# Modules the pure layers must not import (their top-level name): I/O, processes, terminals, GPUs.
IMPURE_MODULES = frozenset(
    {"os", "subprocess", "socket", "ctypes", "pathlib", "shutil", "tempfile", "io", "threading", "glob",
     "urllib", "http", "docker", "pynvml", "click", "rich", "torch"}
)  # fmt: skip
IMPURE_BUILTINS = frozenset({"open", "input", "print"})
# sys attributes that are the process's I/O or its exit; sys.version_info and the like are fine.
IMPURE_SYS = frozenset({"stdout", "stderr", "stdin", "argv", "exit", "__stdout__", "__stderr__", "__stdin__", "orig_argv"})
# Third-party front ends, each owned by one layer.
OWNED_BY = {"click": "cli", "rich": "report"}


@dataclass(frozen=True)
class Violation:
    rule: str  # "layer", "cycle", "purity", "private", "syntax"
    path: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: [{self.rule}] {self.what}"


@dataclass(frozen=True)
class Import:
    target: str  # absolute module name (for `from P import x`: P.x when x is a submodule, else P)
    line: int
    names: tuple[str, ...]  # the names a from-import takes; () for `import m`
    type_only: bool  # under `if TYPE_CHECKING:`


@dataclass
class Module:
    name: str
    path: str
    is_package: bool
    tree: ast.Module


def module_name(path: str) -> tuple[str, bool]:
    """'cudadoctor/rules/__init__.py' -> ('cudadoctor.rules', True)."""
    parts = list(Path(path).with_suffix("").parts)
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


def layer_of(name: str) -> Optional[str]:
    parts = name.split(".")
    if parts[0] != PACKAGE:
        return None
    if len(parts) == 1:
        return ROOT
    if parts[1] == "__main__":
        return MAIN
    return parts[1] if parts[1] in ALLOWED else "?" + parts[1]


def is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def resolve(module: Module, node: ast.ImportFrom) -> str:
    """The absolute name a (possibly relative) from-import names."""
    if node.level == 0:
        return node.module or ""
    base = module.name.split(".")
    if not module.is_package:
        base = base[:-1]  # `.` is the module's package
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def collect_imports(module: Module, known: set[str]) -> list[Import]:
    """Every import in the module, at any depth (functions, try/except, if), in source order."""
    found: list[Import] = []

    def visit(node: ast.AST, type_only: bool) -> None:
        if isinstance(node, ast.If) and is_type_checking(node.test):
            for child in node.body:
                visit(child, True)
            for child in node.orelse:
                visit(child, type_only)
            return
        if isinstance(node, ast.Import):
            found.extend(Import(alias.name, node.lineno, (), type_only) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = resolve(module, node)
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                # `from . import x` imports the submodule x when there is one, else a name of base.
                target = submodule if submodule in known else base
                found.append(Import(target, node.lineno, (alias.name,), type_only))
        for child in ast.iter_child_nodes(node):
            visit(child, type_only)

    visit(module.tree, False)
    return found


def parse_modules(files: Iterable[tuple[str, str]]) -> tuple[list[Module], list[Violation]]:
    modules, errors = [], []
    for path, source in files:
        name, is_package = module_name(path)
        try:
            tree = ast.parse(source, filename=path)
        except SyntaxError as exc:
            errors.append(Violation("syntax", path, exc.lineno or 0, f"cannot parse: {exc.msg}"))
            continue
        modules.append(Module(name, path, is_package, tree))
    return modules, errors


def layer_violations(module: Module, imports: list[Import]) -> list[Violation]:
    layer = layer_of(module.name)
    if layer is None or layer.startswith("?"):
        return [Violation("layer", module.path, 1, f"{module.name} is in no known layer (add it to ALLOWED)")]
    out = []
    for imp in imports:
        target_layer = layer_of(imp.target)
        if imp.type_only or target_layer is None or target_layer == layer:
            continue
        if target_layer not in ALLOWED[layer]:
            out.append(Violation("layer", module.path, imp.line, f"layer {layer} imports {imp.target} (layer {target_layer})"))
    return out


def purity_violations(module: Module, imports: list[Import]) -> list[Violation]:
    layer = layer_of(module.name)
    pure = layer in PURE
    out = []
    for imp in imports:
        top = imp.target.split(".")[0]
        if imp.type_only or top == PACKAGE:
            continue
        what = None
        if top in OWNED_BY and layer != OWNED_BY[top]:
            what = f"imports {imp.target}: {top} belongs in cudadoctor/{OWNED_BY[top]}/"
        elif pure and top in IMPURE_MODULES:
            what = f"pure layer {layer} imports {imp.target}"
        elif pure and top == "sys" and set(imp.names) & IMPURE_SYS:  # from sys import argv
            what = f"pure layer {layer} imports sys." + ", sys.".join(sorted(set(imp.names) & IMPURE_SYS))
        if what:
            out.append(Violation("purity", module.path, imp.line, what))
    if not pure:
        return out
    # Names bound to the sys module (`import sys`, `import sys as s`).
    sys_names = {
        alias.asname or "sys"
        for node in ast.walk(module.tree)
        if isinstance(node, ast.Import)
        for alias in node.names
        if alias.name == "sys"
    }
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in IMPURE_BUILTINS:
            out.append(Violation("purity", module.path, node.lineno, f"pure layer {layer} uses the builtin {node.id}()"))
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in sys_names
            and node.attr in IMPURE_SYS
        ):
            out.append(Violation("purity", module.path, node.lineno, f"pure layer {layer} touches sys.{node.attr}"))
    return out


def private_violations(module: Module, imports: list[Import]) -> list[Violation]:
    out = []
    for imp in imports:
        if layer_of(imp.target) is None:
            continue
        for name in imp.names:
            if name.startswith("_") and not (name.startswith("__") and name.endswith("__")):  # __version__ is public
                out.append(Violation("private", module.path, imp.line, f"imports the private name {name} from {imp.target}"))
    return out


def cycle_violations(modules: list[Module], graph: dict[str, dict[str, int]]) -> list[Violation]:
    """One violation per strongly connected component of the import graph (Tarjan), naming a
    concrete cycle through it with the line of each import."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def strongconnect(node: str) -> None:  # recursion depth is bounded by the module count
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in graph.get(node, {}):
            if succ not in index:
                strongconnect(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(component)

    for node in sorted(graph):
        if node not in index:
            strongconnect(node)

    paths = {m.name: m.path for m in modules}
    out = []
    for component in components:
        members = set(component)
        start = min(component)
        # Breadth-first from start, inside the component, back to start: the shortest cycle.
        previous: dict[str, str] = {}
        frontier, seen = [start], {start}
        closing = None
        while frontier and closing is None:
            following = []
            for node in frontier:
                for succ in sorted(graph[node]):
                    if succ == start:
                        closing = node
                        break
                    if succ in members and succ not in seen:
                        seen.add(succ)
                        previous[succ] = node
                        following.append(succ)
                if closing is not None:
                    break
            frontier = following
        chain = [closing]
        while chain[-1] != start:
            chain.append(previous[chain[-1]])
        chain.reverse()
        chain.append(start)
        steps = " -> ".join(f"{a} ({paths[a]}:{graph[a][b]})" for a, b in zip(chain, chain[1:])) + f" -> {start}"
        out.append(Violation("cycle", paths[start], graph[start][chain[1]], f"import cycle: {steps}"))
    return out


def find_violations(files: Iterable[tuple[str, str]]) -> list[Violation]:
    """Every boundary crossed by the given ``(path, source)`` pairs, paths relative to the
    repository root (``cudadoctor/model/facts.py``)."""
    modules, out = parse_modules(files)
    known = {m.name for m in modules}
    graph: dict[str, dict[str, int]] = {}
    for module in modules:
        imports = collect_imports(module, known)
        out += layer_violations(module, imports)
        out += purity_violations(module, imports)
        out += private_violations(module, imports)
        edges = graph.setdefault(module.name, {})
        for imp in imports:
            if not imp.type_only and imp.target in known and imp.target != module.name:
                edges.setdefault(imp.target, imp.line)  # the first import of it, for the message
    out += cycle_violations(modules, graph)
    return sorted(out, key=lambda v: (v.rule, v.path, v.line, v.what))


def package_files() -> list[tuple[str, str]]:
    root = PACKAGE_DIR.parent
    return [(p.relative_to(root).as_posix(), p.read_text(encoding="utf-8")) for p in sorted(PACKAGE_DIR.rglob("*.py"))]


@pytest.fixture(scope="module")
def violations() -> list[Violation]:
    files = package_files()
    assert len(files) > 20, f"found only {len(files)} modules under {PACKAGE_DIR}"
    return find_violations(files)


def report(violations: list[Violation], rule: str) -> list[str]:
    return [str(v) for v in violations if v.rule == rule]


# --- the package -----------------------------------------------------------------------------------


def test_package_parses(violations):
    found = report(violations, "syntax")
    assert not found, "\n".join(found)


def test_layers_import_only_the_layers_below(violations):
    found = report(violations, "layer")
    assert not found, "layer boundaries crossed:\n" + "\n".join(found)


def test_no_import_cycles(violations):
    found = report(violations, "cycle")
    assert not found, "\n".join(found)


def test_pure_layers_do_no_io_and_front_ends_stay_in_their_layer(violations):
    found = report(violations, "purity")
    assert not found, "impure code:\n" + "\n".join(found)


def test_no_private_names_cross_modules(violations):
    found = report(violations, "private")
    assert not found, "\n".join(found)


# --- the checker itself ----------------------------------------------------------------------------


def check(**sources: str) -> list[str]:
    """find_violations over synthetic modules: check(**{"cudadoctor/model/bad.py": "import os"})."""
    return [str(v) for v in find_violations(sources.items())]


def test_checker_fires_on_a_bad_model_module():
    found = check(
        **{
            "cudadoctor/model/bad.py": (
                "import os\n"
                "from ..cli import x\n"
                "def f():\n"
                "    from ..probe import nvml\n"  # inside a function: still counted
                "    print(open('x').read())\n"
                "    import sys\n"
                "    sys.exit(1)\n"
                "from .facts import _hidden\n"
            ),
            "cudadoctor/model/facts.py": "",
            "cudadoctor/probe/nvml.py": "",
        }
    )
    for expected in (
        "cudadoctor/model/bad.py:1: [purity] pure layer model imports os",
        "cudadoctor/model/bad.py:2: [layer] layer model imports cudadoctor.cli (layer cli)",
        "cudadoctor/model/bad.py:4: [layer] layer model imports cudadoctor.probe.nvml (layer probe)",
        "cudadoctor/model/bad.py:5: [purity] pure layer model uses the builtin print()",
        "cudadoctor/model/bad.py:5: [purity] pure layer model uses the builtin open()",
        "cudadoctor/model/bad.py:7: [purity] pure layer model touches sys.exit",
        "cudadoctor/model/bad.py:8: [private] imports the private name _hidden from cudadoctor.model.facts",
    ):
        assert expected in found, "\n".join(found)
    assert len(found) == 7, "\n".join(found)


def test_checker_resolves_relative_imports_in_packages_and_submodules():
    found = check(
        **{
            "cudadoctor/rules/__init__.py": "from . import gpu\nfrom .. import recommend\n",
            "cudadoctor/rules/gpu.py": "from ..recommend import first_fit\n",
            "cudadoctor/recommend.py": "from .rules import CHECKS\nfrom . import __version__\n",
            "cudadoctor/__init__.py": "",
        }
    )
    assert found == [
        "cudadoctor/recommend.py:1: [cycle] import cycle: cudadoctor.recommend (cudadoctor/recommend.py:1) -> "
        "cudadoctor.rules (cudadoctor/rules/__init__.py:2) -> cudadoctor.recommend",
        "cudadoctor/recommend.py:1: [layer] layer recommend imports cudadoctor.rules (layer rules)",
        "cudadoctor/recommend.py:2: [layer] layer recommend imports cudadoctor (layer <root>)",
        "cudadoctor/rules/__init__.py:2: [layer] layer rules imports cudadoctor.recommend (layer recommend)",
        "cudadoctor/rules/gpu.py:1: [layer] layer rules imports cudadoctor.recommend (layer recommend)",
    ], "\n".join(found)


def test_checker_reports_a_cycle_but_ignores_type_checking_imports():
    found = check(
        **{
            "cudadoctor/host/a.py": "from . import b\n",
            "cudadoctor/host/b.py": "def f():\n    from .c import g\n",
            "cudadoctor/host/c.py": "from .a import h\n",
            # Type-only: neither a cycle with a.py nor a layer crossing.
            "cudadoctor/host/d.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n"
                "    from ..doctor import Request\n"
                "    from .a import h\n"
            ),
            "cudadoctor/host/__init__.py": "from .d import x\n",
        }
    )
    assert found == [
        "cudadoctor/host/a.py:1: [cycle] import cycle: cudadoctor.host.a (cudadoctor/host/a.py:1) -> cudadoctor.host.b "
        "(cudadoctor/host/b.py:2) -> cudadoctor.host.c (cudadoctor/host/c.py:1) -> cudadoctor.host.a",
    ], "\n".join(found)


def test_checker_keeps_front_ends_in_their_layers():
    found = check(
        **{
            "cudadoctor/probe/x.py": "import os, subprocess\nimport rich.console\n",  # I/O is fine in probe, rich is not
            "cudadoctor/report/x.py": "import rich\nimport click\n",
            "cudadoctor/cli/x.py": "import click\nfrom cudadoctor.probe import x\nfrom ..about import __version__\n",
            "cudadoctor/compat/x.py": "import sys\nfrom sys import argv\nif sys.version_info >= (3, 11):\n    pass\n",
            "cudadoctor/__main__.py": "import os, sys\nsys.exit(0)\nfrom .report import x\n",
            "cudadoctor/extras/x.py": "",
        }
    )
    assert found == [
        "cudadoctor/__main__.py:3: [layer] layer <main> imports cudadoctor.report.x (layer report)",
        "cudadoctor/extras/x.py:1: [layer] cudadoctor.extras.x is in no known layer (add it to ALLOWED)",
        "cudadoctor/compat/x.py:2: [purity] pure layer compat imports sys.argv",
        "cudadoctor/probe/x.py:2: [purity] imports rich.console: rich belongs in cudadoctor/report/",
        "cudadoctor/report/x.py:2: [purity] imports click: click belongs in cudadoctor/cli/",
    ], "\n".join(found)
