-- \df for built-in functions (pg_proc holds PostgreSQL 15's rows for the
-- functions Strata has), regproc and the pg_get_function_* functions.
\df abs
\df+ abs
\df count
\df jsonb_set
\df date_trunc
\df generate_series
\df string_agg
\dfa string_agg
\df row_number
\dfw
\df array_length
\df to_char
\df now
select typname, typinput, typoutput, typreceive, typsend, typmodin, typalign, typstorage from pg_type where oid in (23, 1007, 1043, 3802) order by oid;
select typname, typinput = 'pg_catalog.array_in'::regproc as is_array from pg_type where oid in (23, 1007) order by oid;
select 'int4in'::regproc, 'int4in'::regproc::oid, 0::regproc, '-'::regproc::oid, 0::regclass, 0::regtype, format_type(0, null);
select 'nosuch'::regproc;
select to_regproc('nosuch') is null, to_regproc('pg_catalog.int4in');
select proname, pg_get_function_result(oid), pg_get_function_arguments(oid), pg_get_function_identity_arguments(oid), obj_description(oid, 'pg_proc') from pg_proc where proname in ('jsonb_set', 'concat') order by oid;
select proname, prokind, proargtypes, proallargtypes, proargmodes, proargnames, provariadic, prosupport, pronamespace::regnamespace from pg_proc where proname = 'json_each';
