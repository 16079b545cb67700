-- Arrays, maps and structs: collection functions, generators and higher-order functions, with
-- NULLs, empty collections and the errors Spark raises (the areas of Spark's array.sql, map.sql,
-- generators.sql and higher-order-functions.sql). Written for Ember (not a copy of a Spark file);
-- expected results come from PySpark.

CREATE OR REPLACE TEMPORARY VIEW nest AS SELECT * FROM VALUES
(1, array(1, 2, 3), array(array(11, 12), array(13)), map('a', 1, 'b', 2), named_struct('x', 1, 'y', 'p')),
(2, array(4, NULL), array(array(), NULL), map('c', NULL), named_struct('x', NULL, 'y', 'q')),
(3, array(), array(), map(), NULL),
(4, NULL, NULL, NULL, named_struct('x', 4, 'y', NULL))
AS nest(id, a, aa, m, s);

SELECT id, a[0], a[1] + a[0], aa[0][1], m['a'], s.x, s.y FROM nest;
SELECT id, array_contains(a, 2), array_position(a, 3), array_remove(a, 1), array_distinct(array_union(a, a)) FROM nest;
SELECT id, sort_array(a), sort_array(a, false), array_sort(a), array_max(a), array_min(a), size(a), cardinality(m) FROM nest;
SELECT id, slice(a, 2, 2), slice(a, -1, 1), flatten(aa), array_join(a, ',', 'null'), array_join(a, '-') FROM nest;
SELECT id, element_at(a, 1), element_at(a, -1), try_element_at(a, 10), element_at(m, 'a'), try_element_at(m, 'zz') FROM nest;
SELECT element_at(array(1, 2, 3), 5);
SELECT element_at(array(1, 2, 3), 0);
SELECT array(1, 2, 3)[5];
SELECT id, array_append(a, 9), array_prepend(a, 0), array_insert(a, 2, 7), array_insert(a, -1, 7), array_compact(a), array_size(a) FROM nest;
SELECT array_insert(array(1, 2), 0, 3);
SELECT array_repeat('ab', 3), array_repeat(1, -1), array_repeat(array(1), 2);
SELECT id, arrays_overlap(a, array(3, 5)), arrays_overlap(a, array(7)), arrays_zip(a, array('x', 'y')) FROM nest;
SELECT id, array_intersect(a, array(1, NULL)), array_except(a, array(2)), array_union(a, array(NULL)) FROM nest;
SELECT sequence(1, 5), sequence(5, 1), sequence(1, 10, 3), sequence(-2, 2, 2);
SELECT sequence(1, 5, -1);
SELECT id, map_keys(m), map_values(m), map_entries(m), map_contains_key(m, 'a') FROM nest;
SELECT map_concat(map(1, 'a'), map(2, 'b')), map_from_arrays(array(1, 2), array('a', 'b')), map_from_entries(array(struct(1, 'a'), struct(2, 'b')));
SELECT map(1, 'a', 1, 'b');
SELECT map_from_arrays(array(1, NULL), array('a', 'b'));
SELECT map_concat(map(1, 'a'), map(1, 'b'));
SELECT str_to_map('a:1,b:2,c'), str_to_map('a=1&b=2', '&', '='), str_to_map(NULL);
SELECT str_to_map('a:1,a:2');
SELECT m = m FROM nest;
SELECT id FROM nest ORDER BY m;
SELECT id, explode(a) FROM nest;
SELECT id, explode_outer(a) FROM nest;
SELECT id, posexplode(a) FROM nest;
SELECT id, explode(m) AS (k, v) FROM nest;
SELECT id, posexplode_outer(m) FROM nest;
SELECT inline(array(struct(1, 'a'), struct(2, 'b')));
SELECT inline_outer(CAST(NULL AS ARRAY<STRUCT<a: INT, b: STRING>>));
SELECT stack(2, 1, 'a', 2, 'b'), stack(3, 1, 2);
SELECT id, v FROM nest LATERAL VIEW explode(a) t AS v;
SELECT id, v FROM nest LATERAL VIEW OUTER explode(a) t AS v;
SELECT id, k, v FROM nest LATERAL VIEW explode(m) t AS k, v;
SELECT id, p, c FROM nest LATERAL VIEW posexplode(a) t AS p, c;
SELECT explode(a) + 1 FROM nest;
SELECT id FROM nest WHERE explode(a) = 1;
SELECT explode(a), explode(a) FROM nest;
SELECT json_tuple('{"a": 1, "b": [2]}', 'a', 'b', 'c');
SELECT id, transform(a, x -> x * 2), transform(a, (x, i) -> x + i), filter(a, x -> x > 1), filter(a, (x, i) -> i = 0) FROM nest;
SELECT id, exists(a, x -> x = 2), forall(a, x -> x > 0), exists(a, x -> x IS NULL) FROM nest;
SELECT id, aggregate(a, 0, (acc, x) -> acc + coalesce(x, 0)), aggregate(a, 0L, (acc, x) -> acc + x, acc -> acc * 10), reduce(a, 1, (acc, x) -> acc * coalesce(x, 1)) FROM nest;
SELECT id, zip_with(a, array(10, 20), (x, y) -> coalesce(x, 0) + coalesce(y, 0)), transform(aa, b -> size(b)) FROM nest;
SELECT id, map_filter(m, (k, v) -> v > 1), transform_keys(m, (k, v) -> upper(k)), transform_values(m, (k, v) -> v * 10) FROM nest;
SELECT id, map_zip_with(m, map('a', 100), (k, v1, v2) -> coalesce(v1, 0) + coalesce(v2, 0)) FROM nest;
SELECT transform_keys(map(1, 'a', 2, 'b'), (k, v) -> 0);
SELECT transform(array(1), (x, y, z) -> x);
SELECT transform(array(1), (x, x) -> x);
SELECT filter(array(1), x -> x);
SELECT aggregate(array(1, 2), 0, (acc, x) -> acc + x, acc -> acc / 0);
SELECT id, from_json(to_json(s), 'x INT, y STRING'), to_json(a), to_json(m), schema_of_json('[{"a": 1}]') FROM nest;
SELECT id, hash(a), xxhash64(s), hash(aa, s) FROM nest;
SELECT hash(m) FROM nest;
SELECT a, count(*) FROM nest GROUP BY a;
SELECT s, count(*) FROM nest GROUP BY s;
SELECT DISTINCT aa FROM nest;
SELECT x.id, y.id FROM nest x JOIN nest y ON x.a = y.a;
SELECT id, a < array(1, 3), s > named_struct('x', 2, 'y', 'a') FROM nest;
