-- Schemas through psql: \dn, \dt and \d of qualified names, the search
-- path deciding what an unqualified \d finds, and DROP SCHEMA ... CASCADE.
create schema sales;
comment on schema sales is 'sales data';
create type sales.tier as enum ('low', 'high');
create table sales.deals (id serial primary key, name text not null unique, tier sales.tier default 'low');
create table deals (id int primary key);
create view sales.big as select id, name from sales.deals where tier = 'high';
\dn
\dn+ sales
\dt sales.*
\dt *.deals
\d sales.deals
\dv sales.*
\dT sales.*
set search_path = sales, public;
\d deals
\dt
select current_schema(), current_schemas(false);
reset search_path;
\d deals
drop schema sales;
drop schema sales cascade;
\dn
