"""The layering contract: which of Ember's packages may import which, checked over the import graph.

Ember's packages are the stages of a query's path (docs/ARCHITECTURE.md, "Layers"). Each module
belongs to one group, and each group has a rank; a module may import from its own group and from
groups of lower rank, except the pairs listed in ``FORBIDDEN`` (siblings that must stay independent
although one ranks below the other). The graph is read from the source with :mod:`ast`, so imports
inside functions count as much as module-level ones. Imports under ``if TYPE_CHECKING:`` are
annotations only, never executed, and are exempt.

A function-level import is allowed only where a module-level one would close an import cycle; the
second test keeps their number below ``MAX_FUNCTION_LEVEL_IMPORTS`` and makes each say, in a comment
on its line or the line above, which cycle it breaks.

Run ``python -m tests.test_layering`` to print every edge that breaks the contract.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "ember"

# (rank, group, module prefixes): a module belongs to the group of its longest matching prefix.
GROUPS: tuple[tuple[int, str, tuple[str, ...]], ...] = (
    (0, "foundation", ("ember.errors", "ember.types", "ember.trees", "ember.formatting",
                       "ember.row", "ember.guard", "ember.calendar_interval", "ember.conf",
                       "ember.spark_sql_conf_keys")),
    (1, "expressions", ("ember.expressions", "ember.coercion")),
    (2, "plans", ("ember.plans",)),
    (3, "sql", ("ember.sql",)),
    (3, "analysis", ("ember.analysis",)),
    (3, "optimizer", ("ember.optimizer",)),
    (3, "execution", ("ember.execution",)),
    (3, "physical", ("ember.physical",)),
    (4, "planning", ("ember.planning",)),
    (5, "runtime.local", ("ember.runtime", "ember.runtime.local", "ember.streaming.join",
                          "ember.streaming.state", "ember.streaming.watermarks",
                          "ember.streaming.crash", "ember.streaming.logs")),
    (6, "runtime.spark", ("ember.runtime.spark",)),
    (7, "drivers", ("ember.query_execution", "ember.explain", "ember.streaming.execution",
                    "ember.streaming.progress", "ember.streaming.checks", "ember.cache_manager",
                    "ember.streaming.spark")),
    (8, "surface", ("ember", "ember.session", "ember.dataframe", "ember.column",
                    "ember.functions", "ember.window", "ember.readers", "ember.cli", "ember.__main__",
                    "ember.streaming", "ember.streaming.api", "ember.streaming.sinks",
                    "ember.streaming.sources", "ember.streaming.memory")),
)

# Pairs (importer group, imported group) that the ranks would allow but the design does not: the
# physical planner knows plans and physical operators, never how the optimizer rewrites or how
# kernels run; the runtimes execute physical plans and never re-enter planning, optimization or
# analysis (an adaptive stage asks the join type what it may build, not the planner).
FORBIDDEN: frozenset[tuple[str, str]] = frozenset({
    ("planning", "optimizer"), ("planning", "execution"), ("planning", "analysis"),
    ("planning", "sql"),
    ("runtime.local", "planning"), ("runtime.local", "optimizer"), ("runtime.local", "analysis"),
    ("runtime.local", "sql"),
    ("runtime.spark", "planning"), ("runtime.spark", "optimizer"), ("runtime.spark", "analysis"),
    ("runtime.spark", "sql"),
})

MAX_FUNCTION_LEVEL_IMPORTS = 34

_RANK = {group: rank for rank, group, _ in GROUPS}
_PREFIXES = sorted(((prefix, group) for _, group, prefixes in GROUPS for prefix in prefixes),
                   key=lambda pg: -len(pg[0]))


def group_of(module: str) -> str:
    for prefix, group in _PREFIXES:
        if module == prefix or module.startswith(prefix + "."):
            return group
    raise AssertionError(f"{module} is in no group of the layering contract")


def allowed(importer: str, imported: str) -> bool:
    if importer == imported:
        return True
    return _RANK[imported] < _RANK[importer] and (importer, imported) not in FORBIDDEN


@dataclass(frozen=True, slots=True)
class Import:
    module: str  # the importing module
    target: str  # the imported ember module
    path: Path
    line: int
    in_function: bool


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_module(name: str) -> bool:
    base = SRC.joinpath(*name.split("."))
    return base.with_suffix(".py").exists() or (base / "__init__.py").exists()


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _targets(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names if alias.name.split(".")[0] == "ember"]
    base = node.module or ""
    if node.level:
        parts = module.split(".") if is_package else module.split(".")[:-1]
        parts = parts[:len(parts) - (node.level - 1)]
        base = ".".join(parts + ([node.module] if node.module else []))
    if base.split(".")[0] != "ember":
        return []
    # ``from ember.x import y`` imports the module ember.x.y when there is one
    subs = [f"{base}.{a.name}" for a in node.names if _is_module(f"{base}.{a.name}")]
    return subs if len(subs) == len(node.names) else [base, *subs]


def imports() -> Iterator[Import]:
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        is_package = path.name == "__init__.py"

        def walk(node: ast.AST, in_function: bool) -> Iterator[Import]:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.If) and _is_type_checking(child.test):
                    for sub in child.orelse:
                        yield from walk(sub, in_function)
                    continue
                if isinstance(child, (ast.Import, ast.ImportFrom)):
                    for target in _targets(child, module, is_package):
                        yield Import(module, target, path, child.lineno, in_function)
                inner = in_function or isinstance(
                    child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                yield from walk(child, inner)

        yield from walk(ast.parse(path.read_text(), str(path)), False)


def violations() -> list[str]:
    found = []
    for imp in imports():
        importer, imported = group_of(imp.module), group_of(imp.target)
        if not allowed(importer, imported):
            where = f"{imp.path.relative_to(SRC.parent)}:{imp.line}"
            found.append(f"{where}: {imp.module} ({importer}) imports {imp.target} ({imported})")
    return found


def test_every_module_is_in_a_group() -> None:
    for path in PACKAGE.rglob("*.py"):
        group_of(_module_name(path))


def test_imports_follow_the_layering_contract() -> None:
    found = violations()
    assert not found, "imports that break the layering contract:\n" + "\n".join(found)


def test_function_level_imports_are_few_and_say_which_cycle_they_break() -> None:
    function_level = [imp for imp in imports() if imp.in_function]
    uncommented = []
    for imp in function_level:
        lines = imp.path.read_text().splitlines()
        here, above = lines[imp.line - 1], lines[imp.line - 2].strip()
        if "#" not in here and not above.startswith("#"):
            uncommented.append(f"{imp.path.relative_to(SRC.parent)}:{imp.line}: {here.strip()}")
    assert len(function_level) <= MAX_FUNCTION_LEVEL_IMPORTS, (
        f"{len(function_level)} function-level imports of ember modules; at most "
        f"{MAX_FUNCTION_LEVEL_IMPORTS}: move the others to module level")
    assert not uncommented, ("function-level imports without a comment naming the cycle they "
                             "break:\n" + "\n".join(uncommented))


def test_the_checker_sees_a_breach() -> None:
    # the contract itself: a lower layer importing a higher one, and a forbidden sibling pair
    assert not allowed("plans", "optimizer")
    assert not allowed("planning", "optimizer")
    assert not allowed("optimizer", "execution")
    assert not allowed("runtime.spark", "planning")
    assert allowed("runtime.local", "physical") and allowed("surface", "drivers")
    assert group_of("ember.streaming.join.operator") == "runtime.local"
    assert group_of("ember.streaming.api") == "surface"


if __name__ == "__main__":
    for line in violations():
        print(line)
