-- Materialized views through psql: \dm and \d.
create table base (id int primary key, g text, v int);
insert into base values (1, 'a', 10), (2, 'a', 20), (3, 'b', 5);
create materialized view totals as select g, sum(v) as total from base group by g;
create unique index totals_g on totals (g);
create materialized view later as select g from base with no data;
comment on materialized view totals is 'sums';
\dm
\d totals
refresh materialized view later;
select * from totals order by g;
