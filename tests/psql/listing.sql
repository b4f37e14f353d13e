-- psql's listing meta-commands (\dt, \di, \dv, \ds, \dn with and without
-- patterns), which query pg_class, pg_namespace, pg_am and pg_index with
-- regular expressions.
create table ll (id serial primary key, name text not null);
create index ll_name on ll (name);
create table lm (k text primary key, ll_id int references ll);
create view lv as select id, name from ll;
\dt
\di
\dv
\ds
\dn
\dt l*
\di ll_*
\dt nosuch
\d nosuch
drop view lv;
drop table lm;
drop table ll;
\dt
