"""Join types and their semantics tables: the one place join semantics live.

Every analyzer rule, optimizer rule, strategy and operator reads these tables instead of re-deriving
them, so a join type's semantics are written down once.

=============  =================  ==================  ================================
join type      output             nullability change  build sides a hash join may use
=============  =================  ==================  ================================
Inner/Cross    left ++ right      none                left or right
LeftOuter      left ++ right      right nullable      right (shuffled hash: both)
RightOuter     left ++ right      left nullable       left  (shuffled hash: both)
FullOuter      left ++ right      all nullable        shuffled hash only, either side
LeftSemi       left               none                right (shuffled hash: both)
LeftAnti       left               none                right (shuffled hash: both)
Existence      left ++ [exists]   exists not null     right
=============  =================  ==================  ================================
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any


class JoinType(Enum):
    INNER = "Inner"
    CROSS = "Cross"
    LEFT_OUTER = "LeftOuter"
    RIGHT_OUTER = "RightOuter"
    FULL_OUTER = "FullOuter"
    LEFT_SEMI = "LeftSemi"
    LEFT_ANTI = "LeftAnti"
    EXISTENCE = "ExistenceJoin"

    def __str__(self) -> str:
        return self.value

    @property
    def sql(self) -> str:
        return _SQL[self]

    @property
    def is_inner_like(self) -> bool:
        return self in (JoinType.INNER, JoinType.CROSS)

    @property
    def is_left_existence(self) -> bool:
        """LeftSemi, LeftAnti or ExistenceJoin: the output is (mostly) the left side."""
        return self in (JoinType.LEFT_SEMI, JoinType.LEFT_ANTI, JoinType.EXISTENCE)

    @property
    def outputs_right(self) -> bool:
        """Whether the right side's columns appear in the output."""
        return not self.is_left_existence

    @property
    def preserves_left(self) -> bool:
        """Every left row appears at least once (possibly NULL-padded)."""
        return self in (JoinType.LEFT_OUTER, JoinType.FULL_OUTER, JoinType.EXISTENCE)

    @property
    def preserves_right(self) -> bool:
        return self in (JoinType.RIGHT_OUTER, JoinType.FULL_OUTER)

    @property
    def left_nullable(self) -> bool:
        """Left columns become nullable in the output."""
        return self in (JoinType.RIGHT_OUTER, JoinType.FULL_OUTER)

    @property
    def right_nullable(self) -> bool:
        return self in (JoinType.LEFT_OUTER, JoinType.FULL_OUTER)

    @property
    def keeps_unmatched_left(self) -> bool:
        """Left rows without a match appear in the output (NULL-padded, flagged ``exists =
        false``, or as the anti join's result): a join-condition conjunct over the left side alone
        must stay in the condition (it cannot filter the left child)."""
        return self.preserves_left or self is JoinType.LEFT_ANTI

    @property
    def keeps_unmatched_right(self) -> bool:
        """Right rows without a match appear in the output (see :attr:`keeps_unmatched_left`)."""
        return self.preserves_right

    @property
    def may_be_implicit_cartesian(self) -> bool:
        """A join of this type without a condition relating its sides is an implicit cartesian
        product, which ``spark.sql.crossJoin.enabled=false`` forbids (Spark's
        CheckCartesianProducts: Inner and the outer joins; an explicit CROSS JOIN and the
        existence joins are allowed)."""
        return self in (JoinType.INNER, JoinType.LEFT_OUTER, JoinType.RIGHT_OUTER,
                        JoinType.FULL_OUTER)


def join_output(join_type: JoinType, left: Any, right: Any,
                existence_attr: Any = None) -> tuple[Any, ...]:
    """The output attributes of a join of plans ``left`` and ``right`` (logical or physical:
    anything with ``.output``), per the table above: LeftSemi/LeftAnti output the left side,
    ExistenceJoin adds ``existence_attr``; outer joins make the padded side nullable
    (Spark's ``Join.output``).  ``right.output`` is read only when it is part of the output."""
    lo = left.output
    if not join_type.outputs_right:
        if join_type is JoinType.EXISTENCE:
            if existence_attr is None:
                from ember.errors import InternalError

                raise InternalError("ExistenceJoin without its exists attribute")
            return lo + (existence_attr,)
        return lo
    ro = right.output
    if join_type.left_nullable:
        lo = tuple(a.with_nullability(True) for a in lo)
    if join_type.right_nullable:
        ro = tuple(a.with_nullability(True) for a in ro)
    return lo + ro


