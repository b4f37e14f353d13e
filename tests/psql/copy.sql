-- COPY in text and CSV, from psql's \copy and COPY ... TO STDOUT.
create table cp (id int primary key, name text, score numeric(5,2), note varchar(20));
\copy cp from stdin
1	alpha	1.50	first
2	beta	\N	tab\there
3	gamma	-2.25	back\\slash
\.
\copy cp from stdin with (format csv)
4,"delta, with comma",3.00,"quote "" inside"
5,,0,
\.
select * from cp order by id;
copy cp to stdout;
copy cp (id, name) to stdout with (format csv, header);
copy cp to stdout with csv;
\copy cp from stdin
6	too	many	fields	here
\.
select count(*) from cp;
drop table cp;
-- COPY (query) TO STDOUT, in text, CSV with a header, and through \copy.
copy (select 1 as a, 'x,y' as b union all select 2, null order by a) to stdout with (format csv, header);
copy (select g, g * 2 as double from generate_series(1, 3) g) to stdout;
\copy (select 'tab	and\newline' as s) to stdout
copy (select 1) from stdin;
