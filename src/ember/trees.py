"""Generic immutable trees: the base of expressions and plans.

Every node is a frozen, slotted dataclass declared with :func:`node`.  Its children are ordinary
fields: any field whose value is an instance of the class's ``child_base`` (or a tuple of them) is a
child, in field order.  ``with_children`` rebuilds the node with new children and returns ``self``
when every new child is identical, so rule executors can detect a fixed point by identity.

The hash is computed once at construction from the fields' own cached hashes, so hashing and
comparing deep trees never recurses through the whole tree more than once.

Fast paths (planning runs ``children`` hundreds of thousands of times per query): each class's
field names (all, and those taking part in equality) are looked up once per class and kept in
``_FIELD_NAMES`` / ``_COMPARE_NAMES`` instead of calling ``dataclasses.fields`` per node, and a
node's ``children`` tuple is computed on first use and kept in its ``_kids`` slot.  Both are safe
because classes never change their fields and nodes are immutable (fields are never reassigned
after construction; ``copy`` / ``with_children`` build new nodes, which start without a cache).
``copy`` calls the constructor directly with the cached field names (what ``dataclasses.replace``
does, without re-reading the fields).  :func:`transform_up_memo` / :func:`transform_down_memo`
(end of the module) let pure rewrites skip subtrees they already left unchanged.

Tree patterns (Spark's ``TreePatternBits``): ``node.contains(C1, C2, ...)`` tells whether an
instance of one of the classes occurs in the subtree without walking it after the first time.
Every node class gets a bit on first use; a node's ``tree_bits`` is its class's bit or-ed with
its children's (and, for plans, its expressions', see ``QueryPlan.own_pattern_bits``), kept in
the node's ``_bits`` slot.  Rules use it to skip trees that hold none of the node kinds they
rewrite.
"""

from __future__ import annotations

import dataclasses
from operator import attrgetter
from collections.abc import Callable, Iterator
from typing import Any, ClassVar, Self, TypeVar, dataclass_transform
from ember.errors import InternalError

T = TypeVar("T")


@dataclass_transform(frozen_default=True)
def node(cls: type[T]) -> type[T]:
    """Class decorator for tree nodes: a frozen, slotted dataclass with Ember's equality and hash."""
    return dataclasses.dataclass(frozen=True, slots=True, eq=False, repr=False)(cls)


#: ``{node class: names of all its dataclass fields, in order}``, filled on first use.
_FIELD_NAMES: dict[type, tuple[str, ...]] = {}
#: ``{node class: names of the fields taking part in equality and hashing}``.
_COMPARE_NAMES: dict[type, tuple[str, ...]] = {}


def field_names(cls: type) -> tuple[str, ...]:
    """Names of the dataclass fields of node class ``cls``, in order (cached per class)."""
    try:
        return _FIELD_NAMES[cls]
    except KeyError:
        names = tuple(f.name for f in dataclasses.fields(cls))  # type: ignore[arg-type]
        _FIELD_NAMES[cls] = names
        return names


def compare_field_names(cls: type) -> tuple[str, ...]:
    """Names of the fields of node class ``cls`` taking part in equality, in order (cached)."""
    return _compare_names(cls)


def _compare_names(cls: type) -> tuple[str, ...]:
    try:
        return _COMPARE_NAMES[cls]
    except KeyError:
        names = tuple(f.name for f in dataclasses.fields(cls) if f.compare)  # type: ignore
        _COMPARE_NAMES[cls] = names
        return names


#: ``{node class: names of its __init__ fields}`` when ``dataclasses.replace`` amounts to
#: ``cls(**{name: value})`` (no InitVar, no ``init=False`` field), else None.
_INIT_NAMES: dict[type, tuple[str, ...] | None] = {}


def _init_names(cls: type) -> tuple[str, ...] | None:
    try:
        return _INIT_NAMES[cls]
    except KeyError:
        all_fields = cls.__dataclass_fields__.values()  # type: ignore[attr-defined]
        simple = all(f._field_type is dataclasses._FIELD and f.init  # type: ignore[attr-defined]
                     for f in all_fields
                     if f._field_type is not dataclasses._FIELD_CLASSVAR)  # type: ignore
        names = field_names(cls) if simple else None
        _INIT_NAMES[cls] = names
        return names


