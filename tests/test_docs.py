"""The Python blocks of docs/USAGE.md run, in order, in one namespace: the guide stays true."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[1] / "docs" / "USAGE.md"


def test_usage_guide_examples_run(spark) -> None:
    # ``spark``: the Spark runtime section attaches to the run's SparkSession
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    assert len(blocks) >= 6
    namespace: dict[str, object] = {}
    for i, block in enumerate(blocks):
        try:
            exec(compile(block, f"{DOC.name}[block {i}]", "exec"), namespace)
        except Exception as e:  # name the block that failed
            raise AssertionError(f"docs/USAGE.md python block {i} failed: {e!r}\n{block}") from e
