"""A streaming pipeline: ad impressions joined with ad clicks within an hour (a LEFT OUTER
stream-stream join with watermarks), written to Parquet with exactly-once commits.

Run it with ``python examples/streaming_ads.py``. Two event streams arrive as Parquet files in
two directories, one file per stream per step, the way an upstream job would drop them:

    impressions   adId, impressionTime      watermark: 10 minutes
    clicks        adId, clickTime           watermark: 20 minutes

The query is the classic one of Spark's Structured Streaming guide::

    impressions.join(clicks, expr(\"\"\"clickAdId = impressionAdId AND
                                       clickTime >= impressionTime AND
                                       clickTime <= impressionTime + interval 1 hour\"\"\"),
                     "leftOuter")

A click is joined as soon as both rows have arrived. An impression without a click is written
with NULL click columns only once the watermark (the minimum over both streams of the latest
event time minus its delay) has passed the end of its one-hour window. Until then it waits in
the join's state; this often happens in a "no-data" micro-batch that runs only because the
watermark moved. A click more than 20 minutes behind the clicks already seen is dropped as late.

For every micro-batch the script prints the ``lastProgress`` highlights (rows read, rows
written, rows held in state, late rows dropped, the watermark the batch ran with) and the rows
that batch committed to the Parquet sink. At the end it reads the sink back with Ember's batch
reader, which only sees committed files.

``--checkpoint DIR`` keeps everything in DIR: the query's checkpoint (``DIR/checkpoint``), the
two input directories and the output (``DIR/ad_clicks``). Run the script again with the same DIR
and the query restarts from its checkpoint. It keeps its batch ids, watermark and join state,
skips the input files it has read, and the sink ignores batches it already committed. Each run
feeds the next day of traffic; ``--steps N`` stops after N steps, as if the job had been killed,
and the next run feeds the rest of that day.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import tempfile

import pyarrow as pa
import pyarrow.parquet as pq

import ember
from ember import functions as F
from ember.streaming.sinks.file import FileStreamSinkLog, committed_files, uri_to_path

FIRST_DAY = dt.datetime(2024, 6, 1, tzinfo=dt.timezone.utc)

# One day of traffic, in four steps: (what happens, impressions, clicks); (adId, "HH:MM") pairs.
DAY = [
    ("ads 1-3 are shown; ad 1 is clicked 3 minutes later",
     [(1, "12:00"), (2, "12:05"), (3, "12:10")], [(1, "12:03")]),
    ("ad 4 is shown; ad 3 is clicked within its hour, ad 2 too late (75 minutes)",
     [(4, "12:40")], [(3, "12:55"), (2, "13:20")]),
    ("ads 5 and 6 are shown and clicked; the watermark reaches 13:50, past the hours of ads 2 "
     "and 4: they are written without a click",
     [(5, "13:30"), (6, "14:00")], [(5, "13:45"), (6, "14:10")]),
    ("ads 7 and 8 are shown, ad 7 is clicked; a click on ad 2 at 12:06 arrives late",
     [(7, "15:30"), (8, "15:40")], [(7, "15:35"), (2, "12:06")]),
]
# On the following days the first step also brings the click on the previous day's ad 8
# (15:50): its impression is still in the join state, which the restart restored.
LATE_CLICK_OF_AD_8 = "15:50"


def at(day: int, hhmm: str) -> dt.datetime:
    h, m = map(int, hhmm.split(":"))
    return FIRST_DAY + dt.timedelta(days=day, hours=h, minutes=m)


def drop_file(directory: str, name: str, ad_ids: list[int], times: list[dt.datetime],
              time_col: str) -> None:
    """Write one input file under a hidden name, then rename it into place: the file source
    skips names starting with ``.`` or ``_``, so it never sees a half-written file."""
    table = pa.table({"adId": pa.array(ad_ids, pa.int32()),
                      time_col: pa.array(times, pa.timestamp("us", tz="UTC"))})
    tmp = os.path.join(directory, f".{name}.tmp")
    pq.write_table(table, tmp)
    os.rename(tmp, os.path.join(directory, name))


def step_file(day: int, step: int) -> str:
    return f"day{day:03d}-step{step}.parquet"


def pending_steps(dirs: dict[str, str]) -> tuple[int, list[int]]:
    """The first day whose steps are not all on disk yet (in both streams), and its missing
    steps (a run killed between the two files of a step writes that step again)."""
    present = set(os.listdir(dirs["impressions"])) & set(os.listdir(dirs["clicks"]))
    day = 0
    while all(step_file(day, s) in present for s in range(len(DAY))):
        day += 1
    return day, [s for s in range(len(DAY)) if step_file(day, s) not in present]


def feed(dirs: dict[str, str], day: int, step: int) -> None:
    _, impressions, clicks = DAY[step]
    clicks = [(ad, at(day, t)) for ad, t in clicks]
    if day > 0 and step == 0:
        clicks.append((8, at(day - 1, LATE_CLICK_OF_AD_8)))
    name = step_file(day, step)
    drop_file(dirs["impressions"], name, [a for a, _ in impressions],
              [at(day, t) for _, t in impressions], "impressionTime")
    drop_file(dirs["clicks"], name, [a for a, _ in clicks], [t for _, t in clicks], "clickTime")


def when(iso: str | None) -> str:
    """A progress timestamp (``2024-06-01T12:30:00.000Z``) as ``2024-06-01 12:30``."""
    if not iso or iso.startswith("1970-01-01T00:00:00"):
        return "none yet"
    return iso[:10] + " " + iso[11:16]


def plural(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


class BatchPrinter:
    """Prints each new micro-batch: its progress and the rows it committed to the sink."""

    def __init__(self, session: ember.Session, sink_dir: str) -> None:
        self.session = session
        self.log = FileStreamSinkLog(os.path.join(sink_dir, "_spark_metadata"))
        # files committed by earlier runs are not this run's to print
        self.printed_files: set[str] = set(committed_files(sink_dir) or [])
        self.last_batch = -1

    def print_new(self, query) -> None:
        # recentProgress: one report per batch, newest last (query.lastProgress is the newest)
        for p in query.recentProgress:
            if p["batchId"] <= self.last_batch:
                continue
            self.last_batch = p["batchId"]
            impressions, clicks = (s["numInputRows"] for s in p["sources"])
            state = p["stateOperators"][0]
            read = (f"read {plural(impressions, 'impression')} + {plural(clicks, 'click')}"
                    if impressions or clicks else "no new data (the watermark moved)")
            wrote = plural(p["sink"]["numOutputRows"], "row")
            print(f"  batch {p['batchId']}: {read} -> wrote {wrote} | state rows "
                  f"{state['numRowsTotal']} | late rows dropped "
                  f"{state['numRowsDroppedByWatermark']} | watermark "
                  f"{when(p['eventTime']['watermark'])}")
            self.print_committed(p["batchId"])

    def print_committed(self, batch_id: int) -> None:
        """The rows of the files the sink's log (``_spark_metadata/<batchId>``) lists for this
        batch (a compaction file every 10th batch lists all files so far: keep the new ones)."""
        files = [uri_to_path(e["path"]) for e in self.log.get(batch_id) or []
                 if e.get("action") == "add"]
        new = [f for f in files if f not in self.printed_files]
        self.printed_files.update(files)
        rows = self.session.read.parquet(*new) if new else None
        if rows is not None and rows.count() > 0:
            rows.orderBy("impressionTime", "clickTime").show(truncate=False)


def build_query(session: ember.Session, dirs: dict[str, str]):
    impressions = (
        session.readStream.schema("adId INT, impressionTime TIMESTAMP")
        .parquet(dirs["impressions"])
        .select(F.col("adId").alias("impressionAdId"), "impressionTime")
        .withWatermark("impressionTime", "10 minutes"))
    clicks = (
        session.readStream.schema("adId INT, clickTime TIMESTAMP")
        .parquet(dirs["clicks"])
        .select(F.col("adId").alias("clickAdId"), "clickTime")
        .withWatermark("clickTime", "20 minutes"))
    joined = impressions.join(clicks, F.expr("""
        clickAdId = impressionAdId AND
        clickTime >= impressionTime AND
        clickTime <= impressionTime + interval 1 hour"""), "leftOuter")
    return (joined.writeStream.format("parquet").outputMode("append")
            .option("checkpointLocation", dirs["checkpoint"])
            .start(dirs["output"]))


def run(workdir: str, max_steps: int | None) -> None:
    dirs = {"impressions": os.path.join(workdir, "impressions"),
            "clicks": os.path.join(workdir, "clicks"),
            "output": os.path.join(workdir, "ad_clicks"),
            "checkpoint": os.path.join(workdir, "checkpoint")}
    for name in ("impressions", "clicks"):
        os.makedirs(dirs[name], exist_ok=True)
    commits = os.path.join(dirs["checkpoint"], "commits")
    done = sorted(int(n) for n in os.listdir(commits) if n.isdigit()) \
        if os.path.isdir(commits) else []
    if done:
        print(f"Restarting from the checkpoint in {dirs['checkpoint']} (last committed batch: "
              f"{done[-1]}): batch ids, the watermark and the join state carry on.\n")

    # 4 state partitions (fixed by the first run; a restart keeps the checkpoint's number)
    session = ember.Session({"spark.sql.shuffle.partitions": 4,
                             "spark.sql.session.timeZone": "UTC"})
    printer = BatchPrinter(session, dirs["output"])   # before the query can commit anything
    query = build_query(session, dirs)
    print(f"Query {query.id} (the id is kept in the checkpoint), run {query.runId}")
    query.processAllAvailable()   # on a restart: re-runs a batch logged but not committed
    printer.print_new(query)

    day, steps = pending_steps(dirs)
    if max_steps is not None:
        steps = steps[:max_steps]
    date = (FIRST_DAY + dt.timedelta(days=day)).date()
    for step in steps:
        what = DAY[step][0]
        if day > 0 and step == 0:
            what += f"; the click on yesterday's ad 8 ({LATE_CLICK_OF_AD_8}) arrives"
        print(f"\n{date} step {step + 1}/{len(DAY)}: {what}")
        # Holding the query's progress lock while both files land puts them in one micro-batch,
        # so the printout is the same on every run; a real feed needs no such care.
        with query.awaitProgressLock:
            feed(dirs, day, step)
        query.processAllAvailable()   # the batch with the new files, then any no-data batch
        printer.print_new(query)
    query.stop()

    out = session.read.parquet(dirs["output"])   # only the files the sink committed
    matched = out.where(F.col("clickAdId").isNotNull()).count()
    print(f"\nThe Parquet output {dirs['output']}, read back: {out.count()} rows, {matched} "
          f"impressions with their click, {out.count() - matched} without")
    out.orderBy("impressionTime", "clickTime").show(100, truncate=False)
    if steps and steps[-1] == len(DAY) - 1:
        print("Ad 8's impression (15:40) is still in the join state: run again with the same "
              "--checkpoint to feed the next day; its click comes then.")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Ember's streaming example: impressions LEFT OUTER "
                                 "JOIN clicks within an hour")
    ap.add_argument("--checkpoint", metavar="DIR", default=None,
                    help="keep the checkpoint, the input and the output in DIR (default: a "
                         "temporary directory); run again with the same DIR to restart")
    ap.add_argument("--steps", type=int, default=None,
                    help="stop after this many steps (the next run continues the day)")
    args = ap.parse_args(argv)
    if args.checkpoint is not None:
        os.makedirs(args.checkpoint, exist_ok=True)
        run(os.path.abspath(args.checkpoint), args.steps)
    else:
        with tempfile.TemporaryDirectory(prefix="ember-streaming-ads-") as tmp:
            run(tmp, args.steps)


if __name__ == "__main__":
    main()
