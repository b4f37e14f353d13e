-- The database tests/pg_dump.rs dumps: serial and bigserial keys, a
-- standalone sequence, a unique constraint, a CHECK, a cascading foreign key,
-- an index, a view, comments, and rows of every type with the values COPY
-- has to escape (tabs, newlines, backslashes, quotes, NULLs, empty arrays),
-- and an enum type with a label added out of order. Extensions, one in a
-- schema of its own, and defaults that call their functions. Materialized
-- views, one populated (with a unique index and a comment), one not.
-- Domains, one over another.
create type status as enum ('new', 'paid', 'shipped');
alter type status add value 'held' before 'paid';
comment on type status is 'order state';
create table customers (id serial primary key, email varchar(100) not null unique, name text, active boolean default true, created_at timestamptz default now());
create table orders (id bigserial primary key, customer_id int not null references customers(id) on delete cascade, amount numeric(12,2) check (amount >= 0), tags text[], qty int[], note text, payload bytea, doc jsonb, uid uuid, d date, t time, iv interval, f4 real, f8 double precision, st status not null default 'new', history status[]);
create index orders_customer_idx on orders (customer_id);
create index orders_recent_idx on orders (customer_id, d desc nulls last);
create sequence invoice_seq increment by 5 start with 1000;
create view big_orders as select o.id, c.name, o.amount from orders o join customers c on c.id = o.customer_id where o.amount > 100;
comment on table customers is 'people who buy';
comment on column customers.email is 'login address';
insert into customers (email, name, created_at) values ('a@x.org', 'Ann', '2024-01-02 03:04:05+00'), ('b@x.org', 'Bob''s "shop"', '2024-02-03 04:05:06.5+00'), ('c@x.org', null, '2024-03-04 05:06:07+00');
insert into orders (customer_id, amount, tags, qty, note, payload, doc, uid, d, t, iv, f4, f8, st, history) values
 (1, 150.25, '{a,b,"c d"}', '{1,2}', E'tab\there', '\xdeadbeef', '{"k": [1, 2, {"x": null}]}', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '2024-01-01', '23:59:59.5', '1 day 02:00:00', 1.5, 2.25, 'held', '{new,held}'),
 (1, 0.00, '{}', null, null, '\x', null, null, null, null, null, null, null, 'paid', null),
 (2, 99.99, '{NULL,"q\"q"}', '{NULL,4}', E'line1\nline2', null, '[]', null, '2000-02-29', '00:00:00', '-1 mons', -0.5, 1e100, 'shipped', '{}'),
 (3, 1000, null, '{3}', 'back\\slash', null, '"s"', null, null, null, null, null, null, default, '{shipped,new}');
