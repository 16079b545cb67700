-- Window functions: every frame kind, ties, NULLs in partition and order keys, empty and
-- all-NULL frames, each ranking and offset function, aggregates over windows.
-- Written for Ember (not a copy of a Spark file); expected results come from PySpark.

CREATE OR REPLACE TEMPORARY VIEW w1 AS SELECT * FROM VALUES
(1, 'a', 1, 10, 1.5D),
(2, 'a', 1, NULL, 2.5D),
(3, 'a', 2, 30, NULL),
(4, 'a', NULL, 40, 4.0D),
(5, 'a', 3, NULL, NULL),
(6, 'a', 5, 60, -1.0D),
(7, 'b', NULL, NULL, NULL),
(8, 'b', NULL, 80, 8.0D),
(9, 'b', 2, 90, 9.0D),
(10, NULL, 1, 100, 10.0D),
(11, NULL, 1, 110, NULL),
(12, NULL, NULL, NULL, NULL),
(13, 'c', 7, NULL, NULL),
(14, 'c', 8, NULL, NULL),
(15, 'd', 1, 5, 0.5D)
AS w1(id, p, o, v, d);

-- ranking functions, ties and NULL order keys (NULLS FIRST for ASC)
SELECT id, p, o,
  row_number() OVER (PARTITION BY p ORDER BY o, id) AS rn,
  rank() OVER (PARTITION BY p ORDER BY o) AS rk,
  dense_rank() OVER (PARTITION BY p ORDER BY o) AS drk,
  percent_rank() OVER (PARTITION BY p ORDER BY o) AS prk,
  cume_dist() OVER (PARTITION BY p ORDER BY o) AS cd,
  ntile(3) OVER (PARTITION BY p ORDER BY o, id) AS nt3,
  ntile(10) OVER (PARTITION BY p ORDER BY o, id) AS nt10
FROM w1 ORDER BY id;

-- descending order keys, NULLS LAST, two order keys
SELECT id, p, o, v,
  rank() OVER (PARTITION BY p ORDER BY o DESC NULLS LAST) AS rk,
  dense_rank() OVER (ORDER BY o DESC, v ASC NULLS LAST) AS drk,
  row_number() OVER (ORDER BY p DESC NULLS FIRST, id DESC) AS rn,
  percent_rank() OVER (ORDER BY v NULLS LAST) AS prk,
  cume_dist() OVER (PARTITION BY p ORDER BY v DESC) AS cd
FROM w1 ORDER BY id;

-- auto-generated column names
SELECT row_number() OVER (PARTITION BY p ORDER BY id), rank() OVER (ORDER BY o),
  sum(v) OVER (PARTITION BY p ORDER BY o), count(*) OVER (),
  lag(v) OVER (ORDER BY id), ntile(2) OVER (ORDER BY id)
FROM w1 ORDER BY 1, 2, 5;

SELECT sum(v) OVER (PARTITION BY p ORDER BY id ROWS BETWEEN 1 PRECEDING AND 2 FOLLOWING),
  avg(v) OVER (ORDER BY o RANGE BETWEEN 1 PRECEDING AND CURRENT ROW),
  min(v) OVER (ORDER BY id ROWS UNBOUNDED PRECEDING)
FROM w1 ORDER BY id;

-- offset functions
SELECT id, p, v,
  lag(v) OVER w AS lag1,
  lead(v) OVER w AS lead1,
  lag(v, 2, -1) OVER w AS lag2d,
  lead(v, 2, -1) OVER w AS lead2d,
  lag(v, -1) OVER w AS lagm1,
  lead(v, 0) OVER w AS lead0,
  lag(v, 1) IGNORE NULLS OVER w AS lag_in,
  lead(v, 1) IGNORE NULLS OVER w AS lead_in,
  lead(v, 2, 0) IGNORE NULLS OVER w AS lead2_in,
  nth_value(v, 2) OVER w AS nth2,
  nth_value(v, 2) IGNORE NULLS OVER w AS nth2_in,
  first_value(v) OVER w AS fv,
  last_value(v) OVER w AS lv,
  first_value(v, true) OVER w AS fv_in,
  last_value(v) IGNORE NULLS OVER w AS lv_in,
  first(v, true) OVER w AS first_in,
  last(v) OVER w AS last_rn
