"""The stream-stream symmetric hash join core: condition split, state watermark predicates
and per-partition processing."""
