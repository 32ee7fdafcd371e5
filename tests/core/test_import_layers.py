"""The import graph keeps its shape: apps form layers and import only downwards, and no two modules import each
other, directly or round a circle. Every import counts, a function-level one too (it hides a cycle, it does not
remove it); migrations are left out (they name other apps' migrations by string).

The layers, lowest first. `core` is the kernel and imports no domain app; `config` (settings, URLs, the ASGI
entry point) sits on top of everything and is imported by nothing but Django's own machinery.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

LAYERS = [
    "core",
    "accounts",
    "billing",
    "api",
    "webhooks",
    "leads",
    "llmproxy",
    "sending",
    "campaigns",
    "deliverability",
    "replies",
    "mcpserver",
    "console",
    "config",
]
RANK = {app: rank for rank, app in enumerate(LAYERS)}

# Imports allowed to break the layering, as (importing module, imported module): none. An import that goes upwards
# fails the test; the fix is a signal the lower app defines, a registry the higher app fills, or moving the code.
KNOWN_UPWARD: set[tuple[str, str]] = set()

# Circles allowed between modules (each as the sorted tuple of its members): none.
KNOWN_CIRCLES: set[tuple[str, ...]] = set()


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _sources() -> dict[str, Path]:
    out = {}
    for app in LAYERS:
        base = ROOT / app
        if not base.is_dir():
            continue
        for path in base.rglob("*.py"):
            if "migrations" in path.parts:
                continue
            out[_module(path)] = path
    return out


def _imports(module: str, path: Path, known: set[str]) -> set[str]:
    """The project modules `module` imports (`from a.b import c` counts as a.b.c when that is a module, else a.b)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                stem = ".".join(base + ([node.module] if node.module else []))
            else:
                stem = node.module or ""
            names = [f"{stem}.{alias.name}" for alias in node.names] + [stem]
        for name in names:
            # the longest known module the name starts with (an imported function belongs to its module)
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name and name != module:
                found.add(name)
                break
    return found


def _graph() -> dict[str, set[str]]:
    sources = _sources()
    known = set(sources)
    return {module: _imports(module, path, known) for module, path in sources.items()}


def _app(module: str) -> str:
    return module.split(".")[0]


def test_apps_import_only_downwards():
    upward = set()
    for module, targets in _graph().items():
        for target in targets:
            if RANK[_app(target)] > RANK[_app(module)]:
                upward.add((module, target))
    new = sorted(upward - KNOWN_UPWARD)
    assert not new, "imports against the layers (core < accounts < billing < ... < config):\n" + "\n".join(
        f"  {a} -> {b}" for a, b in new)
    gone = sorted(KNOWN_UPWARD - upward)
    assert not gone, "no longer imported: remove from KNOWN_UPWARD:\n" + "\n".join(f"  {a} -> {b}" for a, b in gone)


def _circles(graph: dict[str, set[str]]) -> list[tuple[str, ...]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    members = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        members.append(member)
                        if member == node:
                            break
                    if len(members) > 1:
                        out.append(tuple(sorted(members)))
    return out


def test_no_module_circles():
    circles = set(_circles(_graph()))
    new = sorted(circles - KNOWN_CIRCLES)
    assert not new, "modules importing each other, directly or round a circle:\n" + "\n".join(
        "  " + " -> ".join(c) for c in new)
    gone = sorted(KNOWN_CIRCLES - circles)
    assert not gone, "no longer a circle: remove from KNOWN_CIRCLES:\n" + "\n".join("  " + " ".join(c) for c in gone)


def test_the_layers_name_every_app():
    from django.apps import apps

    ours = {config.name.split(".")[0] for config in apps.get_app_configs() if (ROOT / config.name.split(".")[0]).is_dir()}
    assert ours - set(LAYERS) == set(), f"apps missing from LAYERS: {sorted(ours - set(LAYERS))}"
