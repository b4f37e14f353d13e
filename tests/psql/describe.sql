-- psql's describe meta-commands, which query pg_catalog.
create table dd (id int primary key, name varchar(10) not null, v numeric(5,2), at timestamptz default now());
create index dd_name on dd (name);
create table ee (k text primary key);
\dt
\d dd
\di
\d ee
\dt nosuch
drop table dd;
drop table ee;
