-- Owners, privileges and default privileges as psql shows them: \dp (\z),
-- \du with role membership, \dn+ and \ddp.
create role app_owner login createrole;
create role app_reader nologin;
create role app_user login noinherit in role app_reader;
create schema app authorization app_owner;
create table app.items (id serial primary key, name text);
create view app.names as select name from app.items;
alter table app.items owner to app_owner;
grant usage on schema app to app_reader;
grant select on all tables in schema app to app_reader;
grant usage on all sequences in schema app to app_reader;
grant insert, update on app.items to app_user with grant option;
alter default privileges for role app_owner in schema app grant select on tables to app_reader;
alter default privileges grant usage on sequences to app_reader;
\dp app.*
\z app.items
\du app*
\dn+ app
\ddp
set role app_user;
select current_user, session_user;
select * from app.items;
insert into app.items (name) values ('x');
reset role;
