-- Correlated subqueries Spark 4 decorrelates with domain joins (DecorrelateInnerQuery), lateral
-- subqueries outside join-lateral.sql, and unparenthesized inline tables.
-- Written for Ember (not a copy of a Spark file); expected results come from PySpark.

CREATE OR REPLACE TEMPORARY VIEW t0(t0a, t0b) AS VALUES (1, 10), (2, 20), (3, NULL), (NULL, 5);
CREATE OR REPLACE TEMPORARY VIEW t1(t1a, t1b, t1c) AS VALUES
  (1, 1, 5), (1, 2, 6), (2, 2, NULL), (3, 7, 4), (NULL, 1, 9), (4, 4, 1);
CREATE OR REPLACE TEMPORARY VIEW t2(t2a, t2b) AS VALUES (1, 100), (2, 200), (2, 201), (NULL, 300);

-- correlated scalar subqueries over derived tables
SELECT * FROM t0 WHERE t0a < (SELECT sum(c) FROM (SELECT t1c AS c FROM t1 WHERE t1a = t0a));
SELECT t0a, (SELECT sum(c) FROM (SELECT t1c + t0b AS c FROM t1 WHERE t1a = t0a)) s FROM t0;
SELECT t0a, (SELECT count(*) FROM (SELECT t1c FROM t1 WHERE t1a = t0a) d) n FROM t0;
SELECT t0a, (SELECT max(c) FROM (SELECT t1c AS c FROM t1 WHERE t1a > t0a)) m FROM t0;
-- over unions
SELECT t0a, (SELECT max(v) FROM (SELECT t1c AS v FROM t1 WHERE t1a = t0a
                                 UNION ALL SELECT t2b FROM t2 WHERE t2a = t0a)) m FROM t0;
SELECT t0a, (SELECT count(*) FROM (SELECT t1b FROM t1 WHERE t1a = t0a
                                   UNION SELECT t0b)) n FROM t0;
-- aggregates inside joins
SELECT t0a, (SELECT count(*) FROM t1 JOIN t2 ON t1a = t2a AND t2a = t0a) n FROM t0;
SELECT t0a, (SELECT sum(t2b) FROM t1 JOIN t2 ON t1a = t2a WHERE t1b = t0a) s FROM t0;
SELECT * FROM t0 WHERE EXISTS (SELECT t0b FROM t1 WHERE t1a = t0a);
SELECT * FROM t0 WHERE t0b IN (SELECT t1c * 2 + t0a FROM t1 WHERE t1a = t0a);
-- outer columns read by a subquery without FROM
SELECT c, (SELECT c) FROM VALUES (1), (2) AS t(c);
SELECT c, (SELECT c + 1 AS d) FROM VALUES (1), (NULL) AS t(c);
-- EXISTS in GROUP BY and in the select list of an aggregate
SELECT cast(EXISTS (SELECT t1c FROM t1 WHERE t1.t1a = t0.t0a) AS int) e, count(*)
FROM t0 GROUP BY cast(EXISTS (SELECT t1c FROM t1 WHERE t1.t1a = t0.t0a) AS int);
SELECT t0a, cast(EXISTS (SELECT 1 FROM t2 WHERE t2a = t0a) AS int) FROM t0 GROUP BY t0a;
-- lateral subqueries
SELECT * FROM t0, LATERAL (SELECT t0a + t0b AS s);
SELECT * FROM t0 LEFT JOIN LATERAL (SELECT t1c FROM t1 WHERE t1a = t0a ORDER BY t1c LIMIT 1) s;
SELECT * FROM t0 JOIN LATERAL (SELECT count(*) c, sum(t2b) s FROM t2 WHERE t2a >= t0a) x ON c > 1;
SELECT * FROM t0, LATERAL (SELECT t1b, count(*) n FROM t1 WHERE t1a = t0a GROUP BY t1b);
SELECT * FROM t0 RIGHT JOIN LATERAL (SELECT t0a AS x);
SELECT * FROM t0 FULL JOIN LATERAL (SELECT t0a AS x) ON true;
-- unparenthesized inline tables
SELECT * FROM VALUES 0, 1, 2 AS t(id);
SELECT * FROM VALUES 1, 2 AS t;
CREATE OR REPLACE TEMPORARY VIEW v AS VALUES 1 AS T(c1);
SELECT * FROM v;
CREATE OR REPLACE TEMPORARY VIEW v2 AS VALUES 'a', 'b' AS T(s);
SELECT * FROM v2;