FROM w1
WINDOW w AS (PARTITION BY p ORDER BY id)
ORDER BY id;

-- offsets over whole partitions and frames
SELECT id, p, v,
  nth_value(v, 3) OVER (PARTITION BY p ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS nth3,
  nth_value(v, 1) IGNORE NULLS OVER (PARTITION BY p ORDER BY id ROWS BETWEEN 1 FOLLOWING AND 2 FOLLOWING) AS nth1f,
  first_value(v) OVER (PARTITION BY p ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) AS fv,
  last_value(v, true) OVER (PARTITION BY p ORDER BY id ROWS BETWEEN 2 PRECEDING AND 1 PRECEDING) AS lv,
  first_value(v) IGNORE NULLS OVER (PARTITION BY p) AS fv_part,
  lag(v, 1, v) OVER (PARTITION BY p ORDER BY id) AS lag_col_default,
  lead(CAST(v AS STRING), 1, 'none') OVER (ORDER BY id) AS lead_str
FROM w1 ORDER BY id;

-- ROWS frames
SELECT id, p, v,
  sum(v) OVER (PARTITION BY p ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS s_run,
  sum(v) OVER (PARTITION BY p ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) AS s_sl,
  sum(v) OVER (PARTITION BY p ORDER BY id ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) AS s_rest,
  sum(v) OVER (PARTITION BY p ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS s_all,
  count(v) OVER (PARTITION BY p ORDER BY id ROWS BETWEEN 3 PRECEDING AND 2 PRECEDING) AS c_before,
  sum(v) OVER (PARTITION BY p ORDER BY id ROWS BETWEEN 3 PRECEDING AND 2 PRECEDING) AS s_before,
  count(*) OVER (PARTITION BY p ORDER BY id ROWS BETWEEN 1 FOLLOWING AND 3 FOLLOWING) AS c_after,
  max(v) OVER (PARTITION BY p ORDER BY id ROWS BETWEEN 1 FOLLOWING AND 3 FOLLOWING) AS mx_after,
  min(v) OVER (PARTITION BY p ORDER BY id ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS mn,
  avg(d) OVER (PARTITION BY p ORDER BY id ROWS BETWEEN CURRENT ROW AND CURRENT ROW) AS a_cur,
  avg(v) OVER (PARTITION BY p ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS a_prev,
  sum(d) OVER (ORDER BY id ROWS BETWEEN 2 FOLLOWING AND UNBOUNDED FOLLOWING) AS s_tail
FROM w1 ORDER BY id;

-- ROWS frames with large offsets (beyond the partition)
SELECT id, p,
  count(*) OVER (PARTITION BY p ORDER BY id ROWS BETWEEN 1000 PRECEDING AND 2147483647 FOLLOWING) AS c1
FROM w1 ORDER BY id;

-- RANGE frames over integer keys with ties and NULL keys
SELECT id, p, o, v,
  sum(v) OVER (PARTITION BY p ORDER BY o) AS s_default,
  count(*) OVER (PARTITION BY p ORDER BY o RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS c_run,
  sum(v) OVER (PARTITION BY p ORDER BY o RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING) AS s_pm1,
  count(*) OVER (PARTITION BY p ORDER BY o RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) AS c_rest,
  count(*) OVER (PARTITION BY p ORDER BY o RANGE BETWEEN CURRENT ROW AND CURRENT ROW) AS c_peers,
  max(v) OVER (PARTITION BY p ORDER BY o RANGE BETWEEN 2 PRECEDING AND 1 PRECEDING) AS mx_before,
  sum(v) OVER (PARTITION BY p ORDER BY o RANGE BETWEEN 1 FOLLOWING AND 3 FOLLOWING) AS s_after,
  count(v) OVER (PARTITION BY p ORDER BY o RANGE BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS c_all
FROM w1 ORDER BY id;

-- RANGE frames over descending keys and NULLS LAST
SELECT id, p, o, v,
  sum(v) OVER (PARTITION BY p ORDER BY o DESC) AS s_desc,
  sum(v) OVER (PARTITION BY p ORDER BY o DESC RANGE BETWEEN 1 PRECEDING AND CURRENT ROW) AS s_desc_pm,
  count(*) OVER (PARTITION BY p ORDER BY o ASC NULLS LAST RANGE BETWEEN CURRENT ROW AND 2 FOLLOWING) AS c_nl,
  count(*) OVER (PARTITION BY p ORDER BY o DESC NULLS FIRST RANGE BETWEEN 3 PRECEDING AND 1 FOLLOWING) AS c_nf
FROM w1 ORDER BY id;

-- RANGE frames over double, bigint and decimal keys
SELECT id, d,
  count(*) OVER (ORDER BY d RANGE BETWEEN 1.5 PRECEDING AND 0.5 FOLLOWING) AS c_d,
  sum(v) OVER (ORDER BY d DESC RANGE BETWEEN 2.5 PRECEDING AND CURRENT ROW) AS s_d,
  count(*) OVER (ORDER BY CAST(v AS BIGINT) RANGE BETWEEN 10 PRECEDING AND 10 FOLLOWING) AS c_l,
  count(*) OVER (ORDER BY CAST(d AS DECIMAL(5, 1)) RANGE BETWEEN 1.0 PRECEDING AND CURRENT ROW) AS c_dec
FROM w1 ORDER BY id;

-- all-NULL frames and single-row partitions
SELECT id, p, v,
  sum(v) OVER (PARTITION BY p) AS s,
  avg(v) OVER (PARTITION BY p ORDER BY id) AS a,
  count(v) OVER (PARTITION BY p ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) AS c,
  min(d) OVER (PARTITION BY p ORDER BY o RANGE BETWEEN 1 PRECEDING AND CURRENT ROW) AS mn,
  first_value(v) IGNORE NULLS OVER (PARTITION BY p ORDER BY id) AS fv,
  lag(v) IGNORE NULLS OVER (PARTITION BY p ORDER BY id) AS lg
FROM w1 WHERE p IN ('c', 'd') ORDER BY id;

-- empty input
SELECT id, row_number() OVER (ORDER BY id), sum(v) OVER (PARTITION BY p), lag(v) OVER (ORDER BY id)
FROM w1 WHERE id > 100;

SELECT count(*), sum(rn) FROM (SELECT row_number() OVER (PARTITION BY p ORDER BY id) AS rn FROM w1 WHERE id > 100);

-- empty OVER, partition only
SELECT id, sum(v) OVER () AS s, count(*) OVER () AS c, max(o) OVER (PARTITION BY p) AS mx,
  avg(d) OVER (PARTITION BY p) AS a
FROM w1 ORDER BY id;

-- several window specs in one query and expressions over window results
SELECT id, p,
  v - lag(v) OVER (PARTITION BY p ORDER BY id) AS delta,
  sum(v) OVER (PARTITION BY p ORDER BY id) * 100 / sum(v) OVER (PARTITION BY p) AS pct,
  row_number() OVER (ORDER BY id DESC) + rank() OVER (PARTITION BY p ORDER BY o) AS mix
FROM w1 ORDER BY id;

-- windows over aggregates
SELECT p, sum(v) AS s,
  rank() OVER (ORDER BY sum(v) DESC NULLS LAST) AS rk,
  sum(sum(v)) OVER (ORDER BY p NULLS FIRST) AS running,
  count(*) OVER () AS groups
FROM w1 GROUP BY p ORDER BY p;

-- aggregates with DISTINCT and FILTER over windows
SELECT id, p,
  count(v) FILTER (WHERE v > 20) OVER (PARTITION BY p) AS cf,
  sum(v) FILTER (WHERE id % 2 = 0) OVER (PARTITION BY p ORDER BY id) AS sf
FROM w1 ORDER BY id;

SELECT id, count(DISTINCT o) OVER (PARTITION BY p) FROM w1 ORDER BY id;

-- top-k per partition (window group limit)
SELECT * FROM (
  SELECT id, p, v, row_number() OVER (PARTITION BY p ORDER BY v DESC NULLS LAST, id) AS rn FROM w1
) WHERE rn <= 2 ORDER BY id;

SELECT * FROM (
  SELECT id, p, o, rank() OVER (PARTITION BY p ORDER BY o) AS rk FROM w1
) WHERE rk < 2 ORDER BY id;

SELECT * FROM (
  SELECT id, p, o, dense_rank() OVER (ORDER BY o DESC) AS drk FROM w1
) WHERE drk <= 2 AND p IS NOT NULL ORDER BY id;

-- filters on partition keys above a window
SELECT * FROM (
  SELECT id, p, sum(v) OVER (PARTITION BY p ORDER BY id) AS s FROM w1
) WHERE p = 'a' ORDER BY id;

-- QUALIFY
SELECT id, p, v FROM w1 QUALIFY row_number() OVER (PARTITION BY p ORDER BY id) = 1 ORDER BY id;

SELECT id, p, v, sum(v) OVER (PARTITION BY p) AS s FROM w1 QUALIFY s > 100 ORDER BY id;

-- named windows
SELECT id, sum(v) OVER w1, count(*) OVER w2
FROM w1
WINDOW w1 AS (PARTITION BY p), w2 AS (PARTITION BY p ORDER BY id ROWS 1 PRECEDING)
ORDER BY id;

SELECT id, sum(v) OVER w2 FROM w1 WINDOW w1 AS (PARTITION BY p ORDER BY id), w2 AS w1 ORDER BY id;

-- window over a join and a union
SELECT a.id, b.id, row_number() OVER (PARTITION BY a.p ORDER BY b.id)
FROM w1 a JOIN w1 b ON a.o = b.o AND a.id < b.id ORDER BY a.id, b.id;

SELECT x, sum(x) OVER (ORDER BY x ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)
FROM (SELECT id AS x FROM w1 WHERE id < 4 UNION ALL SELECT id * 10 FROM w1 WHERE id < 3) ORDER BY x;

-- ANSI overflow in a window sum
SELECT sum(x) OVER (ORDER BY x ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)
FROM VALUES (9223372036854775807L), (1L), (2L) AS t(x);

-- analysis errors
SELECT id, row_number() FROM w1;

SELECT id, row_number() OVER (PARTITION BY p) FROM w1;

SELECT id, rank() OVER (PARTITION BY p ORDER BY id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM w1;

SELECT id, sum(v) OVER (PARTITION BY p ORDER BY o, id RANGE BETWEEN 1 PRECEDING AND CURRENT ROW) FROM w1;

SELECT id, sum(v) OVER (PARTITION BY p ORDER BY p RANGE BETWEEN 1 PRECEDING AND CURRENT ROW) FROM w1;

SELECT id, sum(v) OVER (PARTITION BY p ORDER BY id ROWS BETWEEN 1 FOLLOWING AND 1 PRECEDING) FROM w1;

SELECT id, count(*) OVER (ORDER BY id ROWS BETWEEN 5 PRECEDING AND 10 PRECEDING) FROM w1;

SELECT id, sum(v) OVER (PARTITION BY p ORDER BY id ROWS BETWEEN 1.5 PRECEDING AND CURRENT ROW) FROM w1;

SELECT id, sum(v) OVER (PARTITION BY p RANGE BETWEEN 1 PRECEDING AND CURRENT ROW) FROM w1;

SELECT id FROM w1 WHERE row_number() OVER (ORDER BY id) = 1;

SELECT p, count(*) FROM w1 GROUP BY p, row_number() OVER (ORDER BY id);

SELECT id, sum(row_number() OVER (ORDER BY id)) OVER () FROM w1;

SELECT id, sum(v) OVER w FROM w1;

SELECT id, ntile(0) OVER (ORDER BY id) FROM w1;

SELECT id, lag(v, id) OVER (ORDER BY id) FROM w1;
