"""The package's import graph: no cycle among captioner's modules, and no upward import.

Every `import` / `from ... import` in captioner/ counts, at module level or inside a
function (a lazy import is still a dependency). Only explicit imports are edges: importing
`captioner.a.b` runs the package `__init__`s above it too, but that is not a dependency of the
importing module's code.
"""

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "captioner"

LOWER = ("data", "text", "decoding", "layers", "metrics", "features", "backbones", "io", "errors", "model_card",
         "visualize", "settings_groups")
# (importer layers, layers they must never import); "io" is captioner/io.py, "errors" captioner/errors.py
RULES = [
    (LOWER, ("models", "training", "commands", "inference")),
    (("models",), ("training", "commands", "inference")),
    (("inference",), ("training", "commands")),
    (("training",), ("commands",)),
    # batch work on a distributed engine sits on models/ and inference/; only commands/ use it
    (("pipelines",), ("training", "commands")),
    (LOWER + ("models", "inference", "training"), ("pipelines",)),
]


def module_name(path):
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def all_modules():
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports_of(name, path, modules):
    """The captioner modules `name` (at `path`) imports: [(module, line)]."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: from . import x / from ..a import b
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module
            for alias in node.names:  # `from pkg import module` imports the module
                sub = f"{source}.{alias.name}"
                found.append((sub if sub in modules else source, node.lineno))
    out = []
    for target, line in found:
        while target and target not in modules:  # `import captioner.a.b.Name`-like forms
            target = target.rpartition(".")[0]
        if target and target.split(".")[0] == "captioner" and target != name:
            out.append((target, line))
    return out


def graph():
    modules = all_modules()
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def layer(name):
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else None


def strongly_connected(edges):
    """Tarjan's algorithm, iterative: the components of more than one module."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []
    counter = 0
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(edges[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(edges.get(child, ()))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    component.append(m)
                    if m == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def test_the_walker_sees_the_package():
    g = graph()
    assert "captioner.models.pixel_model" in g and "captioner.io" in g
    assert "captioner.text.vocabulary" in {t for t, _ in g["captioner.models.pixel_model"]}
    # `from captioner.text import vocabulary` (inside a function) names the submodule
    assert "captioner.text.vocabulary" in {t for t, _ in g["captioner.text"]}


def test_the_cycle_finder_finds_a_cycle():
    assert strongly_connected({"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]}) == [["a", "b", "c"]]
    assert strongly_connected({"a": ["b"], "b": [], "c": ["a", "b"]}) == []


def test_no_import_cycle():
    g = graph()
    cycles = strongly_connected({name: [t for t, _ in targets] for name, targets in g.items()})
    assert not cycles, "import cycles among captioner modules:\n" + "\n".join(" <-> ".join(c) for c in cycles)


@pytest.mark.parametrize("importers,forbidden", RULES, ids=["lower-layers", "models", "inference", "training", "pipelines",
                                                                 "nothing-imports-pipelines"])
def test_no_upward_import(importers, forbidden):
    bad = []
    for name, targets in graph().items():
        if layer(name) not in importers:
            continue
        for target, line in targets:
            if layer(target) in forbidden:
                bad.append(f"{name}:{line} imports {target}")
    assert not bad, "upward imports:\n" + "\n".join(bad)
