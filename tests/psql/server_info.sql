-- psql's meta-commands about the server: \conninfo (port masked), \l for
-- this database (Strata has one database per tenant, no templates), \du and
-- \dn, and the settings behind them.
\conninfo
\l postgres
\du
\dn
create role app_reader login;
\du app_reader
drop role app_reader;
show lc_collate;
select datname, pg_encoding_to_char(encoding), datcollate = current_setting('lc_collate') from pg_database where datname = current_database();
