-- Output column names and bare names in ORDER BY, as PostgreSQL derives
-- and resolves them.
drop table if exists nm;
create table nm (id int, k int, v text);
insert into nm values (1, 10, 'b'), (2, 9, 'a'), (3, 100, 'c');
-- CASE is named by its ELSE branch when that has a name of its own.
select case when id > 1 then k else id end from nm order by 1;
select case when id > 1 then k end from nm order by 1;
select case when id > 1 then 'x' else 'y'::text end from nm order by 1;
select case id when 1 then v else upper(v) end from nm order by 1;
select case when id > 1 then k else case when id = 1 then id end end from nm order by 1;
select cast(case when id > 1 then k else 0 end as text) from nm order by 1;
select cast(case when id > 1 then k else id end as text) from nm order by 1;
-- A bare ORDER BY name is an output column's before an input column's.
select cast(k as text) from nm order by k;
select k::text as k from nm order by k desc;
select v as k from nm order by k;
select k, k from nm order by k;
select id as k2 from nm order by k;
select v as k, k from nm order by nm.k;
select * from nm order by k;
select distinct on (k) k::text as k, id from nm order by k;
-- Two output columns of that name with different expressions: 42702.
select v as k, k from nm order by k;
select id as x, k as x from nm order by x;
select distinct on (x) id as x, k as x from nm;
drop table nm;