select nextval('invoice_seq'), nextval('invoice_seq');
-- A schema of its own, with an enum type, a serial key, a view, and a
-- foreign key from public into it.
create schema shop;
comment on schema shop is 'the shop';
create type shop.size as enum ('s', 'm', 'l');
create table shop.items (id serial primary key, sku text not null unique, size shop.size default 'm', sizes shop.size[]);
create table reviews (id int primary key, item int references shop.items(id) deferrable initially deferred, body text);
create view shop.sized as select i.sku, i.size from shop.items i where i.size is not null;
insert into shop.items (sku, size, sizes) values ('x1', 'l', '{s,m}'), ('x2', default, null);
insert into reviews values (1, 1, 'good'), (2, 2, null);
-- uuid-ossp in public, pgcrypto in shop, and defaults calling both.
create extension "uuid-ossp";
create extension pgcrypto with schema shop;
comment on extension pgcrypto is 'hashes';
create table tokens (id uuid primary key default uuid_generate_v4(), n int, hash text default shop.crypt('pw', '$1$abcdefgh'));
insert into tokens (n) values (1), (2);
create materialized view order_totals as select customer_id, sum(amount) as total, count(*) as n from orders group by customer_id;
create unique index order_totals_customer on order_totals (customer_id);
comment on materialized view order_totals is 'per customer';
create materialized view later_totals (cust, tot) as select customer_id, sum(amount) from orders group by customer_id with no data;
-- Roles own objects and hold privileges: the dump writes OWNER TO, GRANT
-- and REVOKE (the roles themselves are made on the target first, as
-- pg_dumpall --globals-only would).
create role dump_owner;
create role dump_reader;
alter schema shop owner to dump_owner;
alter table shop.items owner to dump_owner;
grant usage on schema shop to dump_reader;
grant select on all tables in schema shop to dump_reader;
grant select, insert on customers to dump_reader with grant option;
grant usage on sequence invoice_seq to dump_reader;
revoke all on big_orders from postgres;
grant select on big_orders to public;
alter default privileges for role dump_owner in schema shop grant select on tables to dump_reader;
alter default privileges grant usage on sequences to dump_reader;
revoke all on type status from public;
grant usage on type status to dump_reader;
-- SQL functions, one called by a view and one in FROM of another view.
create function order_tax(amount numeric) returns numeric language sql immutable as $$ select round(amount * 0.2, 2) $$;
create function shop.items_of(lo int) returns table (id int, sku text) language sql stable as $$ select id, sku from shop.items where id >= lo order by id $$;
create view taxed as select id, order_tax(amount) as tax from orders;
create view item_list as select * from shop.items_of(1);
-- A PL/pgSQL trigger function and triggers (one with a WHEN condition and
-- arguments, one disabled).
create function touch_order() returns trigger language plpgsql as $$
begin
  new.amount := coalesce(new.amount, 0);
  return new;
end
$$;
create trigger orders_touch before insert or update of amount on orders for each row when (new.amount is null) execute function touch_order();
create trigger orders_note after delete on orders for each statement execute function touch_order('a', 'b');
alter table orders disable trigger orders_note;
-- A procedure and a function with OUT parameters, with comments.
create procedure add_order(cust int, amt numeric default 0, inout n int default null) language plpgsql as $$
begin
  insert into orders (customer_id, amount) values (cust, amt);
  select count(*) into n from orders where customer_id = cust;
end
$$;
create function order_stats(cust int, out total numeric, out cnt bigint) language sql stable as $$ select sum(amount), count(*) from orders where customer_id = cust $$;
comment on procedure add_order(int, numeric, int) is 'adds an order';
comment on function order_stats(int) is 'totals';
-- A SECURITY DEFINER function with SET clauses and a VARIADIC parameter,
-- and a void SQL function whose body is an INSERT, typed by %TYPE.
create function join_skus(sep text, variadic skus text[]) returns text language plpgsql stable security definer set search_path = shop, public set work_mem = '8MB' as $$
begin
  return array_to_string(skus, sep);
end
$$;
create function log_amount(a orders.amount%type) returns void language sql as $$ insert into orders (customer_id, amount) values (1, a) $$;
-- A view WITH CHECK OPTION, and a join view with an INSTEAD OF trigger.
create view positive_orders as select id, customer_id, amount from orders where amount > 0 with local check option;
-- A view column default (pg_dump writes it as ALTER TABLE ONLY ... SET DEFAULT).
alter view positive_orders alter column amount set default 1;
create function order_view_ins() returns trigger language plpgsql as $$
begin
  insert into orders (customer_id, amount) values (new.customer_id, new.amount);
  return new;
