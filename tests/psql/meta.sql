-- psql meta-commands: \timing (masked), \x expanded output, \pset null,
-- several statements on one line, \echo, and errors with LINE/caret.
\timing on
create table meta (id int primary key, name text, note varchar(10));
insert into meta values (1, 'first', null), (2, 'second', 'x');
select * from meta order by id;
\timing off
\pset null '<null>'
select * from meta order by id;
\x on
select id, name, note from meta order by id;
select count(*) as n from meta where id > 10;
\x off
\x auto
select 1 as one;
\x off
\echo between statements
select 1 as a; select 2 as b; insert into meta values (3, 'third', 'y');
select name
  from meta
 where nosuch = 1;
select id, name,
       note::int from meta;
begin;
update meta set name = upper(name) where id < 3 returning id, name;
select name from meta order by id;
rollback;
select name from meta order by id;
drop table meta;
