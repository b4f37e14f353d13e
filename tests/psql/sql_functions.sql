-- SQL functions made by CREATE FUNCTION as psql lists and shows them.
create table scores (id int primary key, name text, score int);
create function add_one(x integer) returns integer language sql immutable strict as 'select x + 1';
create function add_two(int, int default 2) returns int language sql as $$ select $1 + $2 $$;
create function best(n int) returns setof scores language sql stable as $$ select * from scores order by score desc limit n $$;
create function named(lo int) returns table(id int, name text) language sql as $$ select id, name from scores where id >= lo $$;
create schema lib;
create function lib.twice(x numeric) returns numeric language sql return x * 2;
\df
\df add*
\df+ add_one
\df lib.*
\sf add_one
\sf named
select proname, pg_get_function_identity_arguments(oid), 'add_two(int, int)'::regprocedure from pg_proc where proname = 'add_two';
