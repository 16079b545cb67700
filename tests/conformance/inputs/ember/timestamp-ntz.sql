-- TIMESTAMP_NTZ beyond Spark's timestamp-ntz.sql: casts to and from strings, dates and
-- timestamps in a non-UTC session time zone (America/Los_Angeles, across the 2024-03-10
-- spring-forward gap), comparisons, arithmetic with intervals, the datetime functions that
-- take an NTZ, the *_ntz / *_ltz constructors, CalendarInterval casts and make_interval.
-- Written for Ember (not a copy of a Spark file); expected results come from PySpark.
--SET spark.sql.session.timeZone=America/Los_Angeles

CREATE OR REPLACE TEMPORARY VIEW n AS SELECT id, CAST(s AS TIMESTAMP_NTZ) AS t, s FROM VALUES
(1, '2024-03-10 02:30:00'), (2, '2024-01-31 23:59:59.123456'), (3, '1969-12-31 23:59:59.5'),
(4, '2024-03-10T01:00:00+05:00'), (5, NULL) AS v(id, s);

SELECT id, t, CAST(t AS STRING), CAST(t AS DATE), CAST(t AS TIMESTAMP), CAST(CAST(t AS TIMESTAMP) AS TIMESTAMP_NTZ) FROM n ORDER BY id;
SELECT id, t + INTERVAL 2 HOURS, t - INTERVAL '1' DAY, t + INTERVAL '1' MONTH, t - TIMESTAMP_NTZ '2024-01-01 00:00:00', t - DATE '2024-01-01' FROM n ORDER BY id;
SELECT id, hour(t), minute(t), second(t), year(t), month(t), dayofmonth(t), date_trunc('HOUR', t), date_trunc('MONTH', t), date_format(t, 'yyyy-MM-dd HH:mm:ss.SSS') FROM n ORDER BY id;
SELECT id, t = TIMESTAMP '2024-03-10 02:30:00', t < DATE '2024-02-01', greatest(t, TIMESTAMP_NTZ '2024-01-01 00:00:00'), coalesce(t, DATE '2000-01-01') FROM n ORDER BY id;
SELECT min(t), max(t), count(DISTINCT t) FROM n;
SELECT to_timestamp_ntz(s), to_timestamp_ltz(s), to_timestamp_ntz(t), to_timestamp_ltz(t), to_timestamp_ntz('2024/03/10 02:30', 'yyyy/MM/dd HH:mm') FROM n WHERE id = 1;
SELECT make_timestamp_ntz(2024, 3, 10, 2, 30, 0), make_timestamp_ltz(2024, 3, 10, 2, 30, 0), make_timestamp_ltz(2024, 3, 10, 2, 30, 0, 'UTC'), make_timestamp_ntz(2024, 2, 29, 23, 59, 60);
SELECT try_make_timestamp_ntz(2024, 2, 30, 0, 0, 0), try_make_timestamp_ltz(2024, 13, 1, 0, 0, 0), try_make_timestamp_ntz(2024, 1, 1, 0, 0, 60.5);
SELECT make_timestamp_ntz(2024, 2, 30, 0, 0, 0);
SELECT CAST('2024-13-01 00:00:00' AS TIMESTAMP_NTZ);
SELECT CAST(TIMESTAMP_NTZ '2024-01-01 00:00:00' AS BIGINT);
SELECT typeof(TIMESTAMP_NTZ '2024-01-01 00:00:00'), typeof(localtimestamp()), localtimestamp() IS NOT NULL;
SELECT CAST('1 day 2 hours 3.5 seconds' AS INTERVAL), CAST(make_interval(1, 2, 3, 4, 5, 6, 7.5) AS STRING), typeof(make_interval(1)), try_make_interval(2147483647, 12);
SELECT CAST('bad' AS INTERVAL), CAST(CAST('-3 months 1 week' AS INTERVAL) AS STRING);
