"""Per-node state of one run: stores keyed by the physical node (see :class:`NodeState`)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Generic, TypeVar

__all__ = ["NodeState", "NodeSet"]

V = TypeVar("V")


class NodeState(Generic[V]):
    """A value per physical node of one run (``store[node]``), keyed by the node's identity.

    Identity, not equality: two equal subtrees at two places of a plan are two operators, each
    with its own partitions, metrics and state (``ReusedExchangeExec`` is how a plan says that
    two places share one exchange).  The store keeps every node it holds alive, so the identity
    of a node cannot be taken by another object while the run lasts (a bare ``id(node)`` key
    can: a plan rewritten during the run frees nodes whose addresses new nodes then get).

    Reads are lock-free; :meth:`setdefault` and :meth:`get_or_create` are atomic (partitions
    run on a thread pool).
    """

    __slots__ = ("_values", "_lock")

    def __init__(self) -> None:
        self._values: dict[int, tuple[Any, V]] = {}
        self._lock = threading.Lock()

    def get(self, node: Any, default: V | None = None) -> V | None:
        hit = self._values.get(id(node))
        return default if hit is None else hit[1]

    def __getitem__(self, node: Any) -> V:
        return self._values[id(node)][1]

    def __setitem__(self, node: Any, value: V) -> None:
        self._values[id(node)] = (node, value)

    def __contains__(self, node: Any) -> bool:
        return id(node) in self._values

    def __len__(self) -> int:
        return len(self._values)

    def setdefault(self, node: Any, value: V) -> V:
        """The value of ``node``, set to ``value`` first when it has none (atomically)."""
        with self._lock:
            return self._values.setdefault(id(node), (node, value))[1]

    def get_or_create(self, node: Any, make: Callable[[], V]) -> V:
        """The value of ``node``, made by ``make()`` on first use (once, under the lock)."""
        hit = self._values.get(id(node))
        if hit is None:
            with self._lock:
                hit = self._values.get(id(node))
                if hit is None:
                    hit = self._values[id(node)] = (node, make())
        return hit[1]

    def pop(self, node: Any, default: V | None = None) -> V | None:
        hit = self._values.pop(id(node), None)
        return default if hit is None else hit[1]

    def nodes(self) -> list[Any]:
        return [n for n, _ in self._values.values()]

    def values(self) -> list[V]:
        return [v for _, v in self._values.values()]

    def items(self) -> list[tuple[Any, V]]:
        return list(self._values.values())

    def clear(self) -> None:
        self._values.clear()


class NodeSet:
    """A set of physical nodes of one run, by identity (see :class:`NodeState` for why)."""

    __slots__ = ("_nodes",)

    def __init__(self, nodes: Iterable[Any] = ()) -> None:
        self._nodes: dict[int, Any] = {id(n): n for n in nodes}

    def add(self, node: Any) -> None:
        self._nodes[id(node)] = node

    def discard(self, node: Any) -> None:
        self._nodes.pop(id(node), None)

    def update(self, other: "NodeSet") -> None:
        self._nodes.update(other._nodes)

    def __contains__(self, node: Any) -> bool:
        return id(node) in self._nodes

    def __len__(self) -> int:
        return len(self._nodes)

    def __iter__(self) -> Iterator[Any]:
        return iter(list(self._nodes.values()))
