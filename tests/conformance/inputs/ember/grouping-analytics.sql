-- GROUPING SETS, ROLLUP and CUBE with NULL keys, grouping() / grouping_id(), HAVING and ORDER BY
-- over them, distinct aggregates and windows on top.
-- Written for Ember (not a copy of a Spark file); expected results come from PySpark.

CREATE OR REPLACE TEMPORARY VIEW g AS SELECT * FROM VALUES
('a', 1, 10, 1),
('a', 1, NULL, 2),
('a', 2, 20, 3),
('b', 1, 10, 4),
('b', NULL, NULL, 5),
(NULL, 1, 10, 6),
(NULL, NULL, NULL, 7),
('b', 2, 20, NULL)
AS g(k1, k2, k3, v);

-- NULL keys in the data vs NULLs of rolled-up keys
SELECT k1, k2, sum(v), count(*), grouping(k1), grouping(k2), grouping_id()
FROM g GROUP BY ROLLUP(k1, k2) ORDER BY grouping_id(), k1, k2;

SELECT k1, k2, sum(v) AS s, count(v) AS c, grouping_id(k1, k2) AS gid
FROM g GROUP BY CUBE(k1, k2) ORDER BY gid, k1 NULLS LAST, k2 NULLS LAST;

SELECT k1, k2, k3, sum(v), grouping_id(), grouping(k3)
FROM g GROUP BY GROUPING SETS ((k1, k2), (k1), (k2, k3), ()) ORDER BY 5, 1, 2, 3;

SELECT k1, k2, grouping_id(k2, k1) FROM g GROUP BY CUBE(k1, k2);

SELECT k1, k2, k3, count(*) FROM g GROUP BY CUBE(k1, k2, k3);

-- composite and mixed forms
SELECT k1, k2, k3, sum(v) FROM g GROUP BY ROLLUP(k1, (k2, k3));

SELECT k1, k2, k3, sum(v), grouping_id() FROM g GROUP BY k1, ROLLUP(k2, k3);

SELECT k1, k2, k3, sum(v) FROM g GROUP BY CUBE(k1), ROLLUP(k2, k3);

SELECT k1, k2, sum(v) FROM g GROUP BY GROUPING SETS (ROLLUP(k1, k2), CUBE(k2));

-- expressions and ordinals as keys
SELECT upper(k1) AS u, k2 + 1 AS k, sum(v) FROM g GROUP BY ROLLUP(upper(k1), k2 + 1);

SELECT k1, k2, sum(v) FROM g GROUP BY ROLLUP(1, 2);

SELECT k1, coalesce(k2, -1) AS k2c, max(v) FROM g GROUP BY CUBE(k1, coalesce(k2, -1)) ORDER BY 1, 2;

-- HAVING over grouping analytics
SELECT k1, k2, sum(v) AS s FROM g GROUP BY ROLLUP(k1, k2) HAVING grouping(k2) = 1;

SELECT k1, k2, sum(v) AS s FROM g GROUP BY CUBE(k1, k2) HAVING sum(v) > 5 AND grouping_id() < 3;

SELECT k1, count(*) FROM g GROUP BY ROLLUP(k1) HAVING k1 IS NULL;

SELECT k1, k2 FROM g GROUP BY GROUPING SETS ((k1), (k2)) HAVING grouping_id(k1, k2) = 2 OR max(v) = 7;

-- ORDER BY over grouping analytics
SELECT k1, k2, sum(v) FROM g GROUP BY ROLLUP(k1, k2) ORDER BY grouping(k1) DESC, grouping(k2), k1 DESC NULLS FIRST, k2;

SELECT k1, sum(v) AS s FROM g GROUP BY CUBE(k1) ORDER BY s DESC NULLS LAST, grouping_id();

-- distinct aggregates and FILTER with grouping sets
SELECT k1, k2, count(DISTINCT k3), sum(DISTINCT v), count(*) FROM g GROUP BY ROLLUP(k1, k2);

SELECT k1, count(DISTINCT k2), count(DISTINCT k3) FROM g GROUP BY CUBE(k1);

SELECT k1, k2, sum(v) FILTER (WHERE v > 2), count(*) FILTER (WHERE k3 IS NULL) FROM g GROUP BY CUBE(k1, k2);

-- aggregate arguments that are grouping keys
SELECT k1, k2, max(k2), count(k1) FROM g GROUP BY ROLLUP(k1, k2);

-- windows over grouping analytics
SELECT k1, k2, sum(v) AS s,
  rank() OVER (PARTITION BY grouping_id() ORDER BY sum(v) DESC NULLS LAST, k1, k2) AS rk
FROM g GROUP BY ROLLUP(k1, k2) ORDER BY grouping_id(), rk;

-- empty input: grouping sets with () give one grand-total row
SELECT k1, k2, sum(v), count(*) FROM g WHERE v > 100 GROUP BY ROLLUP(k1, k2);

SELECT k1, sum(v), count(*) FROM g WHERE v > 100 GROUP BY CUBE(k1);

SELECT k1, sum(v) FROM g WHERE v > 100 GROUP BY GROUPING SETS ((k1));

-- GROUP BY ALL
SELECT k1, k2, sum(v) FROM g GROUP BY ALL ORDER BY 1, 2;

SELECT k1, count(*) AS c, grouping(k1) FROM g GROUP BY ROLLUP(k1) ORDER BY c;

-- keys of other types
SELECT d, b, count(*) FROM (
  SELECT CAST(v AS DECIMAL(10, 2)) / 4 AS d, v % 2 = 0 AS b FROM g
) GROUP BY CUBE(d, b);

SELECT dt, sum(v) FROM (SELECT date_add(DATE'2024-01-01', v % 3) AS dt, v FROM g) GROUP BY ROLLUP(dt);

-- errors
SELECT k1, grouping(v) FROM g GROUP BY ROLLUP(k1);

SELECT k1, grouping_id(k2) FROM g GROUP BY CUBE(k1);

SELECT k1, v FROM g GROUP BY ROLLUP(k1);

SELECT k1, sum(v) FROM g GROUP BY ROLLUP(k1, 3);
