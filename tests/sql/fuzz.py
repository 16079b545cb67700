"""A mutation fuzzer for Ember's SQL front to back: every statement must end in a result or an
Ember error with a Spark error class other than ``INTERNAL_ERROR`` (issue 24).

Each case takes a valid statement of :data:`CORPUS` (over the small views of :data:`SETUP`)
and applies one or two mutations: a token deleted, duplicated or swapped with its neighbour, the
text truncated, a name replaced by an unknown one, a literal replaced by an extreme one, an
operand nested deeply (parentheses, ``a + a + ...``, ``AND`` chains, ``UNION ALL`` chains),
and a random configuration switch (batch size 2, optimizer off, a forced join strategy).
Statements run on a worker process with a per-statement timeout (a hang kills and restarts the
worker); outcomes are ``ok``, ``error`` (an Ember error with a class), ``internal``
(``INTERNAL_ERROR`` or an Ember error without a class), ``crash`` (any other exception) and
``timeout``.

    python -m tests.sql.fuzz --count 10000 --seed 24      # the long run (prints the counts)

``tests/sql/test_fuzz.py`` runs a small fixed-seed sample; ``EMBER_FUZZ_COUNT=10000`` runs that
many statements there instead.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import random
import re
import traceback
from collections import Counter
from dataclasses import dataclass

SETUP = (
    "CREATE OR REPLACE TEMP VIEW ti AS SELECT * FROM VALUES (1, 10, 'x'), (2, 20, 'y'), "
    "(3, NULL, 'z') AS t(id, a, s)",
    "CREATE OR REPLACE TEMP VIEW ts AS SELECT * FROM VALUES (1, 'x', DATE '2024-01-02'), "
    "(2, 'y', DATE '9999-12-30') AS t(id, s, d)",
    "CREATE OR REPLACE TEMP VIEW tn AS SELECT * FROM VALUES (1, array(1, 2), named_struct('f', 1)),"
    " (2, array(3), named_struct('f', 2)) AS t(id, arr, st)",
)

CORPUS = (
    "SELECT id, a + 1 AS b FROM ti WHERE a > 5 ORDER BY id",
    "SELECT s, count(*), sum(a) FROM ti GROUP BY s HAVING count(*) > 0",
    "SELECT ti.id, ts.s FROM ti JOIN ts ON ti.id = ts.id",
    "SELECT * FROM ti LEFT JOIN ts ON ti.id = ts.id AND ti.s = ts.s",
    "SELECT id FROM ti UNION ALL SELECT id FROM ts",
    "SELECT id FROM ti INTERSECT SELECT id FROM ts",
    "SELECT id FROM ti EXCEPT SELECT id FROM ts",
    "SELECT id, row_number() OVER (PARTITION BY s ORDER BY a) FROM ti",
    "SELECT CAST(a AS DECIMAL(10, 2)), CAST(s AS VARCHAR(5)) FROM ti",
    "SELECT date_add(d, 1), d + INTERVAL 1 DAY FROM ts",
    "SELECT lpad(s, 5, 'ab'), rpad(s, 3), upper(s), length(s) FROM ti",
    "SELECT id FROM ti LIMIT 2 OFFSET 1",
    "WITH c AS (SELECT id, a FROM ti) SELECT * FROM c WHERE a IS NOT NULL",
    "SELECT id, (SELECT max(a) FROM ti) FROM ts",
    "SELECT id FROM ti WHERE id IN (SELECT id FROM ts)",
    "SELECT id FROM ti WHERE EXISTS (SELECT 1 FROM ts WHERE ts.id = ti.id)",
    "SELECT CASE WHEN a > 10 THEN 'big' ELSE 'small' END FROM ti",
    "SELECT coalesce(a, 0) / 2, a % 3, -a FROM ti",
    "SELECT arr, st.f FROM tn",
    "SELECT arr FROM tn INTERSECT SELECT arr FROM tn",
    "SELECT DISTINCT s FROM ti ORDER BY s DESC",
    "SELECT count(DISTINCT s), max(a), min(id) FROM ti",
    "SELECT id, a FROM ti WHERE a BETWEEN 5 AND 25 AND s LIKE 'x%'",
    "SELECT 1 + 2 * 3, 'a' || 'b', true AND false",
)

_TOKEN = re.compile(r"'[^']*'|\w+|[^\w\s]")
_EXTREME = ("2147483647", "-2147483648", "9223372036854775807", "1e308", "-0.0",
            "99999999999999999999999999999999999999", "NULL", "''", "'" + "x" * 200 + "'",
            "DATE '9999-12-31'", "TIMESTAMP '0001-01-01 00:00:00'", "true", "2147483648")
_UNKNOWN = ("nosuchcol", "nosuchtable", "nosuchfn", "t9.x")
_CONFS = (("ember.execution.batchSize", "2"), ("ember.optimizer.enabled", "false"),
          ("spark.sql.autoBroadcastJoinThreshold", "-1"), ("spark.sql.ansi.enabled", "false"),
          ("spark.sql.shuffle.partitions", "1"))


def _deep(rng: random.Random) -> str:
    n = rng.choice((50, 300, 1000, 3000))
    kind = rng.randrange(4)
    if kind == 0:
        return "(" * n + "1" + ")" * n
    if kind == 1:
        return " + ".join(["1"] * n)
    if kind == 2:
        return "(" + " AND ".join(["true"] * n) + ")"
    return "(SELECT " + " UNION ALL SELECT ".join(["1"] * min(n, 500)) + " LIMIT 1)"


def mutate(sql: str, rng: random.Random) -> str:
    """One or two random mutations of ``sql`` (module docstring)."""
    for _ in range(rng.choice((1, 1, 2))):
        toks = _TOKEN.findall(sql)
        if not toks:
            return sql
        i = rng.randrange(len(toks))
        op = rng.randrange(8)
        if op == 0:
            del toks[i]
        elif op == 1:
            toks.insert(i, toks[i])
        elif op == 2 and i + 1 < len(toks):
            toks[i], toks[i + 1] = toks[i + 1], toks[i]
        elif op == 3:
            return " ".join(toks[: max(1, i)])
        elif op == 4:
            names = [j for j, t in enumerate(toks) if re.fullmatch(r"[a-z_]\w*", t)]
            if names:
                toks[rng.choice(names)] = rng.choice(_UNKNOWN)
        elif op == 5:
            lits = [j for j, t in enumerate(toks) if re.fullmatch(r"\d+|'[^']*'", t)]
            if lits:
                toks[rng.choice(lits)] = rng.choice(_EXTREME)
        elif op == 6:
            lits = [j for j, t in enumerate(toks) if re.fullmatch(r"\d+", t)]
            if lits:
                toks[rng.choice(lits)] = _deep(rng)
        else:
            toks[i] = rng.choice(("(", ")", ",", "SELECT", "FROM", "JOIN", "ON", "OVER", "*"))
        sql = " ".join(toks)
    return sql


@dataclass(frozen=True, slots=True)
class Case:
    sql: str
    conf: tuple[tuple[str, str], ...]


def cases(count: int, seed: int) -> list[Case]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        conf = (rng.choice(_CONFS),) if rng.random() < 0.3 else ()
        out.append(Case(mutate(rng.choice(CORPUS), rng), conf))
    return out


def _classify(session, case: Case) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    from ember.errors import EmberError

    for k, v in case.conf:
        session.conf.set(k, v)
    try:
        session.sql(case.sql).collect()
        return "ok", ""
    except EmberError as e:
        if e.error_class in (None, "INTERNAL_ERROR"):
            return "internal", f"[{e.error_class}] {str(e)[:300]}"
        return "error", e.error_class
    except Exception:  # noqa: BLE001 - what the fuzzer looks for
        return "crash", traceback.format_exc(limit=-4)[-600:]
    finally:
        for k, _ in case.conf:
            session.conf.unset(k)


#: Address-space cap of the worker process: a statement that tries to allocate more fails with
#: MemoryError (reported as a crash) instead of starving the machine.
WORKER_MEMORY_BYTES = 4 * 1024**3


def _worker(conn) -> None:  # type: ignore[no-untyped-def]
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (WORKER_MEMORY_BYTES, WORKER_MEMORY_BYTES))
    import ember

    session = ember.Session()
    for s in SETUP:
        session.sql(s)
    conn.send("ready")
    while True:
        case = conn.recv()
        if case is None:
            return
        conn.send(_classify(session, case))


class Runner:
    """Runs cases on a worker process; a case over ``timeout`` seconds kills it (restarted)."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self._ctx = mp.get_context("spawn")
        self._proc = None
        self._conn = None

    def _start(self) -> None:
        parent, child = self._ctx.Pipe()
        self._proc = self._ctx.Process(target=_worker, args=(child,), daemon=True)
        self._proc.start()
        self._conn = parent
        if not parent.poll(120):
            raise RuntimeError("fuzz worker did not start")
        parent.recv()

    def run(self, case: Case) -> tuple[str, str]:
        if self._proc is None or not self._proc.is_alive():
            self._start()
        self._conn.send(case)  # type: ignore[union-attr]
        if self._conn.poll(self.timeout):  # type: ignore[union-attr]
            try:
                return self._conn.recv()  # type: ignore[union-attr,no-any-return]
            except EOFError:
                self._proc = None
                return "crash", "worker died"
        self.close(kill=True)
        return "timeout", ""

    def close(self, kill: bool = False) -> None:
        if self._proc is not None:
            if kill:
                self._proc.kill()
            else:
                self._conn.send(None)  # type: ignore[union-attr]
            self._proc.join(5)
        self._proc = None


def run(count: int, seed: int, timeout: float = 10.0) -> tuple[Counter, list[tuple[str, Case, str]]]:
    """Outcome counts and the failures (kind, case, detail) of ``count`` cases."""
    counts: Counter = Counter()
    failures = []
    runner = Runner(timeout)
    try:
        for case in cases(count, seed):
            kind, detail = runner.run(case)
            counts[kind] += 1
            if kind in ("internal", "crash", "timeout"):
                failures.append((kind, case, detail))
    finally:
        runner.close()
    return counts, failures


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=24)
    ap.add_argument("--timeout", type=float, default=10.0)
    args = ap.parse_args()
    counts, failures = run(args.count, args.seed, args.timeout)
    print(f"seed {args.seed}, {args.count} statements: {dict(sorted(counts.items()))}")
    for kind, case, detail in failures:
        print(f"--- {kind} {case.conf}: {case.sql[:300]}\n{detail}")


if __name__ == "__main__":
    main()