#: ``{node class: (getter of all its field values as a tuple, {field name: position})}`` for
#: the classes whose ``_init_names`` is not None: ``copy`` calls the constructor positionally.
_POSITIONAL: dict[type, tuple[Callable[[Any], tuple[Any, ...]], dict[str, int]]] = {}


def _positional(cls: type) -> tuple[Callable[[Any], tuple[Any, ...]], dict[str, int]] | None:
    try:
        return _POSITIONAL[cls]
    except KeyError:
        pass
    names = _init_names(cls)
    if names is None or not names:
        return None
    getter = attrgetter(*names) if len(names) > 1 else _single_getter(names[0])
    entry = _POSITIONAL[cls] = (getter, {n: i for i, n in enumerate(names)})
    return entry


def _single_getter(name: str) -> Callable[[Any], tuple[Any, ...]]:
    get = attrgetter(name)
    return lambda obj: (get(obj),)


def _replace(obj: Any, changes: dict[str, Any]) -> Any:
    """``dataclasses.replace(obj, **changes)`` without re-reading the class's fields each time:
    the constructor is called with every field positionally (no field is keyword-only)."""
    cls = type(obj)
    entry = _POSITIONAL.get(cls) or _positional(cls)
    if entry is None:
        return dataclasses.replace(obj, **changes)
    getter, index = entry
    values = list(getter(obj))
    for n, v in changes.items():
        i = index.get(n)
        if i is None:
            return dataclasses.replace(obj, **changes)  # let dataclasses raise its TypeError
        values[i] = v
    return cls(*values)


def _child_iter(value: Any, base: type) -> Iterator[Any]:
    if isinstance(value, base):
        yield value
    elif isinstance(value, tuple):
        for v in value:
            if isinstance(v, base):
                yield v


def _rebuild_node(cls: type, values: tuple[Any, ...]) -> Any:
    """Unpickle a node: its fields set as ``__init__`` would, then ``__post_init__``."""
    obj = object.__new__(cls)
    for name, value in zip(field_names(cls), values):
        object.__setattr__(obj, name, value)
    obj.__post_init__()
    return obj


def _hashable(value: Any) -> Any:
    """``value`` with its lists, tuples and dicts (nested) turned into tuples, for hashing."""
    if isinstance(value, (list, tuple)):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, dict):
        return tuple((_hashable(k), _hashable(v)) for k, v in value.items())
    return value


#: ``{node class: its tree-pattern bit}``, allocated on first use.
_CLASS_BITS: dict[type, int] = {}
#: ``{tuple of classes: or of the bits of every allocated class that is a subclass of one}``;
#: cleared whenever a class gets a bit.
_MASKS: dict[tuple[type, ...], int] = {}


def class_bit(cls: type) -> int:
    """The tree-pattern bit of node class ``cls``."""
    bit = _CLASS_BITS.get(cls)
    if bit is None:
        bit = _CLASS_BITS[cls] = 1 << len(_CLASS_BITS)
        _MASKS.clear()
    return bit


def pattern_mask(classes: tuple[type, ...]) -> int:
    """The bits of the node classes that are subclasses of one of ``classes`` (among those that
    have a bit: a tree's ``tree_bits`` allocates the bits of every class in it)."""
    mask = _MASKS.get(classes)
    if mask is None:
        mask = 0
        for c, b in _CLASS_BITS.items():
            if issubclass(c, classes):
                mask |= b
        _MASKS[classes] = mask
    return mask


#: ``{node class: getter of (class qualname, *values of the compare fields)}``, the tuple a
#: node's hash is computed from (one C call instead of a getattr per field).
_HASH_KEYS: dict[type, Callable[[Any], tuple[Any, ...]]] = {}


