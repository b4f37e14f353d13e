-- A deferred foreign key fails the implicit COMMIT of a one-statement
-- query before its CommandComplete: psql prints the error alone.
create table dp (id int primary key);
create table dc (id int primary key, p int references dp deferrable initially deferred);
insert into dc values (1, 7);
select count(*) from dc;
begin;
insert into dc values (2, 8);
commit;
insert into dp values (9); insert into dc values (3, 9);
select count(*) from dc;
