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
