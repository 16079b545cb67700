"""examples/streaming_ads.py runs as documented: the matched clicks come first, the NULL-padded
impressions later in the batch where the watermark passes them, a late click is dropped; a second
run with the same --checkpoint restarts from it (state, batch ids) without duplicating output;
an interrupted day (--steps) continued by a restart gives the uninterrupted output."""

from __future__ import annotations

import datetime as dt
import re
import subprocess
import sys
from pathlib import Path

import ember

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "streaming_ads.py"

# The example's first day, from its script (1-hour windows, watermarks 10 and 20 minutes):
# ads 1, 3, 5, 6, 7 are clicked within their hour; ad 2's click comes after 75 minutes and ad
# 4 gets none, so both are written with NULLs once the watermark reaches 13:50; ad 8 (15:40)
# is still in state at the end of the day (watermark 15:15: impressions up to 14:15 evicted).
DAY0 = [(1, "12:00", "12:03"), (2, "12:05", None), (3, "12:10", "12:55"), (4, "12:40", None),
        (5, "13:30", "13:45"), (6, "14:00", "14:10"), (7, "15:30", "15:35")]


def run(*args: str) -> str:
    done = subprocess.run([sys.executable, str(EXAMPLE), *args], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def at(day: int, hhmm: str | None) -> dt.datetime | None:
    if hhmm is None:
        return None
    h, m = map(int, hhmm.split(":"))
    return dt.datetime(2024, 6, 1 + day, h, m)  # collected as naive session-time (UTC) values


def expected(day: int) -> list[tuple]:
    return [(ad, at(day, shown), ad if clicked else None, at(day, clicked))
            for ad, shown, clicked in DAY0]


def sink_rows(workdir: Path) -> list[tuple]:
    session = ember.Session({"spark.sql.session.timeZone": "UTC"})
    out = session.read.parquet(str(workdir / "ad_clicks"))
    assert out.columns == ["impressionAdId", "impressionTime", "clickAdId", "clickTime"]
    return [tuple(r) for r in out.collect()]


def key(row: tuple) -> tuple:
    return (row[1], row[3] or row[1])


def batches(stdout: str) -> dict[int, str]:
    """Each printed batch's text (its progress line and the rows it committed)."""
    parts = re.split(r"^  batch (\d+): ", stdout, flags=re.M)
    return {int(parts[i]): parts[i + 1] for i in range(1, len(parts), 2)}


def test_example_runs_and_restarts_from_its_checkpoint(tmp_path: Path) -> None:
    first = run("--checkpoint", str(tmp_path))
    printed = batches(first)
    assert sorted(printed) == list(range(8))  # 4 steps, each a data batch then a no-data batch
    # matched clicks appear in the batch that brings them ...
    assert "|1             |2024-06-01 12:00:00|1        |2024-06-01 12:03:00|" in printed[0]
    assert "|3             |2024-06-01 12:10:00|3        |2024-06-01 12:55:00|" in printed[2]
    # ... the unmatched impressions only in the no-data batch after the watermark passed them
    assert printed[5].startswith("no new data")
    assert "watermark 2024-06-01 13:50" in printed[5]
    for ad_row in ("|2             |2024-06-01 12:05:00|NULL     |NULL     |",
                   "|4             |2024-06-01 12:40:00|NULL     |NULL     |"):
        assert [b for b, text in printed.items() if ad_row in text] == [5]
    assert "late rows dropped 1" in printed[6]  # the 12:06 click on ad 2
    assert "read back: 7 rows, 5 impressions with their click, 2 without" in first
    assert sorted(sink_rows(tmp_path), key=key) == expected(0)

    second = run("--checkpoint", str(tmp_path))
    assert "Restarting from the checkpoint" in second and "last committed batch: 7" in second
    printed = batches(second)
    assert min(printed) == 8  # batch ids carry on
    # ad 8's impression was in the restored join state when its click came
    assert "|8             |2024-06-01 15:40:00|8        |2024-06-01 15:50:00|" in printed[8]
    rows = sink_rows(tmp_path)
    assert len(rows) == len(set(rows)) == 15  # no duplicates of the first run's rows
    day0 = [(8, at(0, "15:40"), 8, at(0, "15:50"))]
    assert sorted(rows, key=key) == sorted(expected(0) + day0 + expected(1), key=key)


def test_interrupted_day_restarts_to_the_same_output(tmp_path: Path) -> None:
    first = run("--checkpoint", str(tmp_path), "--steps", "2")
    assert "step 3/4" not in first and "read back: 2 rows" in first
    rest = run("--checkpoint", str(tmp_path))
    assert "2024-06-01 step 3/4" in rest and "2024-06-02" not in rest
    assert min(batches(rest)) == 4
    assert sorted(sink_rows(tmp_path), key=key) == expected(0)


def test_default_run_uses_a_temporary_directory() -> None:
    out = run()
    assert "read back: 7 rows, 5 impressions with their click, 2 without" in out
    assert "Restarting" not in out
