-- String functions, checked against PostgreSQL.
select position('lo' in 'hello'), strpos('hello', 'z'), left('hello', 2), right('hello', 3), left('hello', -2), right('hello', -1);
select lpad('7', 3, '0'), rpad('ab', 5, 'xy'), lpad('toolong', 3), rpad('', 2);
select ltrim('  x  '), rtrim('  x  ') || '|', btrim('xxhixx', 'x'), trim(both 'x' from 'xxhixx'), trim(leading ' ' from '  a '), trim(trailing 'z' from 'azz');
select split_part('a,b,,c', ',', 2), split_part('a,b,,c', ',', 3), split_part('a,b,,c', ',', -1), split_part('abc', ',', 2);
select reverse('abc'), initcap('hello wORLD-foo bar_baz'), starts_with('postgres', 'post'), upper('ß'), length('héllo');
select substring('hello' from 2 for 3), substring('hello' from 3), substr('hello', 0, 3), 'a' || 1 || true, concat('a', null, 2);
select replace('aaa', 'a', 'bb'), repeat('ab', 3), lower('ÀB'), 'x' like 'X', 'x' ilike 'X', 'abc' not like 'a_';