def _hash_key_getter(cls: type) -> Callable[[Any], tuple[Any, ...]]:
    names = _compare_names(cls)
    if names:
        getter = attrgetter("__class__.__qualname__", *names)
    else:
        qualname = cls.__qualname__
        getter = lambda obj: (qualname,)  # noqa: E731
    _HASH_KEYS[cls] = getter
    return getter


class TreeNode:
    """Base of all tree nodes.  Subclasses set ``child_base`` to the type of their children."""

    # _kids: the cached ``children`` tuple; _fixed: bitmask of pure rewrites known to leave this
    # subtree unchanged (see transform_up_memo); _bits: ``tree_bits``.
    __slots__ = ("_hash", "_kids", "_fixed", "_bits")
    child_base: ClassVar[type]

    # -- construction -------------------------------------------------------------------------
    def __post_init__(self) -> None:
        cls = type(self)
        getter = _HASH_KEYS.get(cls) or _hash_key_getter(cls)
        key = getter(self)  # (qualified class name, *compare field values)
        try:
            h = hash(key)
        except TypeError:  # a list / dict field value (an ARRAY or STRUCT literal's value)
            h = hash(tuple(map(_hashable, key)))
        object.__setattr__(self, "_hash", h)

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuilt through __post_init__ so the cached hash is recomputed in the loading process
        # (string hashes differ between processes; the Spark runtime ships plans to workers).
        cls = type(self)
        return _rebuild_node, (cls, tuple(getattr(self, n) for n in field_names(cls)))

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if type(self) is not type(other) or self._hash != other._hash:  # type: ignore[attr-defined]
            return False
        for n in _compare_names(type(self)):
            if getattr(self, n) != getattr(other, n):
                return False
        return True

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def copy(self, **changes: Any) -> Self:
        """A copy with some fields replaced (``dataclasses.replace``)."""
        return _replace(self, changes)  # type: ignore[no-any-return]

    # -- children -----------------------------------------------------------------------------
    @property
    def children(self) -> tuple[Self, ...]:
        try:
            return self._kids  # type: ignore[no-any-return]
        except AttributeError:
            pass
        base = self.child_base
        out: list[Any] = []
        for n in field_names(type(self)):
            value = getattr(self, n)
            if isinstance(value, base):
                out.append(value)
            elif isinstance(value, tuple):
                for v in value:
                    if isinstance(v, base):
                        out.append(v)
        kids = tuple(out)
        object.__setattr__(self, "_kids", kids)
        return kids

    def with_children(self, new_children: tuple[Any, ...] | list[Any]) -> Self:
        """This node with its children replaced, in order; ``self`` if all are identical."""
        new_children = tuple(new_children)
        old = self.children
        if len(old) != len(new_children):
            raise InternalError(
                f"{type(self).__name__}.with_children: expected {len(old)} children, "
                f"got {len(new_children)}"
            )
        for a, b in zip(old, new_children):
            if a is not b:
                break
        else:
            return self
        base = self.child_base
        it = iter(new_children)
        changes: dict[str, Any] = {}
        for n in field_names(type(self)):
            value = getattr(self, n)
            if isinstance(value, base):
                changes[n] = next(it)
            elif isinstance(value, tuple):
                for v in value:
                    if isinstance(v, base):
                        changes[n] = tuple(next(it) if isinstance(v, base) else v
                                           for v in value)
                        break
        new = _replace(self, changes)
        for k in new_children:
            if not isinstance(k, base):
                break
        else:  # the new node's children are exactly these: no need to find them again
            object.__setattr__(new, "_kids", new_children)
        return new  # type: ignore[no-any-return]

    # -- tree patterns (Spark's TreePatternBits) ----------------------------------------------
    @property
    def tree_bits(self) -> int:
        """The pattern bits of every node class in this subtree (see the module docstring)."""
        try:
            return self._bits  # type: ignore[no-any-return]
        except AttributeError:
            pass
        bits = class_bit(type(self)) | self.own_pattern_bits()
        for k in self.children:
            bits |= k.tree_bits
        object.__setattr__(self, "_bits", bits)
        return bits

    def own_pattern_bits(self) -> int:
        """Bits of trees held by this node that are not its children (a plan's expressions)."""
        return 0

    def contains(self, *classes: type) -> bool:
        """Whether an instance of one of ``classes`` occurs in this subtree: the same answer as
        ``self.exists(lambda n: isinstance(n, classes))`` (for a plan, also over the
        expressions of its nodes), in constant time after the first call."""
        bits = self.tree_bits  # first: allocates the bits of the classes in the tree
        return bool(bits & pattern_mask(classes))

    # -- traversal ----------------------------------------------------------------------------
    def transform_down(self, rule: Callable[[Any], Any]) -> Self:
        """Apply ``rule`` to this node, then recursively to the children of the result (pre-order)."""
        after = rule(self)
        if after is None:
            after = self
        kids = after.children
        if not kids:
            return after
        new = [k.transform_down(rule) for k in kids]
        for a, b in zip(kids, new):
            if a is not b:
                return after.with_children(new)
        return after

    def transform_up(self, rule: Callable[[Any], Any]) -> Self:
        """Apply ``rule`` to the children first, then to this node (post-order)."""
        kids = self.children
        current = self
        if kids:
            new = [k.transform_up(rule) for k in kids]
            for a, b in zip(kids, new):
                if a is not b:
                    current = self.with_children(new)
                    break
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


