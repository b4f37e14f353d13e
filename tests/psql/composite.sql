-- psql's describe meta-commands on composite types: \d of the type
-- (a "Composite type"), \dT and \dT+ (with the comment), and \d of a
-- table with columns of them.
create type pc_addr as (street text collate "C", zip int, tags text[]);
create type pc_person as (name varchar(20), home pc_addr);
comment on type pc_person is 'a person';
create table pc_people (id int primary key, p pc_person, past pc_addr[] default '{}');
\d pc_addr
\dT pc_*
\dT+ pc_person
\d pc_people
drop table pc_people;
drop type pc_person;
drop type pc_addr;
