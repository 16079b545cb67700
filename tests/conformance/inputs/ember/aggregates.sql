-- The aggregate library: statistical, bitwise, boolean, collection and percentile aggregates with
-- NULLs, single-row and empty groups; plain, grouped, with DISTINCT and FILTER.
-- Written for Ember (not a copy of a Spark file); expected results come from PySpark.

CREATE OR REPLACE TEMPORARY VIEW ag AS SELECT * FROM VALUES
('a', 1, 1.5D, 10L, 'x', true),
('a', 2, 2.5D, 12L, 'y', true),
('a', 4, NULL, 7L, 'x', false),
('a', NULL, 0.5D, NULL, NULL, NULL),
('a', 8, 4.0D, 3L, 'z', true),
('b', 5, 5.0D, -1L, 'w', false),
('b', NULL, NULL, NULL, NULL, NULL),
('c', 3, 3.0D, 6L, 'v', true),
('c', 3, 3.0D, 6L, 'v', true),
('c', 9, -2.0D, 255L, 'u', true),
('c', -6, 7.25D, 1L, 't', false),
(NULL, 7, 1.0D, 5L, 's', true)
AS ag(g, x, y, b, s, bo);

-- variance family
SELECT g, stddev(x), stddev_samp(y), stddev_pop(x), variance(y), var_samp(x), var_pop(y), std(x)
FROM ag GROUP BY g ORDER BY g;

SELECT stddev(x), stddev_samp(y), stddev_pop(x), variance(y), var_samp(x), var_pop(y) FROM ag;

SELECT g, skewness(x), kurtosis(y), skewness(y), kurtosis(x) FROM ag GROUP BY g ORDER BY g;

SELECT stddev(CAST(x AS DECIMAL(10, 2))), var_pop(b), stddev_pop(CAST(x AS TINYINT)) FROM ag;

-- two-column statistics
SELECT g, covar_samp(x, y), covar_pop(x, y), corr(x, y), corr(b, y) FROM ag GROUP BY g ORDER BY g;

SELECT g, regr_count(y, x), regr_avgx(y, x), regr_avgy(y, x), regr_slope(y, x), regr_intercept(y, x),
  regr_r2(y, x), regr_sxx(y, x), regr_sxy(y, x), regr_syy(y, x)
FROM ag GROUP BY g ORDER BY g;

SELECT covar_samp(x, y), covar_pop(x, y), corr(x, y), regr_slope(y, x), regr_r2(b, x) FROM ag;

-- bitwise and boolean aggregates
SELECT g, bit_and(x), bit_or(x), bit_xor(x), bit_and(b), bit_or(b), bit_xor(b) FROM ag GROUP BY g ORDER BY g;

SELECT bit_and(CAST(x AS TINYINT)), bit_or(CAST(x AS SMALLINT)), bit_xor(b) FROM ag;

SELECT g, bool_and(bo), bool_or(bo), every(bo), some(bo), any(bo), count_if(bo), count_if(x > 2)
FROM ag GROUP BY g ORDER BY g;

-- max_by / min_by / any_value
SELECT g, max_by(s, b), min_by(s, b), max_by(x, y), min_by(y, x) FROM ag WHERE g <> 'c' GROUP BY g ORDER BY g;

SELECT g, any_value(g), any_value(x) FILTER (WHERE x = 5) FROM ag GROUP BY g ORDER BY g;

-- collections (sorted where Spark's order is not defined)
SELECT g, sort_array(collect_list(x)), sort_array(collect_set(x)), size(collect_list(s)),
  sort_array(array_agg(s)), sort_array(collect_set(bo))
FROM ag GROUP BY g ORDER BY g;

SELECT sort_array(collect_set(y)), size(collect_list(y)), size(collect_set(b)) FROM ag;

SELECT g, collect_list(x) FROM (SELECT g, x FROM ag WHERE g = 'b') GROUP BY g;

-- percentiles, median and mode
SELECT g, percentile(x, 0.5), percentile(x, 0.25), percentile(y, array(0.1, 0.5, 0.9)), median(x), median(y)
FROM ag GROUP BY g ORDER BY g;

SELECT percentile(x, 0), percentile(x, 1), percentile(b, 0.3), median(b), percentile(DISTINCT x, 0.5) FROM ag;

SELECT g, percentile_approx(x, 0.5), percentile_approx(y, array(0.25, 0.75), 100), approx_percentile(b, 0.9)
FROM ag GROUP BY g ORDER BY g;

SELECT percentile_approx(x, 0.5, 10000), percentile_approx(CAST(y AS DECIMAL(5, 2)), 0.5),
  percentile_approx(date_add(DATE'2024-01-01', x), 0.5)
FROM ag;

SELECT g, mode(x), mode(s) FROM ag WHERE g IN ('b', 'c') GROUP BY g ORDER BY g;

SELECT percentile_cont(0.25) WITHIN GROUP (ORDER BY x), percentile_disc(0.25) WITHIN GROUP (ORDER BY x),
  median(x)
FROM ag;

-- approximate count distinct (small cardinalities are exact)
SELECT g, approx_count_distinct(x), approx_count_distinct(s, 0.05), approx_count_distinct(y)
FROM ag GROUP BY g ORDER BY g;

SELECT approx_count_distinct(x), approx_count_distinct(b), count(DISTINCT x) FROM ag;

-- listagg / string_agg
SELECT g, listagg(s, ',') WITHIN GROUP (ORDER BY s), string_agg(s, '|') WITHIN GROUP (ORDER BY s DESC)
FROM ag GROUP BY g ORDER BY g;

SELECT listagg(DISTINCT s) WITHIN GROUP (ORDER BY s), listagg(s, '-') WITHIN GROUP (ORDER BY x, s) FROM ag;

-- empty input: every aggregate over no rows
SELECT stddev(x), var_pop(y), corr(x, y), regr_count(y, x), bit_and(x), bool_or(bo), count_if(bo),
  collect_list(x), collect_set(s), percentile(x, 0.5), percentile_approx(x, 0.5), median(x), mode(x),
  approx_count_distinct(x), max_by(x, y), listagg(s)
FROM ag WHERE x > 100;

SELECT g, stddev(x), collect_list(x), approx_count_distinct(x) FROM ag WHERE x > 100 GROUP BY g;

-- DISTINCT and FILTER
SELECT g, stddev(DISTINCT x), var_samp(x) FILTER (WHERE x > 1), sort_array(collect_list(DISTINCT x)),
  count_if(bo) FILTER (WHERE x < 5)
FROM ag GROUP BY g ORDER BY g;

-- numeric edge cases
SELECT stddev(x), var_samp(x), skewness(x), kurtosis(x), corr(x, x) FROM VALUES (1e308), (-1e308), (1e308) AS t(x);

SELECT var_pop(x), stddev_samp(x), corr(x, y) FROM VALUES (5, 1), (5, 2), (5, 3) AS t(x, y);

SELECT bit_xor(x), bit_or(x), bit_and(x) FROM VALUES (9223372036854775807L), (-1L), (-9223372036854775808L) AS t(x);

-- errors
SELECT percentile(x, 1.5) FROM ag;

SELECT percentile_approx(x, 0.5, 0) FROM ag;

SELECT corr(s, x) FROM ag;

SELECT bit_and(y) FROM ag;

SELECT bool_and(x) FROM ag;
