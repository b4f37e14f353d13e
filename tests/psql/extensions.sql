-- Extensions through psql: \dx, \dx+, \df of an extension's functions and
-- \dL, which lists plpgsql, installed from the start.
\dx
create extension "uuid-ossp";
create schema crypto;
create extension pgcrypto schema crypto;
comment on extension pgcrypto is 'hashes and salts';
\dx
\dx+ "uuid-ossp"
\df uuid_generate*
\df crypto.gen_salt
\dL
drop extension pgcrypto;
\dx
