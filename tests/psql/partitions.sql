-- Partitioned tables as psql describes them, and COPY routing rows.
create table pm (id int, at date not null, note text, primary key (id, at)) partition by range (at);
create table pm_2023 partition of pm for values from ('2023-01-01') to ('2024-01-01');
create table pm_2024 partition of pm for values from ('2024-01-01') to ('2025-01-01');
create table pm_rest partition of pm default;
create index on pm (note);
\d pm
\d+ pm
\d pm_2024
copy pm from stdin;
1	2023-05-01	spring
2	2024-02-29	leap
3	1999-12-31	party
\.
select tableoid::regclass, * from pm order by id;
copy pm to stdout;
copy (select * from pm where at >= '2024-01-01') to stdout;
\dt pm*
drop table pm;
