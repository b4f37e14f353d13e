-- Transactions through psql: commit, rollback, an aborted block, and
-- statements after the block.
create table acct (id int primary key, bal int not null);
insert into acct values (1, 100), (2, 0);
begin;
update acct set bal = bal - 40 where id = 1;
update acct set bal = bal + 40 where id = 2;
commit;
select * from acct order by id;
begin;
delete from acct;
select count(*) from acct;
rollback;
select count(*) from acct;
begin;
insert into acct values (3, 3);
insert into acct values (1, 1);
insert into acct values (4, 4);
select 1;
commit;
select * from acct order by id;
commit;
rollback;
begin;
begin;
commit;
drop table acct;
