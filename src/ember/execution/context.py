"""Per-query execution context of the local runtime's operators."""

from __future__ import annotations

from dataclasses import dataclass, field

from ember.conf import SQLConf


@dataclass(slots=True)
class ExecContext:
    """What operators may read while running: configuration and the batch size.

    Operators keep per-run state in their iterators, never on plan nodes.
    """

    conf: SQLConf = field(default_factory=SQLConf)

    @property
    def batch_size(self) -> int:
        return self.conf.batch_size

    @property
    def time_zone(self) -> str:
        return self.conf.time_zone
