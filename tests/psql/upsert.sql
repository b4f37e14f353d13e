-- INSERT ... ON CONFLICT on the primary key, checked against PostgreSQL.
create table kv (k text primary key, v int not null, hits int default 0);
insert into kv values ('a', 1), ('b', 2);
insert into kv values ('a', 10) on conflict do nothing;
insert into kv values ('a', 10), ('c', 3) on conflict (k) do nothing returning k, v;
insert into kv values ('a', 100) on conflict (k) do update set v = excluded.v, hits = kv.hits + 1 returning *;
insert into kv as t values ('b', 5) on conflict on constraint kv_pkey do update set v = t.v + excluded.v where t.v < 3;
insert into kv values ('b', 5) on conflict (k) do update set v = kv.v + excluded.v where kv.v < 3;
insert into kv values ('d', 1), ('d', 2) on conflict (k) do update set v = excluded.v;
insert into kv values ('e', 1) on conflict (v) do nothing;
insert into kv values ('e', 1) on conflict do update set v = 0;
select * from kv order by k;
drop table kv;