def join_type_string(join_type: JoinType | UsingJoin, existence_attr: Any = None) -> str:
    """How plans print a join type: ``ExistenceJoin(exists#5)`` with its flag, else the name."""
    if join_type is JoinType.EXISTENCE and existence_attr is not None:
        return f"ExistenceJoin({existence_attr.simple_string()})"
    return str(join_type)


_SQL = {
    JoinType.INNER: "INNER",
    JoinType.CROSS: "CROSS",
    JoinType.LEFT_OUTER: "LEFT OUTER",
    JoinType.RIGHT_OUTER: "RIGHT OUTER",
    JoinType.FULL_OUTER: "FULL OUTER",
    JoinType.LEFT_SEMI: "LEFT SEMI",
    JoinType.LEFT_ANTI: "LEFT ANTI",
    JoinType.EXISTENCE: "EXISTENCE",
}

_BY_NAME = {
    "inner": JoinType.INNER,
    "cross": JoinType.CROSS,
    "outer": JoinType.FULL_OUTER,
    "full": JoinType.FULL_OUTER,
    "fullouter": JoinType.FULL_OUTER,
    "full_outer": JoinType.FULL_OUTER,
    "left": JoinType.LEFT_OUTER,
    "leftouter": JoinType.LEFT_OUTER,
    "left_outer": JoinType.LEFT_OUTER,
    "right": JoinType.RIGHT_OUTER,
    "rightouter": JoinType.RIGHT_OUTER,
    "right_outer": JoinType.RIGHT_OUTER,
    "semi": JoinType.LEFT_SEMI,
    "leftsemi": JoinType.LEFT_SEMI,
    "left_semi": JoinType.LEFT_SEMI,
    "anti": JoinType.LEFT_ANTI,
    "leftanti": JoinType.LEFT_ANTI,
    "left_anti": JoinType.LEFT_ANTI,
}


def join_type_from_string(how: str) -> JoinType:
    """PySpark's ``how`` strings (``'left_outer'``, ``'semi'``, ``'full'`` ...) to a JoinType."""
    key = how.lower().replace(" ", "")
    if key not in _BY_NAME:
        from ember.errors import AnalysisError

        supported = "'" + "', '".join(sorted(_BY_NAME)) + "'"
        raise AnalysisError(
            f"Unsupported join type '{how}'. Supported join types include: {supported}.",
            error_class="UNSUPPORTED_JOIN_TYPE",
            parameters={"typ": how, "supported": supported},
        )
    return _BY_NAME[key]


@dataclass(frozen=True, slots=True)
class UsingJoin:
    """Unresolved ``JOIN ... USING (cols)`` / ``NATURAL JOIN`` (``natural=True``, cols empty).
    The analyzer turns it into an equi-join plus a projection (ResolveNaturalAndUsingJoin)."""

    join_type: JoinType
    using_columns: tuple[str, ...] = ()
    natural: bool = False

    def __str__(self) -> str:
        if self.natural:
            return f"NaturalJoin({self.join_type})"
        return f"UsingJoin({self.join_type}, [{', '.join(self.using_columns)}])"


@dataclass(frozen=True, slots=True)
class JoinHint:
    """Hints attached to each side of a Join (``BROADCAST``, ``SHUFFLE_MERGE``, ``SHUFFLE_HASH``,
    ``SHUFFLE_REPLICATE_NL``).  Spark's strategy names, canonical form."""

    left: tuple[str, ...] = ()
    right: tuple[str, ...] = ()

    @property
    def is_empty(self) -> bool:
        return not self.left and not self.right

    def __str__(self) -> str:
        parts = []
        if self.left:
            parts.append("leftHint=(strategy=" + ",".join(h.lower() for h in self.left) + ")")
        if self.right:
            parts.append("rightHint=(strategy=" + ",".join(h.lower() for h in self.right) + ")")
        return ", ".join(parts)


# Spark's hint names and their aliases -> canonical strategy name.
JOIN_HINT_ALIASES: dict[str, str] = {
    "BROADCAST": "BROADCAST",
    "BROADCASTJOIN": "BROADCAST",
    "MAPJOIN": "BROADCAST",
    "MERGE": "SHUFFLE_MERGE",
    "SHUFFLE_MERGE": "SHUFFLE_MERGE",
    "MERGEJOIN": "SHUFFLE_MERGE",
    "SHUFFLE_HASH": "SHUFFLE_HASH",
    "SHUFFLE_REPLICATE_NL": "SHUFFLE_REPLICATE_NL",
}
