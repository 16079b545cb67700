"""Physical plans of streaming queries: the nodes (:mod:`.nodes`, Spark's
``EventTimeWatermarkExec``, ``StreamingSymmetricHashJoinExec``, ``StreamingRelationExec``) and the
declarative analysis of a stream-stream join's condition that the node, its EXPLAIN line and
the runtimes share (Spark's ``StreamingSymmetricHashJoinHelper`` and ``StreamingJoinHelper``):
the condition split (:mod:`.join_conditions`) and the state watermark predicates
(:mod:`.state_watermark`).  Like :mod:`ember.physical.nodes` they are pure data; the state,
the operators and the event-time statistics belong to the runtimes."""
