"""Generic immutable trees: the base of expressions and plans.

Every node is a frozen, slotted dataclass declared with :func:`node`.  Its children are ordinary
fields: any field whose value is an instance of the class's ``child_base`` (or a tuple of them) is a
child, in field order.  ``with_children`` rebuilds the node with new children and returns ``self``
when every new child is identical, so rule executors can detect a fixed point by identity.

The hash is computed once at construction from the fields' own cached hashes, so hashing and
comparing deep trees never recurses through the whole tree more than once.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Any, ClassVar, Self, TypeVar, dataclass_transform

T = TypeVar("T")


@dataclass_transform(frozen_default=True)
def node(cls: type[T]) -> type[T]:
    """Class decorator for tree nodes: a frozen, slotted dataclass with Ember's equality and hash."""
    return dataclasses.dataclass(frozen=True, slots=True, eq=False, repr=False)(cls)


def _child_iter(value: Any, base: type) -> Iterator[Any]:
    if isinstance(value, base):
        yield value
    elif isinstance(value, tuple):
        for v in value:
            if isinstance(v, base):
                yield v


class TreeNode:
    """Base of all tree nodes.  Subclasses set ``child_base`` to the type of their children."""

    __slots__ = ("_hash",)
    child_base: ClassVar[type]

    # -- construction -------------------------------------------------------------------------
    def __post_init__(self) -> None:
        values = []
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            if f.compare:
                values.append(getattr(self, f.name))
        object.__setattr__(self, "_hash", hash((type(self).__qualname__, *values)))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if type(self) is not type(other) or self._hash != other._hash:  # type: ignore[attr-defined]
            return False
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            if f.compare and getattr(self, f.name) != getattr(other, f.name):
                return False
        return True

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def copy(self, **changes: Any) -> Self:
        """A copy with some fields replaced (``dataclasses.replace``)."""
        return dataclasses.replace(self, **changes)  # type: ignore[type-var]

    # -- children -----------------------------------------------------------------------------
    @property
    def children(self) -> tuple[Self, ...]:
        base = self.child_base
        out: list[Any] = []
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            out.extend(_child_iter(getattr(self, f.name), base))
        return tuple(out)

    def with_children(self, new_children: tuple[Any, ...] | list[Any]) -> Self:
        """This node with its children replaced, in order; ``self`` if all are identical."""
        new_children = tuple(new_children)
        old = self.children
        if len(old) != len(new_children):
            from ember.errors import InternalError

            raise InternalError(
                f"{type(self).__name__}.with_children: expected {len(old)} children, "
                f"got {len(new_children)}"
            )
        if all(a is b for a, b in zip(old, new_children)):
            return self
        base = self.child_base
        it = iter(new_children)
        changes: dict[str, Any] = {}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if isinstance(value, base):
                changes[f.name] = next(it)
            elif isinstance(value, tuple) and any(isinstance(v, base) for v in value):
                changes[f.name] = tuple(next(it) if isinstance(v, base) else v for v in value)
        return dataclasses.replace(self, **changes)  # type: ignore[type-var]

    # -- traversal ----------------------------------------------------------------------------
    def transform_down(self, rule: Callable[[Any], Any]) -> Self:
        """Apply ``rule`` to this node, then recursively to the children of the result (pre-order)."""
        after = rule(self)
        if after is None:
            after = self
        kids = after.children
        if not kids:
            return after
        new = tuple(k.transform_down(rule) for k in kids)
        return after.with_children(new)

    def transform_up(self, rule: Callable[[Any], Any]) -> Self:
        """Apply ``rule`` to the children first, then to this node (post-order)."""
        kids = self.children
        current = self
        if kids:
            current = self.with_children(tuple(k.transform_up(rule) for k in kids))
        after = rule(current)
        return current if after is None else after

    transform = transform_down

    def foreach(self, fn: Callable[[Any], None]) -> None:
        """Call ``fn`` on every node, pre-order."""
        stack = [self]
        while stack:
            n = stack.pop()
            fn(n)
            stack.extend(reversed(n.children))

    def collect(self, pf: Callable[[Any], T | None]) -> list[T]:
        """Pre-order list of ``pf(node)`` for every node where it is not None."""
        out: list[T] = []

        def visit(n: Any) -> None:
            r = pf(n)
            if r is not None:
                out.append(r)

        self.foreach(visit)
        return out

    def find(self, pred: Callable[[Any], bool]) -> Any | None:
        """First node (pre-order) satisfying ``pred``."""
        stack = [self]
        while stack:
            n = stack.pop()
            if pred(n):
                return n
            stack.extend(reversed(n.children))
        return None

    def exists(self, pred: Callable[[Any], bool]) -> bool:
        return self.find(pred) is not None

    # -- display ------------------------------------------------------------------------------
    @property
    def node_name(self) -> str:
        return type(self).__name__

    def simple_string(self) -> str:
        """One line describing this node alone (Spark's ``simpleString``)."""
        return self.node_name

    def state_prefix(self) -> str:
        """Prefix of this node's line in ``tree_string`` (plans mark unresolved nodes)."""
        return ""

    def inner_children(self) -> tuple["TreeNode", ...]:
        """Trees shown under this node that are not children (e.g. subquery plans)."""
        return ()

    def tree_string(self) -> str:
        """Spark-style multi-line rendering (``+-`` / ``:-`` connectors)."""
        lines: list[str] = []
        self._generate_tree_string(0, [], lines, prefix="")
        return "\n".join(lines) + "\n"

    def _generate_tree_string(
        self, depth: int, last_children: list[bool], lines: list[str], prefix: str
    ) -> None:
        head = ""
        if depth > 0:
            for is_last in last_children[:-1]:
                head += "   " if is_last else ":  "
            head += "+- " if last_children[-1] else ":- "
        lines.append(prefix + head + self.state_prefix() + self.simple_string())
        inner = self.inner_children()
        kids = self.children
        for i, c in enumerate(inner):
            c._generate_tree_string(
                depth + 2, last_children + [not kids, i == len(inner) - 1], lines, prefix
            )
        for i, c in enumerate(kids):
            c._generate_tree_string(depth + 1, last_children + [i == len(kids) - 1], lines, prefix)

    def __repr__(self) -> str:
        return self.simple_string()

    def __str__(self) -> str:
        return self.tree_string()