end
$$;
create trigger order_view_ins instead of insert on big_orders for each row execute function order_view_ins();
-- Identity columns: pg_dump adds them with ALTER TABLE ... ADD GENERATED
-- ... AS IDENTITY (SEQUENCE NAME ...), after the table.
create table events (id bigint generated always as identity (start with 50 increment by 5) primary key, kind text);
insert into events (kind) values ('a'), ('b');
create table notes (id int generated by default as identity, body text);
insert into notes (body) values ('n1');
insert into notes values (100, 'n100');
-- Domains: one over another, one NOT NULL with a default and a named
-- CHECK, a CHECK added NOT VALID; a table whose columns are of them.
create domain qty_t as integer check (value > 0);
create domain small_qty as qty_t check (value < 1000);
create domain contact as text not null default 'none@x.org' constraint contact_at check (value like '%@%');
alter domain qty_t add constraint not_13 check (value <> 13) not valid;
create table shipments (id int primary key, n small_qty, who contact);
insert into shipments values (1, 5, 'a@b.c'), (2, null, default);
-- Constraints added NOT VALID over rows that break them: pg_dump adds
-- them after the data, still NOT VALID.
-- Its timestamp(3) and interval(0) columns keep their precision.
create table legacy (id int primary key, qty int, customer_id int, stamp timestamp(3), took interval(0));
insert into legacy values (1, -5, 999, '2024-05-06 07:08:09.123', '2 days 00:00:03');
alter table legacy add constraint legacy_qty_pos check (qty > 0) not valid;
alter table legacy add constraint legacy_customer_fk foreign key (customer_id) references customers (id) not valid;
-- Columns with a collation of their own: pg_dump writes COLLATE
-- pg_catalog."C".
create table labels (id int primary key, code text collate "C", tag varchar(10) collate "POSIX", plain text);
insert into labels values (1, 'b', 'x', 'p');
-- Index methods, operator classes and INCLUDE columns come back as
-- written.
create index labels_tag_like on labels (tag varchar_pattern_ops) include (plain);
create index orders_doc_gin on orders using gin (doc jsonb_path_ops);
create index orders_tags_gin on orders using gin (tags);
-- Range columns, one an array, with a default and a CHECK that call range
-- functions.
create table stays (id int primary key, nights daterange not null default daterange('2024-01-01', '2024-01-02'), during tstzrange, seats int4range[], price numrange check (not isempty(price)));
create index stays_during on stays (during);
insert into stays values (1, '[2024-05-01,2024-05-04)', '["2024-05-01 14:00+00","2024-05-04 11:00+00")', '{"[1,3)",empty}', '[10.5,20]'), (2, default, null, null, '(,5)');

-- Composite types: nested, with an enum attribute, a COLLATE clause and an
-- array attribute; columns of them with a default, arrays of them, and a
-- comment on the type.
create type address as (street text collate "C", zip int, tags text[]);
create type caller as (name varchar(40), kind status, home address);
comment on type caller is 'who to call';
create table callers (id int primary key, c caller, history address[], fallback address default '(nowhere,0,{})');
insert into callers values (1, row('ann', 'paid', row('main "st"', 12345, array['a,b', null]))::caller, array['(x,1,{})'::address, null], default), (2, null, '{}', null);

-- Partitioned tables: a list-partitioned one with a primary key, a unique
-- index, a plain index and a default partition; a range-partitioned one
-- whose first partition is hash-partitioned again, and a partition with a
-- CHECK of its own and an identity column; a foreign key of the
-- parent's, copied to each partition. pg_dump writes each partition as a table, attaches it,
-- and attaches each partition's indexes to the parent's.
create table regions (id int, region text, v int, note text default 'x', customer_id int references customers (id) on delete set null, primary key (id, region)) partition by list (region);
create table regions_eu partition of regions for values in ('eu', 'uk');
create table regions_us partition of regions for values in ('us');
create table regions_rest partition of regions default;
create index on regions (v);
create unique index regions_region_v on regions (region, v);
insert into regions values (1, 'eu', 1, 'x', 1), (2, 'us', 2, 'x', 2), (3, 'zz', 3, 'x', null), (4, 'uk', 4, 'y', 1);
create table readings (id int generated by default as identity, at date not null, val numeric) partition by range (at);
create table readings_2024 partition of readings for values from ('2024-01-01') to ('2025-01-01') partition by hash (id);
create table readings_2024_0 partition of readings_2024 for values with (modulus 2, remainder 0);
create table readings_2024_1 partition of readings_2024 for values with (modulus 2, remainder 1);
create table readings_later partition of readings for values from ('2025-01-01') to (maxvalue);
alter table readings_later add constraint later_val_pos check (val > 0);
insert into readings values (1, '2024-05-01', 1.5), (2, '2024-06-01', 2.5), (5, '2024-07-01', 5), (3, '2030-01-01', 3);
