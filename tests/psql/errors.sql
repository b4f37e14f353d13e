-- Errors print PostgreSQL's messages, with the caret at the position.
create table e (id int primary key, v int not null);
insert into e values (1, 1);
insert into e values (1, 2);
insert into e values (2, null);
select * from nosuch;
select nosuch from e;
selec 1;
select * from e where;
select 1/0;
select 'x'::int;
select 32768::int2;
begin;
select 1/0;
select 1;
rollback;
select count(*) from e;
drop table e;
-- DROP TABLE refused: the views reading it are listed before the foreign
-- keys referencing it.
create table dt_parent (id int primary key);
create view dt_v as select * from dt_parent;
create view dt_v2 as select * from dt_v;
create table dt_child (pid int references dt_parent);
drop table dt_parent;
drop table dt_parent cascade;
drop table dt_child;
-- CONCURRENTLY index statements cannot run in a transaction block.
create table dt_i (x int);
begin;
create index concurrently dt_i_x on dt_i (x);
rollback;
begin;
drop index concurrently if exists dt_i_x;
rollback;
create index concurrently dt_i_x on dt_i (x);
drop index concurrently dt_i_x;
drop index concurrently if exists dt_i_x;
drop table dt_i;
