"""The stream-stream symmetric hash join core: per-partition processing over the join state
(the condition split and state watermark predicates it applies are
:mod:`ember.physical.streaming`'s)."""
