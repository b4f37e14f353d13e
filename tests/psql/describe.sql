-- psql's describe meta-commands, which query pg_catalog.
create table dd (id int primary key, name varchar(10) not null, v numeric(5,2), at timestamptz default now());
create index dd_name on dd (name);
create table ee (k text primary key);
create table ff (id bigserial primary key, dd_id int not null references dd (id) on delete cascade,
  code char(3) unique, qty int check (qty > 0), tags text[], flag boolean default true);
\dt
\d dd
\di
\d ee
\d ff
\dt nosuch
drop table ff;
drop table dd;
drop table ee;
