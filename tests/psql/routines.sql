-- Procedures, OUT parameters and errors raised in PL/pgSQL as psql shows
-- them: CALL's output row, \df, and each error's CONTEXT lines (the
-- statement, the expression or assignment, nested calls, triggers) or
-- its QUERY line with a caret into the body's statement.
create table acct (id int primary key, bal int not null);
insert into acct values (1, 100), (2, 50);
create procedure transfer(src int, dst int, amt int) language plpgsql as $$
begin
  update acct set bal = bal - amt where id = src;
  update acct set bal = bal + amt where id = dst;
  if (select bal from acct where id = src) < 0 then
    raise exception 'account % would be overdrawn', src using hint = 'Move less.';
  end if;
end
$$;
call transfer(1, 2, 30);
call transfer(amt => 500, src => 2, dst => 1);
select * from acct order by id;
create procedure totals(inout total int, out n int) language sql as $$ select sum(bal)::int, count(*)::int from acct $$;
call totals(null, null);
create function stats(lo int, out cnt bigint, out top int) language plpgsql as $$
begin
  select count(*), max(bal) into cnt, top from acct where bal >= lo;
end
$$;
select * from stats(0);
select stats(60);
comment on procedure transfer is 'moves money';
\df transfer
\df stats
\df+ totals
select transfer(1, 2, 3);
call stats(1);
create function inner_f(x int) returns int language plpgsql as $$
begin
  if x > 1 then
    raise exception 'too big: %', x;
  end if;
  return 10 / x;
end
$$;
create function outer_f() returns int language plpgsql as $$
declare
  v int;
begin
  perform inner_f(5);
  return 1;
end
$$;
select outer_f();
select inner_f(a) from (values (1), (0)) v(a);
do $$ declare v int; begin v := 1/0; end $$;
do $$ declare v int; begin v := nosuchcol + 1; end $$;
do $$ declare v int; begin select nosuch into v from acct; end $$;
do $$ begin insert into acct values (1, 0); end $$;
do $$ declare r record; begin for r in select 1/0 loop end loop; end $$;
do $$ begin execute 'select * from nosuch'; end $$;
do $$ declare v int := 1/0; begin null; end $$;
create function no_return() returns int language plpgsql as $$ begin null; end $$;
select no_return();
create function guard() returns trigger language plpgsql as $$
begin
  if new.bal < 0 then
    raise exception 'negative balance: %', new.bal;
  end if;
  return new;
end
$$;
create trigger acct_guard before insert or update on acct for each row execute function guard();
insert into acct values (3, -1);
create procedure batch() language plpgsql as $$
begin
  insert into acct values (10, 1);
  commit;
  insert into acct values (11, 1);
  rollback;
end
$$;
call batch();
select id from acct where id >= 10 order by id;
delete from acct where id >= 10;
begin;
call batch();
rollback;
-- An error in a SQL function run statement by statement names the statement.
create function two_inserts() returns void language sql as $$
  insert into acct values (20, 1);
  insert into acct values (20, 1);
$$;
select two_inserts();
drop function two_inserts();
