"""Fail when a module of a package imports itself back through other modules (an import cycle).

    python tools/check_cycles.py [PACKAGE ...]      (default: auditor)

Import-linter's layer contracts stop imports across layers, not a cycle inside one package
(``auditor.api.errors`` -> ``auditor.api.app`` -> ``auditor.api.errors``). This reads every
import the way import-linter does (grimp: imports inside functions and under
``TYPE_CHECKING`` count too, since a deferred import is how a cycle is usually hidden), finds
the strongly connected components of the module graph, and prints one cycle of each, with the
line of every import on it. Exit status 1 when there is a cycle.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Mapping, Sequence

import grimp

Graph = Mapping[str, frozenset[str]]


def read_imports(packages: Sequence[str]) -> grimp.ImportGraph:
    # No cache directory: a check in ``make lint`` should leave nothing behind.
    return grimp.build_graph(*packages, cache_dir=None)


def import_graph(imports: grimp.ImportGraph, packages: Sequence[str]) -> Graph:
    """Module -> the modules of ``packages`` it imports directly."""
    return {
        module: frozenset(
            target
            for target in imports.find_modules_directly_imported_by(module)
            if target.split(".")[0] in packages
        )
        for module in imports.modules
        if module.split(".")[0] in packages
    }


def strongly_connected(graph: Graph) -> list[list[str]]:
    """Tarjan's algorithm, iterative (a deep package would overflow Python's recursion).
    Components of one module are kept only when the module imports itself."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = counter
                    counter += 1
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, ())))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1 or node in graph.get(node, ()):
                        found.append(sorted(component))
    return found


def one_cycle(graph: Graph, component: list[str]) -> list[str]:
    """The shortest cycle through the component's first module (breadth-first inside it)."""
    members = set(component)
    start = component[0]
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for target in sorted(graph[node] & members):
                if target == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [*reversed(path), start]
                if target not in previous:
                    previous[target] = node
                    following.append(target)
        frontier = following
    raise AssertionError(f"no cycle through {start}")  # a component always has one


def find_cycles(graph: Graph) -> list[tuple[list[str], list[str]]]:
    """Per strongly connected component: its modules, and one cycle through them (the first
    module repeated at the end)."""
    return [(component, one_cycle(graph, component)) for component in strongly_connected(graph)]


def describe(cycle: list[str], imports: grimp.ImportGraph) -> str:
    lines = []
    for importer, imported in itertools.pairwise(cycle):
        details = imports.get_import_details(importer=importer, imported=imported)
        where = ", ".join(f"line {d['line_number']}: {d['line_contents']}" for d in details)
        lines.append(f"  {importer} -> {imported}  ({where})")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    packages = argv or ["auditor"]
    imports = read_imports(packages)
    cycles = find_cycles(import_graph(imports, packages))
    if not cycles:
        print(f"no import cycle in {', '.join(packages)}")
        return 0
    print(f"import cycles in {', '.join(packages)}: {len(cycles)} group(s) of modules")
    for component, cycle in cycles:
        print(f"\n{len(component)} modules import each other: {', '.join(component)}")
        print("for example " + " -> ".join(cycle))
        print(describe(cycle, imports))
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
