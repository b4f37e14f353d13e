-- Everyday psql use: DDL, DML, queries, aligned and expanded output.
drop table if exists items;
create table items (id int primary key, name varchar(20) not null, price numeric(8,2), tag char(4), added date);
insert into items values (1, 'apple', 1.25, 'frt', '2024-01-05'), (2, 'bread', 2.5, 'bak', '2024-02-10'), (3, 'cheese', null, null, null);
select * from items order by id;
select name, price * 2 as double_price from items where price is not null order by price desc;
select count(*), sum(price), avg(price), min(added), max(name) from items;
update items set price = price + 0.10 where id = 1 returning id, price;
delete from items where id = 3;
select id, name, length(tag) from items order by 1;
\x on
select * from items where id = 2;
\x off
select 1 as a, 'two' as b; select 3 as c;
begin;
insert into items values (4, 'dates', 3, 'frt', '2024-03-01');
select count(*) from items;
rollback;
select count(*) from items;
start transaction read only;
commit;
begin transaction;
end;
select 10 / 4, 10 / 4.0, 7 % 3, -5 / 2, 2 ^ 3 is null;
drop table items;
