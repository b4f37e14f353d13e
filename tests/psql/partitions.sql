-- Partitioned tables as psql describes them, and COPY routing rows.
create table pm (id int, at date not null, note text, primary key (id, at)) partition by range (at);
create table pm_2023 partition of pm for values from ('2023-01-01') to ('2024-01-01');
create table pm_2024 partition of pm for values from ('2024-01-01') to ('2025-01-01');
create table pm_rest partition of pm default;
create index on pm (note);
\d pm
\d+ pm
\d pm_2024
copy pm from stdin;
1	2023-05-01	spring
2	2024-02-29	leap
3	1999-12-31	party
\.
select tableoid::regclass, * from pm order by id;
copy pm to stdout;
copy (select * from pm where at >= '2024-01-01') to stdout;
\dt pm*
-- A partition attached later, a foreign key copied to the partitions, an
-- index made ON ONLY the parent (invalid until attached), \di and \d of
-- an index of each kind.
create table pm_owner (id int primary key);
insert into pm_owner values (1), (2), (3);
create table pm_2025 (id int not null, at date not null, note text);
alter table pm attach partition pm_2025 for values from ('2025-01-01') to ('2026-01-01');
alter table pm add constraint pm_owner_fk foreign key (id) references pm_owner;
create index pm_at_idx on only pm (at);
\d pm
\d pm_2025
\di pm*
\d pm_at_idx
\d pm_2025_note_idx
alter table pm detach partition pm_2025;
\d pm_2025
drop table pm, pm_2025, pm_owner;
