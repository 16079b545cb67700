-- Portions Copyright (c) 1996-2019, PostgreSQL Global Development Group
--
-- INSERT
-- https://github.com/postgres/postgres/blob/REL_12_STABLE/src/test/regress/sql/insert.sql
-- (the statements of Spark's postgreSQL/insert.sql; its commented-out PostgreSQL statements,
-- which Spark does not run, are left out)

create table inserttest (col1 int, col2 int /* NOT NULL */, col3 string /* default 'testing' */) using parquet;
insert into inserttest  values (NULL, 3, 'testing');
insert into inserttest values (NULL, 5, 'testing');
insert into inserttest values (NULL, 5, 'test');
insert into inserttest values (NULL, 7, 'testing');

select * from inserttest;

insert into inserttest values(30, 50, repeat('x', 10000));

select col1, col2, char_length(col3) from inserttest;

drop table inserttest;
