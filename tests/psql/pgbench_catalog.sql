-- pgbench's partition-detection query, answered from the catalog.
create table pgbench_accounts (aid int primary key, bid int, abalance int, filler char(84));
select o.n, p.partstrat, pg_catalog.count(i.inhparent) from pg_catalog.pg_class as c join pg_catalog.pg_namespace as n on (n.oid = c.relnamespace) cross join lateral (select pg_catalog.array_position(pg_catalog.current_schemas(true), n.nspname)) as o(n) left join pg_catalog.pg_partitioned_table as p on (p.partrelid = c.oid) left join pg_catalog.pg_inherits as i on (c.oid = i.inhparent) where c.relname = 'pgbench_accounts' and o.n is not null group by 1, 2 order by 1 asc limit 1;
select relname, relkind from pg_class where relname like 'pgbench%' order by 1;
select count(*) from pg_namespace where nspname in ('public', 'pg_catalog');
drop table pgbench_accounts;
