"""The five physical join algorithms of the local runtime (Spark's join ``*Exec`` nodes),
vectorized over Arrow record batches.

- :mod:`.hashed_relation`: the build side of the hash joins (Spark's HashedRelation);
- :mod:`.kernel`: candidate pairs, per-join-type semantics and output assembly shared by all;
- :mod:`.hash_join`: BroadcastHashJoinExec and ShuffledHashJoinExec (grace spilling);
- :mod:`.sort_merge_join`: SortMergeJoinExec (block-wise scanner, spilling key groups);
- :mod:`.nested_loop_join`: BroadcastNestedLoopJoinExec;
- :mod:`.cartesian`: CartesianProductExec.

Importing this package registers the operators with :mod:`ember.runtime.local.registry`.
"""

from ember.runtime.local.joins import cartesian, hash_join, nested_loop_join, sort_merge_join
from ember.runtime.local.joins.hashed_relation import (
    EmptyHashedRelation,
    HashedRelation,
    HashedRelationWithAllNullKeys,
)

__all__ = [
    "HashedRelation",
    "EmptyHashedRelation",
    "HashedRelationWithAllNullKeys",
    "cartesian",
    "hash_join",
    "nested_loop_join",
    "sort_merge_join",
]
