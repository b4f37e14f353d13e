-- PL/pgSQL as psql shows it: RAISE messages at their levels, a DO block,
-- and \d listing a table's triggers (enabled and disabled). Errors and
-- their CONTEXT lines are in routines.sql.
create table acct (id int primary key, email text, version int default 0);
create function norm() returns trigger language plpgsql as $$
begin
  new.email := lower(new.email);
  raise notice 'normalized %', new.email;
  return new;
end
$$;
create trigger a_norm before insert or update of email on acct
  for each row when (new.email is not null) execute function norm();
create trigger b_off after delete on acct for each statement execute function norm();
alter table acct disable trigger b_off;
insert into acct values (1, 'X@Y.COM');
select * from acct;
\d acct
do $$
begin
  raise warning 'careful: %', 42;
  raise info 'checked % rows', (select count(*) from acct);
end
$$;
do $$ begin perform 1; end $$;