# ---------------------------------------------------------------------------------------------
# Memoized transforms for pure rewrites
#
# Rule batches re-run every rule over the whole tree until nothing changes, and most runs change
# nothing, or one small part.  For a rewrite that is a *pure function of the subtree it is
# applied to* (it reads nothing but the nodes: no configuration, no parent, no other part of the
# tree), "``node.transform_up(rule)`` returned ``node``" stays true for as long as the node exists,
# because nodes are immutable.  ``transform_up_memo`` / ``transform_down_memo`` do exactly what
# ``transform_up`` / ``transform_down`` do, and also record that fact as a bit (one per rewrite,
# see ``rewrite_bit``) in the node's ``_fixed`` slot; later calls return a marked subtree at once
# without walking it.  Rebuilt nodes start unmarked (``copy`` / ``with_children`` construct new
# objects), so only unchanged subtrees are skipped and the result is always identical to the
# plain transform's.  Only for rules whose answer depends on the subtree alone.

_BITS: dict[str, int] = {}


def rewrite_bit(name: str) -> int:
    """The ``_fixed`` bit of the pure rewrite called ``name`` (allocated on first use)."""
    bit = _BITS.get(name)
    if bit is None:
        bit = _BITS[name] = 1 << len(_BITS)
    return bit


def _is_fixed(node: Any, bit: int) -> bool:
    try:
        return bool(node._fixed & bit)
    except AttributeError:
        return False


def _mark_fixed(node: Any, bit: int) -> None:
    try:
        old = node._fixed
    except AttributeError:
        old = 0
    object.__setattr__(node, "_fixed", old | bit)


def transform_up_memo(node: T, rule: Callable[[Any], Any], bit: int) -> T:
    """``node.transform_up(rule)`` for a pure ``rule`` identified by ``bit``."""
    if _is_fixed(node, bit):
        return node
    kids = node.children  # type: ignore[attr-defined]
    current = node
    if kids:
        new = [transform_up_memo(k, rule, bit) for k in kids]
        for a, b in zip(kids, new):
            if a is not b:
                current = node.with_children(new)  # type: ignore[attr-defined]
                break
    after = rule(current)
    result = current if after is None else after
    if result is node:
        _mark_fixed(node, bit)
    return result


def transform_down_memo(node: T, rule: Callable[[Any], Any], bit: int) -> T:
    """``node.transform_down(rule)`` for a pure ``rule`` identified by ``bit``."""
    if _is_fixed(node, bit):
        return node
    after = rule(node)
    if after is None:
        after = node
    kids = after.children  # type: ignore[attr-defined]
    result = after
    if kids:
        new = [transform_down_memo(k, rule, bit) for k in kids]
        for a, b in zip(kids, new):
            if a is not b:
                result = after.with_children(new)
                break
    if result is node:
        _mark_fixed(node, bit)
    return result
