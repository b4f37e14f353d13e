package strata.drivers;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.sql.Statement;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.OffsetTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.TimeZone;
import java.util.UUID;
import org.postgresql.PGResultSetMetaData;
import org.postgresql.util.PGInterval;
import org.postgresql.util.PGobject;
import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;

/**
 * pgjdbc against Strata or PostgreSQL: a small shop application (schema, parameterized DML, batches,
 * generated keys, joins and aggregates, transactions, savepoints, SQLSTATE errors, NULLs, database
 * metadata) and a round trip of every core type in text format (prepareThreshold=0: unnamed
 * statements, text results) and in binary format (prepareThreshold=-1: named statements from the
 * first execution, binary results for the types pgjdbc reads in binary), plus the default switch to
 * binary after prepareThreshold (5) executions.
 *
 * <p>Usage: JdbcScenario (environment STRATA_PORT: the server on 127.0.0.1, user and database
 * postgres, no password; STRATA_TEST_TARGET: strata|postgres). Every expectation here was checked
 * against PostgreSQL 15. See ../README.md for the known-failure convention (KNOWN_FAILURES below).
 * Prints one line per check and "N passed, N failed"; exits 1 if a check failed.
 */
public final class JdbcScenario {
  /**
   * Checks Strata cannot pass yet, by name: on Strata they still run, a failure prints "known
   * failure: name: why" and a pass "UNEXPECTED PASS: name" (remove the entry then); on PostgreSQL
   * they must pass. One entry per missing feature or bug; "bug:" marks a bug rather than a missing
   * feature.
   */
  static final Map<String, String> KNOWN_FAILURES = Map.of();

  static final boolean ON_STRATA = !"postgres".equals(System.getenv("STRATA_TEST_TARGET"));
  static final String PORT = Objects.requireNonNull(System.getenv("STRATA_PORT"), "STRATA_PORT");

  interface Check {
    void run(Connection c) throws Exception;
  }

  /** A failed expectation. */
  static final class Failure extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Failure(String msg) {
      super(msg);
    }
  }

  static void eq(Object got, Object want, String what) {
    boolean same =
        got instanceof byte[] && want instanceof byte[]
            ? Arrays.equals((byte[]) got, (byte[]) want)
            : got instanceof Object[] && want instanceof Object[]
                ? got.getClass() == want.getClass() && Arrays.deepEquals((Object[]) got, (Object[]) want)
                : Objects.equals(got, want);
    if (!same) {
      throw new Failure(what + ": got " + show(got) + ", want " + show(want));
    }
  }

  static String show(Object v) {
    if (v instanceof byte[]) {
      return Arrays.toString((byte[]) v);
    }
    if (v instanceof Object[]) {
      return Arrays.deepToString((Object[]) v) + " (" + v.getClass().getSimpleName() + ")";
    }
    if (v instanceof String) {
      return "\"" + v + "\"";
    }
    return v == null ? "null" : v + " (" + v.getClass().getSimpleName() + ")";
  }

  static Connection connect(String prepareThreshold) throws SQLException {
    Properties p = new Properties();
    p.setProperty("user", "postgres");
    p.setProperty("connectTimeout", "30");
    p.setProperty("socketTimeout", "120");
    p.setProperty("prepareThreshold", prepareThreshold);
    // pgjdbc sends the JVM's time zone as TimeZone; main sets it to UTC so that timestamptz in
    // text format prints the same everywhere.
    return DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + PORT + "/postgres", p);
  }

  /** A server error expected from `action`. */
  static PSQLException sqlError(Check action, Connection c) throws Exception {
    try {
      action.run(c);
    } catch (PSQLException e) {
      return e;
    }
    throw new Failure("expected an error, the statement succeeded");
  }

  static final List<String> names = new ArrayList<>();
  static final Map<String, Check> checks = new LinkedHashMap<>();
  static final Map<String, String> thresholds = new LinkedHashMap<>();

  static void check(String name, Check fn) {
    check(name, "5", fn);
  }

  static void check(String name, String prepareThreshold, Check fn) {
    names.add(name);
    checks.put(name, fn);
    thresholds.put(name, prepareThreshold);
  }

  static void exec(Connection c, String sql) throws SQLException {
    try (Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }

  static long count(Connection c, String sql, Object... args) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        ps.setObject(i + 1, args[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          throw new Failure(sql + ": no row");
        }
        return rs.getLong(1);
      }
    }
  }

  /** Each row of a query as a string, columns by getString, separated by spaces. */
  static List<String> rows(Connection c, String sql, Object... args) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        ps.setObject(i + 1, args[i]);
      }
      List<String> out = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        int n = rs.getMetaData().getColumnCount();
        while (rs.next()) {
          StringBuilder b = new StringBuilder();
          for (int i = 1; i <= n; i++) {
            if (i > 1) {
              b.append(' ');
            }
            b.append(rs.getString(i));
          }
          out.add(b.toString());
        }
      }
      return out;
    }
  }

  // -----------------------------------------------------------------------------------------
  // The shop: customers and their orders.

  static void makeShop(Connection c) throws SQLException {
    exec(c, "drop table if exists orders");
    exec(c, "drop table if exists customers");
    exec(
        c,
        "create table customers (id int4 primary key, email varchar(100) not null unique,"
            + " name text not null, vip bool not null default false)");
    exec(
        c,
        "create table orders (id int8 primary key, customer_id int4 not null,"
            + " total numeric(10,2) not null, note text, placed_on date not null)");
    exec(c, "create index orders_by_customer on orders (customer_id)");
    try (PreparedStatement ps =
        c.prepareStatement("insert into customers (id, email, name, vip) values (?, ?, ?, ?)")) {
      Object[][] customers = {
        {1, "ann@example.com", "Ann", true},
        {2, "bob@example.com", "Bob", false},
        {3, "cy@example.com", "Cy", false},
      };
      for (Object[] cu : customers) {
        ps.setInt(1, (Integer) cu[0]);
        ps.setString(2, (String) cu[1]);
        ps.setString(3, (String) cu[2]);
        ps.setBoolean(4, (Boolean) cu[3]);
        ps.addBatch();
      }
      eq(Arrays.toString(ps.executeBatch()), "[1, 1, 1]", "customer batch");
    }
    try (PreparedStatement ps =
        c.prepareStatement(
            "insert into orders (id, customer_id, total, note, placed_on) values (?, ?, ?, ?, ?)")) {
      Object[][] orders = {
        {100L, 1, "12.50", null, "2024-01-05"},
        {101L, 1, "7.25", "gift wrap", "2024-01-06"},
        {102L, 2, "100.00", null, "2024-02-01"},
        {103L, 2, "0.99", "coupon", "2024-02-02"},
        {104L, 1, "30.00", null, "2024-03-01"},
      };
      for (Object[] o : orders) {
        ps.setLong(1, (Long) o[0]);
        ps.setInt(2, (Integer) o[1]);
        ps.setBigDecimal(3, new BigDecimal((String) o[2]));
        if (o[3] == null) {
          ps.setNull(4, Types.VARCHAR);
        } else {
          ps.setString(4, (String) o[3]);
        }
        ps.setObject(5, LocalDate.parse((String) o[4]));
        ps.addBatch();
      }
      eq(ps.executeBatch().length, 5, "order batch");
    }
  }

  static void shopChecks() {
    check(
        "connect_and_server_version",
        c -> {
          DatabaseMetaData md = c.getMetaData();
          eq(md.getDatabaseProductName(), "PostgreSQL", "product");
          eq(md.getDatabaseMajorVersion() >= 15, true, "major version " + md.getDatabaseMajorVersion());
          eq(rows(c, "select 1, current_database()"), List.of("1 postgres"), "select");
        });

    check(
        "show_setting_binary_prepared",
        "-1",
        c -> eq(rows(c, "show timezone"), List.of("UTC"), "show timezone"));

    check(
        "schema_and_insert",
        c -> {
          makeShop(c);
          try (PreparedStatement ps =
              c.prepareStatement("insert into customers (id, email, name) values (?, ?, ?)")) {
            ps.setInt(1, 4);
            ps.setString(2, "di@example.com");
            ps.setString(3, "Di");
            eq(ps.executeUpdate(), 1, "insert count");
          }
          eq(
              rows(c, "select id, email, name, vip from customers where id = ?", 4),
              List.of("4 di@example.com Di f"),
              "row");
          eq(count(c, "select count(*) from orders"), 5L, "orders");
        });

    check(
        "returning_generated_keys",
        c -> {
          makeShop(c);
          try (PreparedStatement ps =
              c.prepareStatement(
                  "insert into customers (id, email, name) values (?, ?, ?)",
                  new String[] {"id", "vip"})) {
            ps.setInt(1, 5);
            ps.setString(2, "ed@example.com");
            ps.setString(3, "Ed");
            eq(ps.executeUpdate(), 1, "insert count");
            try (ResultSet keys = ps.getGeneratedKeys()) {
              eq(keys.next(), true, "a key row");
              eq(keys.getInt("id"), 5, "id");
              eq(keys.getBoolean("vip"), false, "default vip");
              eq(keys.next(), false, "one key row");
            }
          }
        });

    check(
        "query_join_aggregate_order_limit",
        c -> {
          makeShop(c);
          eq(
              rows(
                  c,
                  "select c.name, count(o.id) as n, sum(o.total) as spent, max(o.placed_on) as last"
                      + " from customers c join orders o on o.customer_id = c.id"
                      + " where o.placed_on >= ? group by c.name order by spent desc limit ?",
                  LocalDate.of(2024, 1, 1),
                  10),
              List.of("Bob 2 100.99 2024-02-02", "Ann 3 49.75 2024-03-01"),
              "totals");
          try (PreparedStatement ps =
                  c.prepareStatement(
                      "select c.name, count(o.id), coalesce(sum(o.total), 0) from customers c"
                          + " left join orders o on o.customer_id = c.id group by c.id, c.name"
                          + " order by c.id");
              ResultSet rs = ps.executeQuery()) {
            List<String> got = new ArrayList<>();
            while (rs.next()) {
              got.add(rs.getString(1) + " " + rs.getLong(2) + " " + rs.getBigDecimal(3));
            }
            eq(got, List.of("Ann 3 49.75", "Bob 2 100.99", "Cy 0 0"), "left join");
          }
          eq(
              rows(c, "select id, total from orders order by total desc, id limit ? offset ?", 2, 1),
              List.of("104 30.00", "100 12.50"),
              "limit offset");
          eq(
              rows(c, "select round(avg(total), 2) from orders where customer_id = ?", 1),
              List.of("16.58"),
              "avg");
          eq(
              rows(
                  c,
                  "select name from customers where id in"
                      + " (select customer_id from orders where total > ?) order by name",
                  new BigDecimal("20")),
              List.of("Ann", "Bob"),
              "subquery");
        });

    check(
        "update_delete",
        c -> {
          makeShop(c);
          try (PreparedStatement ps =
              c.prepareStatement("update orders set total = total + ? where customer_id = ?")) {
            ps.setBigDecimal(1, new BigDecimal("1.00"));
            ps.setInt(2, 1);
            eq(ps.executeUpdate(), 3, "updated");
          }
          eq(
              rows(c, "select sum(total) from orders where customer_id = ?", 1),
              List.of("52.75"),
              "sum");
          eq(
              rows(
                  c,
                  "delete from orders where note is null and total < ? returning id",
                  new BigDecimal("20")),
              List.of("100"),
              "deleted");
          try (PreparedStatement ps = c.prepareStatement("delete from customers where id = ?")) {
            ps.setInt(1, 3);
            eq(ps.executeUpdate(), 1, "deleted customer");
          }
          eq(count(c, "select count(*) from orders"), 4L, "orders");
          eq(count(c, "select count(*) from customers"), 2L, "customers");
        });

    check(
        "transactions_commit_rollback",
        c -> {
          makeShop(c);
          try (Connection other = connect("5")) {
            c.setAutoCommit(false);
            try (PreparedStatement ps =
                c.prepareStatement("insert into customers (id, email, name) values (?, ?, ?)")) {
              ps.setInt(1, 10);
              ps.setString(2, "t@example.com");
              ps.setString(3, "T");
              ps.executeUpdate();
            }
            eq(count(other, "select count(*) from customers where id = 10"), 0L, "before commit");
            c.commit();
            eq(count(other, "select count(*) from customers where id = 10"), 1L, "after commit");

            exec(c, "insert into customers (id, email, name) values (11, 'u@example.com', 'U')");
            exec(c, "update orders set total = 0");
            c.rollback();
            eq(count(c, "select count(*) from customers where id = 11"), 0L, "rolled back insert");
            eq(rows(c, "select sum(total) from orders"), List.of("150.74"), "rolled back update");
            c.commit();

            // An error aborts the transaction until it is rolled back.
            eq(sqlError(x -> exec(x, "select 1 / 0"), c).getSQLState(), "22012", "division by zero");
            eq(
                sqlError(x -> count(x, "select ?::int8", 1), c).getSQLState(),
                "25P02",
                "in failed transaction");
            c.rollback();
            eq(count(c, "select ?::int8", 1), 1L, "after rollback");
            c.setAutoCommit(true);
          }
        });

    check(
        "savepoints",
        c -> {
          makeShop(c);
          c.setAutoCommit(false);
          exec(c, "insert into customers (id, email, name) values (20, 'sp1@example.com', 'Sp1')");
          Savepoint a = c.setSavepoint("a");
          exec(c, "insert into customers (id, email, name) values (21, 'sp2@example.com', 'Sp2')");
          PSQLException e =
              sqlError(
                  x ->
                      exec(
                          x,
                          "insert into customers (id, email, name)"
                              + " values (22, 'ann@example.com', 'Dup')"),
                  c);
          eq(e.getSQLState(), "23505", "dup in savepoint");
          c.rollback(a);
          exec(c, "insert into customers (id, email, name) values (23, 'sp3@example.com', 'Sp3')");
          Savepoint b = c.setSavepoint();
          exec(c, "update customers set vip = true where id = 23");
          c.releaseSavepoint(b);
          Savepoint d = c.setSavepoint("before_delete");
          exec(c, "delete from customers where id = 20");
          c.rollback(d);
          c.commit();
          c.setAutoCommit(true);
          eq(
              rows(c, "select id, vip from customers where id >= 20 order by id"),
              List.of("20 f", "23 t"),
              "rows");
        });

    check(
        "unique_violation_sqlstate",
        c -> {
          makeShop(c);
          PSQLException e =
              sqlError(
                  x -> exec(x, "insert into customers (id, email, name) values (1, 'n@e.com', 'N')"),
                  c);
          ServerErrorMessage m = e.getServerErrorMessage();
          eq(e.getSQLState(), "23505", "sqlstate");
          eq(m.getConstraint(), "customers_pkey", "constraint");
          eq(m.getDetail(), "Key (id)=(1) already exists.", "detail");
          eq(m.getSeverity(), "ERROR", "severity");
          try (PreparedStatement ps =
              c.prepareStatement("insert into customers (id, email, name) values (?, ?, ?)")) {
            ps.setInt(1, 9);
            ps.setString(2, "bob@example.com");
            ps.setString(3, "Bob2");
            e = sqlError(x -> ps.executeUpdate(), c);
          }
          m = e.getServerErrorMessage();
          eq(e.getSQLState(), "23505", "sqlstate");
          eq(m.getConstraint(), "customers_email_key", "constraint");
          eq(
              m.getMessage(),
              "duplicate key value violates unique constraint \"customers_email_key\"",
              "message");
          eq(count(c, "select count(*) from customers"), 3L, "nothing inserted");
        });

    check(
        "error_fields_schema_table",
        c -> {
          makeShop(c);
          ServerErrorMessage m =
              sqlError(
                      x ->
                          exec(
                              x,
                              "insert into customers (id, email, name) values (1, 'x@e.com', 'X')"),
                      c)
                  .getServerErrorMessage();
          eq(List.of(String.valueOf(m.getSchema()), String.valueOf(m.getTable())), List.of("public", "customers"), "unique violation fields");
          PSQLException e =
              sqlError(
                  x -> exec(x, "insert into customers (id, email, name) values (7, 'n@e.com', null)"),
                  c);
          m = e.getServerErrorMessage();
          eq(
              List.of(e.getSQLState(), String.valueOf(m.getSchema()), String.valueOf(m.getTable()), String.valueOf(m.getColumn())),
              List.of("23502", "public", "customers", "name"),
              "not null fields");
        });

    check(
        "nulls",
        c -> {
          makeShop(c);
          try (PreparedStatement ps =
              c.prepareStatement(
                  "insert into orders (id, customer_id, total, note, placed_on)"
                      + " values (?, ?, ?, ?, ?)")) {
            ps.setLong(1, 105);
            ps.setInt(2, 3);
            ps.setBigDecimal(3, new BigDecimal("5"));
            ps.setNull(4, Types.VARCHAR);
            ps.setObject(5, LocalDate.of(2024, 4, 1));
            ps.executeUpdate();
          }
          try (PreparedStatement ps =
              c.prepareStatement(
                  "select note, note is null, coalesce(note, ?), customer_id from orders"
                      + " where id = ?")) {
            ps.setString(1, "none");
            ps.setLong(2, 105);
            try (ResultSet rs = ps.executeQuery()) {
              rs.next();
              eq(rs.getString(1), null, "note");
              eq(rs.wasNull(), true, "wasNull");
              eq(rs.getBoolean(2), true, "is null");
              eq(rs.getString(3), "none", "coalesce");
              eq(rs.getInt(4), 3, "customer");
              eq(rs.wasNull(), false, "not wasNull");
            }
          }
          eq(count(c, "select count(*) from orders where note is null"), 4L, "is null");
          eq(
              rows(c, "select count(note), count(*), sum(total) filter (where false) from orders"),
              List.of("2 6 null"),
              "aggregates over nulls");
          try (PreparedStatement ps = c.prepareStatement("select ?::int4 is null, ?::text")) {
            ps.setNull(1, Types.INTEGER);
            ps.setNull(2, Types.VARCHAR);
            try (ResultSet rs = ps.executeQuery()) {
              rs.next();
              eq(rs.getBoolean(1), true, "null int4");
              eq(rs.getString(2), null, "null text");
            }
          }
          eq(
              rows(c, "select note from orders order by note, id"),
              List.of("coupon", "gift wrap", "null", "null", "null", "null"),
              "nulls last");
          exec(c, "drop table if exists tags");
          exec(c, "create table tags (name text unique)");
          try (PreparedStatement ps = c.prepareStatement("insert into tags values (?)")) {
            for (String v : new String[] {null, null, "a"}) {
              ps.setString(1, v);
              ps.executeUpdate();
            }
          }
          eq(count(c, "select count(*) from tags"), 3L, "nulls are not duplicates");
        });

    check(
        "foreign_key",
        c -> {
          makeShop(c);
          exec(c, "drop table if exists reviews");
          exec(
              c,
              "create table reviews (id int4 primary key,"
                  + " customer_id int4 not null references customers (id) on delete cascade,"
                  + " stars int2 not null)");
          exec(c, "insert into reviews values (1, 1, 5), (2, 2, 3), (3, 2, 4)");
          PSQLException e = sqlError(x -> exec(x, "insert into reviews values (4, 99, 1)"), c);
          eq(e.getSQLState(), "23503", "foreign key violation");
          eq(e.getServerErrorMessage().getConstraint(), "reviews_customer_id_fkey", "constraint");
          exec(c, "delete from customers where id = 2");
          eq(rows(c, "select id from reviews order by id"), List.of("1"), "cascaded");
          exec(c, "drop table reviews");
        });

    check(
        "serial_id_returning",
        c -> {
          exec(c, "drop table if exists notes");
          exec(c, "create table notes (id serial primary key, body text not null)");
          try (PreparedStatement ps =
              c.prepareStatement("insert into notes (body) values (?)", new String[] {"id"})) {
            List<Integer> ids = new ArrayList<>();
            for (String b : new String[] {"first", "second"}) {
              ps.setString(1, b);
              ps.executeUpdate();
              try (ResultSet keys = ps.getGeneratedKeys()) {
                keys.next();
                ids.add(keys.getInt(1));
              }
            }
            eq(ids, List.of(1, 2), "generated ids");
          }
        });

    check(
        "metadata_tables",
        c -> {
          makeShop(c);
          DatabaseMetaData md = c.getMetaData();
          List<String> tables = new ArrayList<>();
          try (ResultSet rs = md.getTables(null, "public", "%", new String[] {"TABLE"})) {
            while (rs.next()) {
              tables.add(rs.getString("TABLE_NAME"));
            }
          }
          eq(tables.contains("customers") && tables.contains("orders"), true, "tables " + tables);
        });

    check(
        "metadata_columns",
        c -> {
          makeShop(c);
          DatabaseMetaData md = c.getMetaData();
          List<String> cols = new ArrayList<>();
          try (ResultSet rs = md.getColumns(null, "public", "customers", "%")) {
            while (rs.next()) {
              cols.add(
                  rs.getString("COLUMN_NAME")
                      + " "
                      + rs.getString("TYPE_NAME")
                      + " "
                      + rs.getString("IS_NULLABLE"));
            }
          }
          eq(
              cols,
              List.of("id int4 NO", "email varchar NO", "name text NO", "vip bool NO"),
              "columns");
        });

    check(
        "metadata_primary_keys",
        c -> {
          makeShop(c);
          DatabaseMetaData md = c.getMetaData();
          List<String> pk = new ArrayList<>();
          try (ResultSet rs = md.getPrimaryKeys(null, "public", "orders")) {
            while (rs.next()) {
              pk.add(rs.getString("COLUMN_NAME"));
            }
          }
          eq(pk, List.of("id"), "primary key");
        });

    check(
        "metadata_keys_indexes_functions",
        c -> {
          // What Hibernate's schema validation and database tools read:
          // foreign keys from both ends, indexes with their order, and the
          // built-in functions with their descriptions.
          makeShop(c);
          exec(c, "alter table orders add constraint orders_customer_fk"
              + " foreign key (customer_id) references customers (id) on delete cascade");
          DatabaseMetaData md = c.getMetaData();
          List<String> imported = new ArrayList<>();
          try (ResultSet rs = md.getImportedKeys(null, "public", "orders")) {
            while (rs.next()) {
              imported.add(rs.getString("PKTABLE_NAME") + "." + rs.getString("PKCOLUMN_NAME")
                  + " <- " + rs.getString("FKCOLUMN_NAME") + " " + rs.getString("FK_NAME")
                  + " delete " + rs.getInt("DELETE_RULE"));
            }
          }
          eq(imported, List.of("customers.id <- customer_id orders_customer_fk delete "
              + DatabaseMetaData.importedKeyCascade), "imported keys");
          List<String> exported = new ArrayList<>();
          try (ResultSet rs = md.getExportedKeys(null, "public", "customers")) {
            while (rs.next()) {
              exported.add(rs.getString("FKTABLE_NAME") + " " + rs.getString("PK_NAME"));
            }
          }
          eq(exported, List.of("orders customers_pkey"), "exported keys");
          List<String> indexes = new ArrayList<>();
          try (ResultSet rs = md.getIndexInfo(null, "public", "customers", false, false)) {
            while (rs.next()) {
              indexes.add(rs.getString("INDEX_NAME") + " " + rs.getString("COLUMN_NAME")
                  + " unique " + !rs.getBoolean("NON_UNIQUE") + " " + rs.getString("ASC_OR_DESC"));
            }
          }
          eq(indexes, List.of("customers_email_key email unique true A",
              "customers_pkey id unique true A"), "indexes");
          List<String> fns = new ArrayList<>();
          try (ResultSet rs = md.getFunctions(null, "pg_catalog", "lower")) {
            while (rs.next()) {
              fns.add(rs.getString("FUNCTION_NAME") + ": " + rs.getString("REMARKS"));
            }
          }
          if (!fns.contains("lower: lowercase")) {
            throw new AssertionError("getFunctions(lower): " + fns);
          }
        });

    check(
        "numeric_typmod_rounds",
        c -> {
          try (PreparedStatement ps = c.prepareStatement("select ?::numeric(12,3)")) {
            ps.setBigDecimal(1, new BigDecimal("12345.6785"));
            try (ResultSet rs = ps.executeQuery()) {
              rs.next();
              eq(rs.getBigDecimal(1), new BigDecimal("12345.679"), "rounded");
            }
          }
          eq(
              sqlError(x -> rows(x, "select ?::numeric(4,2)", new BigDecimal("123.4")), c)
                  .getSQLState(),
              "22003",
              "overflow");
        });

    check(
        "enum_types",
        c -> {
          exec(c, "drop table if exists moods");
          exec(c, "drop type if exists mood");
          exec(c, "create type mood as enum ('sad', 'ok', 'happy')");
          exec(c, "create table moods (id int4 primary key, m mood not null, past mood[])");
          // A String parameter is sent as varchar, which PostgreSQL does not assign to an enum:
          // the application casts (or sets stringtype=unspecified).
          try (PreparedStatement ps = c.prepareStatement("insert into moods values (?, ?::mood, ?::mood[])")) {
            ps.setInt(1, 1);
            ps.setString(2, "happy");
            ps.setArray(3, c.createArrayOf("text", new String[] {"sad", "ok"}));
            ps.executeUpdate();
            ps.setInt(1, 2);
            ps.setString(2, "sad");
            ps.setNull(3, Types.ARRAY);
            ps.executeUpdate();
          }
          eq(
              rows(c, "select id, m, past from moods where m >= ?::mood order by m", "sad"),
              List.of("2 sad null", "1 happy {sad,ok}"),
              "rows by label order");
          try (PreparedStatement ps = c.prepareStatement("select m from moods where id = 1");
              ResultSet rs = ps.executeQuery()) {
            rs.next();
            eq(rs.getMetaData().getColumnTypeName(1), "mood", "column type name");
            eq(rs.getObject(1).toString(), "happy", "getObject");
          }
          eq(
              sqlError(x -> rows(x, "insert into moods values (3, ?) returning id", "glad"), c)
                  .getSQLState(),
              "42804",
              "varchar parameter into an enum column");
          eq(
              sqlError(x -> exec(x, "insert into moods values (3, 'glad')"), c).getSQLState(),
              "22P02",
              "bad label");
          exec(c, "drop table moods");
          exec(c, "drop type mood");
        });
  }

  // -----------------------------------------------------------------------------------------
  // Every core type.

  /** A type: column type, typed values (set with setObject, read with getObject(cls); arrays, cls
   * java.sql.Array, set with createArrayOf and read with getArray().getArray()), and (text sent,
   * text printed back) pairs. */
  record TypeCase(String name, String coltype, Class<?> cls, Object[] values, String[][] texts) {}

  /** A typed value that comes back as another (jsonb is normalized). */
  record Becomes(Object sent, Object want) {}

  static PGInterval interval(String s) {
    try {
      return new PGInterval(s);
    } catch (SQLException e) {
      throw new IllegalArgumentException(s, e);
    }
  }

  static PGobject pgobject(String type, String value) {
    PGobject o = new PGobject();
    o.setType(type);
    try {
      o.setValue(value);
    } catch (SQLException e) {
      throw new IllegalArgumentException(value, e);
    }
    return o;
  }

  static Timestamp instant(String s) {
    return Timestamp.from(Instant.parse(s));
  }

  static final TypeCase[] TYPES = {
    new TypeCase("bool", "bool", Boolean.class, new Object[] {true, false}, new String[][] {{"t", "t"}, {"false", "f"}}),
    new TypeCase("int2", "int2", Short.class, new Object[] {(short) -32768, (short) 32767}, new String[][] {{"-32768", "-32768"}, {"32767", "32767"}}),
    new TypeCase("int4", "int4", Integer.class, new Object[] {Integer.MIN_VALUE, 42, Integer.MAX_VALUE}, new String[][] {{"-2147483648", "-2147483648"}, {" 42", "42"}}),
    new TypeCase("int8", "int8", Long.class, new Object[] {Long.MIN_VALUE, 0L, Long.MAX_VALUE}, new String[][] {{"-9223372036854775808", "-9223372036854775808"}, {"9223372036854775807", "9223372036854775807"}}),
    new TypeCase("float8", "float8", Double.class, new Object[] {0.1, -2.5e100, Math.PI, 0.0, Double.POSITIVE_INFINITY}, new String[][] {{"0.1", "0.1"}, {"-2.5e100", "-2.5e+100"}, {"3.141592653589793", "3.141592653589793"}, {"Infinity", "Infinity"}}),
    new TypeCase("numeric", "numeric", BigDecimal.class,
        new Object[] {new BigDecimal("12345.678"), new BigDecimal("-0.000123"), new BigDecimal("1.500"), new BigDecimal("0"), new BigDecimal("123456789012345678901234567890.12345"), new BigDecimal("100000000000000000000")},
        new String[][] {{"12345.678", "12345.678"}, {"-0.000123", "-0.000123"}, {"1.500", "1.500"}, {"1e20", "100000000000000000000"}}),
    new TypeCase("text", "text", String.class, new Object[] {"héllo ☃", "", "quote ' backslash \\ newline\n tab\t"}, new String[][] {{"héllo ☃", "héllo ☃"}, {"", ""}}),
    new TypeCase("varchar", "varchar(10)", String.class, new Object[] {"var", "ten chars!"}, new String[][] {{"var", "var"}, {"ten chars!", "ten chars!"}}),
    new TypeCase("char", "char(5)", String.class, new Object[] {"abcde", "ab   "}, new String[][] {{"ab", "ab   "}, {"abcde", "abcde"}}),
    new TypeCase("timestamp", "timestamp", LocalDateTime.class,
        new Object[] {LocalDateTime.parse("2024-01-02T03:04:05.123456"), LocalDateTime.parse("1999-12-31T23:59:59.999999"), LocalDateTime.parse("1970-01-01T00:00:00")},
        new String[][] {{"2024-01-02 03:04:05.123456", "2024-01-02 03:04:05.123456"}, {"1999-12-31T23:59:59", "1999-12-31 23:59:59"}}),
    new TypeCase("timestamptz", "timestamptz", OffsetDateTime.class,
        new Object[] {OffsetDateTime.parse("2024-01-02T03:04:05.5Z"), OffsetDateTime.parse("1969-07-20T20:17:40Z")},
        new String[][] {{"2024-01-02 05:04:05.5+02", "2024-01-02 03:04:05.5+00"}, {"1969-07-20 20:17:40Z", "1969-07-20 20:17:40+00"}}),
    new TypeCase("date", "date", LocalDate.class, new Object[] {LocalDate.parse("2000-02-29"), LocalDate.parse("1969-07-20"), LocalDate.parse("2099-12-31")},
        new String[][] {{"2000-02-29", "2000-02-29"}, {"1969-07-20", "1969-07-20"}}),
    new TypeCase("bytea", "bytea", byte[].class, new Object[] {new byte[] {0, 1, -1}, new byte[0], allBytes()},
        new String[][] {{"\\x0001ff", "\\x0001ff"}, {"\\x", "\\x"}}),
    new TypeCase("float4", "float4", Float.class, new Object[] {0.1f, -2.5e30f, Float.MAX_VALUE, 0.0f, Float.POSITIVE_INFINITY, Float.NaN},
        new String[][] {{"0.1", "0.1"}, {"-2.5e30", "-2.5e+30"}, {"3.4028235e38", "3.4028235e+38"}, {"Infinity", "Infinity"}, {"NaN", "NaN"}}),
    new TypeCase("time", "time", LocalTime.class, new Object[] {LocalTime.parse("04:05:06.789"), LocalTime.parse("23:59:59.999999"), LocalTime.MIDNIGHT},
        new String[][] {{"04:05:06.789", "04:05:06.789"}, {"23:59:59.999999", "23:59:59.999999"}, {"4:05 PM", "16:05:00"}, {"24:00:00", "24:00:00"}}),
    new TypeCase("timetz", "timetz", OffsetTime.class,
        new Object[] {OffsetTime.parse("04:05:06+02:00"), OffsetTime.parse("23:59:59.999999-05:30"), OffsetTime.parse("00:00Z")},
        new String[][] {{"04:05:06+02", "04:05:06+02"}, {"23:59:59.999999-05:30", "23:59:59.999999-05:30"}, {"00:00:00Z", "00:00:00+00"}}),
    // pgjdbc sends a PGInterval as "1 years 2 mons 3 days 4 hours 5 mins 6.5 secs".
    new TypeCase("interval", "interval", PGInterval.class,
        new Object[] {new PGInterval(1, 2, 3, 4, 5, 6.5), interval("-1 days +02:00:00"), new PGInterval(0, 0, 0, 0, 0, 0), new PGInterval(0, -1, 2, 0, 0, -0.000001)},
        new String[][] {{"1 year 2 mons 3 days 04:05:06.5", "1 year 2 mons 3 days 04:05:06.5"}, {"-1 days +02:00:00", "-1 days +02:00:00"},
          {"00:00:00", "00:00:00"}, {"P1Y2M3DT4H5M6S", "1 year 2 mons 3 days 04:05:06"}, {"-00:00:00.000001", "-00:00:00.000001"}}),
    new TypeCase("uuid", "uuid", UUID.class, new Object[] {UUID.fromString("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), new UUID(0, 0)},
        new String[][] {{"A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"}, {"{a0eebc999c0b4ef8bb6d6bb9bd380a11}", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"}}),
    new TypeCase("json", "json", PGobject.class, new Object[] {pgobject("json", "{\"b\": 1,  \"a\": [1, 2]}"), pgobject("json", "\"héllo ☃\"")},
        new String[][] {{"{\"b\": 1,  \"a\": [1, 2]}", "{\"b\": 1,  \"a\": [1, 2]}"}, {"[1e2, \"\\u00e9\"]", "[1e2, \"\\u00e9\"]"}}),
    new TypeCase("jsonb", "jsonb", PGobject.class,
        new Object[] {new Becomes(pgobject("jsonb", "{\"b\":1,\"a\":[1,2.50]}"), pgobject("jsonb", "{\"a\": [1, 2.50], \"b\": 1}")), pgobject("jsonb", "{}")},
        new String[][] {{"{\"b\":1,\"a\":[1,2.50]}", "{\"a\": [1, 2.50], \"b\": 1}"}, {"[1e2, \"\\u00e9\", {\"a\": 1, \"a\": 2}, null]", "[100, \"é\", {\"a\": 2}, null]"}}),
    new TypeCase("int4_array", "int4[]", java.sql.Array.class, new Object[] {new Integer[] {1, null, 3}, new Integer[0], new Integer[] {Integer.MIN_VALUE, Integer.MAX_VALUE}},
        new String[][] {{"{1,NULL,3}", "{1,NULL,3}"}, {"{}", "{}"}, {" { -2147483648 , 2147483647 } ", "{-2147483648,2147483647}"}, {"[0:1]={1,2}", "[0:1]={1,2}"}}),
    new TypeCase("text_array", "text[]", java.sql.Array.class,
        new Object[] {new String[] {"a \"quoted\" b", "with, comma", null, "héllo ☃", "", "NULL", "back\\slash", "{braces}", " spaced "}, new String[0]},
        new String[][] {{"{\"a \\\"quoted\\\" b\",\"with, comma\",NULL,héllo ☃,\"\",\"NULL\",\"back\\\\slash\",\"{braces}\",\" spaced \",plain}",
          "{\"a \\\"quoted\\\" b\",\"with, comma\",NULL,\"héllo ☃\",\"\",\"NULL\",\"back\\\\slash\",\"{braces}\",\" spaced \",plain}"}, {"{}", "{}"}}),
    new TypeCase("float8_array", "float8[]", java.sql.Array.class,
        new Object[] {new Double[] {0.1, -2.5e100, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, Double.NaN, null}},
        new String[][] {{"{0.1,-2.5e100,Infinity,-Infinity,NaN,NULL}", "{0.1,-2.5e+100,Infinity,-Infinity,NaN,NULL}"}}),
    new TypeCase("numeric_array", "numeric[]", java.sql.Array.class,
        new Object[] {new BigDecimal[] {new BigDecimal("1.500"), new BigDecimal("-0.000123"), new BigDecimal("123456789012345678901234567890.12345"), null, new BigDecimal("100000000000000000000")}},
        new String[][] {{"{1.500,-0.000123,1e20,NULL,NaN}", "{1.500,-0.000123,100000000000000000000,NULL,NaN}"}}),
    new TypeCase("bool_array", "bool[]", java.sql.Array.class, new Object[] {new Boolean[] {true, false, null}}, new String[][] {{"{t,false,NULL}", "{t,f,NULL}"}}),
    new TypeCase("date_array", "date[]", java.sql.Array.class,
        new Object[] {new java.sql.Date[] {java.sql.Date.valueOf("2000-02-29"), null, java.sql.Date.valueOf("1969-07-20")}},
        new String[][] {{"{2000-02-29,NULL,1969-07-20}", "{2000-02-29,NULL,1969-07-20}"}}),
    new TypeCase("timestamptz_array", "timestamptz[]", java.sql.Array.class,
        new Object[] {new Timestamp[] {instant("2024-01-02T03:04:05.5Z"), instant("1969-07-20T20:17:40Z"), null}},
        new String[][] {{"{\"2024-01-02 05:04:05.5+02\",\"1969-07-20 20:17:40Z\",NULL}", "{\"2024-01-02 03:04:05.5+00\",\"1969-07-20 20:17:40+00\",NULL}"}}),
    new TypeCase("uuid_array", "uuid[]", java.sql.Array.class, new Object[] {new UUID[] {UUID.fromString("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), null}},
        new String[][] {{"{A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11,NULL}", "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11,NULL}"}}),
    new TypeCase("jsonb_array", "jsonb[]", java.sql.Array.class,
        new Object[] {new Becomes(new String[] {"{\"b\":1,\"a\":[1,2.50]}", null, "\"x\""}, new String[] {"{\"a\": [1, 2.50], \"b\": 1}", null, "\"x\""})},
        new String[][] {{"{\"{\\\"b\\\":1,\\\"a\\\":[1,2.50]}\",NULL,\"[1, 2]\"}", "{\"{\\\"a\\\": [1, 2.50], \\\"b\\\": 1}\",NULL,\"[1, 2]\"}"}}),
    new TypeCase("int4_array_2d", "int4[][]", java.sql.Array.class, new Object[] {new Integer[][] {{1, 2, 3}, {4, null, 6}}, new Integer[][] {{1}, {2}}},
        new String[][] {{"{{1,2,3},{4,NULL,6}}", "{{1,2,3},{4,NULL,6}}"}, {"{{1},{2}}", "{{1},{2}}"}}),
  };

  static byte[] allBytes() {
    byte[] b = new byte[256];
    for (int i = 0; i < 256; i++) {
      b[i] = (byte) i;
    }
    return b;
  }

  /** The types pgjdbc reads in binary format once a statement is prepared on the server. */
  static final List<String> PGJDBC_BINARY =
      List.of("int2", "int4", "int8", "float4", "float8", "numeric", "timestamp", "timestamptz", "date", "time", "timetz", "uuid", "bytea",
          "int4_array", "text_array", "float8_array", "int4_array_2d");

  static Object get(ResultSet rs, TypeCase t) throws SQLException {
    if (t.cls() == java.sql.Array.class) {
      java.sql.Array a = rs.getArray(1);
      return a == null ? null : a.getArray();
    }
    if (PGobject.class.isAssignableFrom(t.cls())) {
      return rs.getObject(1); // getObject(1, cls) makes a PGobject of NULL too
    }
    return t.cls() == byte[].class ? rs.getBytes(1) : rs.getObject(1, t.cls());
  }

  /** Sets a typed value: arrays through createArrayOf with the element type. */
  static void set(PreparedStatement ps, int i, TypeCase t, Object v) throws SQLException {
    if (t.cls() == java.sql.Array.class) {
      String elem = t.coltype().substring(0, t.coltype().indexOf('['));
      ps.setArray(i, ps.getConnection().createArrayOf(elem, (Object[]) v));
    } else {
      ps.setObject(i, v);
    }
  }

  static void createTyped(Connection c, TypeCase t) throws SQLException {
    exec(c, "drop table if exists typed");
    exec(c, "create table typed (id int4 primary key, v " + t.coltype() + ")");
  }

  static void checkNull(Connection c, TypeCase t) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("insert into typed (id, v) values (-1, ?)")) {
      ps.setNull(1, Types.OTHER);
      ps.executeUpdate();
    }
    try (PreparedStatement ps = c.prepareStatement("select v from typed where id = -1");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      eq(get(rs, t), null, "null");
    }
  }

  /** Typed values through setObject/getObject; `format` is the result format to expect. */
  static void typedRoundTrip(Connection c, TypeCase t, int format) throws SQLException {
    createTyped(c, t);
    int id = 0;
    for (Object value : t.values()) {
      id++;
      Object v = value instanceof Becomes b ? b.sent() : value;
      Object want = value instanceof Becomes b ? b.want() : value;
      try (PreparedStatement ps = c.prepareStatement("insert into typed (id, v) values (?, ?)")) {
        ps.setInt(1, id);
        set(ps, 2, t, v);
        ps.executeUpdate();
      }
      for (String sql : new String[] {"select v from typed where id = ?", "select ?::" + t.coltype()}) {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
          if (sql.startsWith("select v")) {
            ps.setInt(1, id);
          } else {
            set(ps, 1, t, v);
          }
          try (ResultSet rs = ps.executeQuery()) {
            eq(rs.next(), true, sql);
            eq(rs.getMetaData().unwrap(PGResultSetMetaData.class).getFormat(1), format, "result format of " + sql);
            eq(get(rs, t), want, t.coltype() + ": " + sql);
          }
        }
      }
    }
    checkNull(c, t);
  }

  static void typeChecks() {
    for (TypeCase t : TYPES) {
      // Unnamed statements, never described ahead: text parameters and results.
      check(
          "roundtrip_text_" + t.name(),
          "0",
          c -> {
            typedRoundTrip(c, t, 0);
            createTyped(c, t);
            int id = 0;
            for (String[] p : t.texts()) {
              id++;
              try (PreparedStatement ps = c.prepareStatement("insert into typed (id, v) values (?, ?)")) {
                ps.setInt(1, id);
                ps.setObject(2, p[0], Types.OTHER); // untyped text parameter
                ps.executeUpdate();
              }
              eq(rows(c, "select v from typed where id = ?", id), List.of(p[1]), t.coltype() + " " + p[0]);
              try (PreparedStatement ps = c.prepareStatement("select ?::" + t.coltype())) {
                ps.setObject(1, p[0], Types.OTHER);
                try (ResultSet rs = ps.executeQuery()) {
                  rs.next();
                  eq(rs.getString(1), p[1], t.coltype() + " " + p[0]);
                }
              }
              try (Statement s = c.createStatement();
                  ResultSet rs = s.executeQuery("select '" + p[0].replace("'", "''") + "'::" + t.coltype())) {
                rs.next();
                eq(rs.getString(1), p[1], "simple query " + t.coltype() + " " + p[0]);
              }
            }
          });
      // Named statements from the first execution: binary results for the types pgjdbc reads
      // in binary (bool, the character types, interval, json, jsonb and the arrays of other
      // element types stay text).
      check(
          "roundtrip_binary_" + t.name(),
          "-1",
          c -> typedRoundTrip(c, t, PGJDBC_BINARY.contains(t.name()) ? 1 : 0));
    }

    // The default: a PreparedStatement becomes a named server statement at its fifth execution
    // (prepareThreshold=5) and reads binary results from the sixth on.
    check(
        "prepare_threshold_switch",
        c -> {
          exec(c, "drop table if exists typed");
          exec(c, "create table typed (id int4 primary key, n numeric, ts timestamptz, d date, b bytea, i int8)");
          try (PreparedStatement ps = c.prepareStatement("insert into typed values (?, ?, ?, ?, ?, ?)")) {
            for (int i = 0; i < 8; i++) {
              ps.setInt(1, i);
              ps.setBigDecimal(2, new BigDecimal("1.50").add(BigDecimal.valueOf(i)));
              ps.setObject(3, OffsetDateTime.of(2024, 1, 2, 3, 4, 5, 0, ZoneOffset.UTC).plusDays(i));
              ps.setObject(4, LocalDate.of(2024, 2, 29).plusDays(i));
              ps.setBytes(5, new byte[] {(byte) i, -1});
              ps.setLong(6, Long.MAX_VALUE - i);
              ps.executeUpdate();
            }
          }
          List<Integer> formats = new ArrayList<>();
          try (PreparedStatement ps = c.prepareStatement("select n, ts, d, b, i from typed where id = ?")) {
            for (int i = 0; i < 8; i++) {
              ps.setInt(1, i);
              try (ResultSet rs = ps.executeQuery()) {
                eq(rs.next(), true, "row " + i);
                formats.add(rs.getMetaData().unwrap(PGResultSetMetaData.class).getFormat(1));
                eq(rs.getBigDecimal(1), new BigDecimal("1.50").add(BigDecimal.valueOf(i)), "numeric " + i);
                eq(rs.getObject(2, OffsetDateTime.class), OffsetDateTime.of(2024, 1, 2, 3, 4, 5, 0, ZoneOffset.UTC).plusDays(i), "timestamptz " + i);
                eq(rs.getObject(3, LocalDate.class), LocalDate.of(2024, 2, 29).plusDays(i), "date " + i);
                eq(rs.getBytes(4), new byte[] {(byte) i, -1}, "bytea " + i);
                eq(rs.getLong(5), Long.MAX_VALUE - i, "int8 " + i);
              }
            }
          }
          eq(formats, List.of(0, 0, 0, 0, 0, 1, 1, 1), "result formats per execution");
        });
  }

  public static void main(String[] args) {
    TimeZone.setDefault(TimeZone.getTimeZone("UTC"));
    shopChecks();
    typeChecks();
    List<String> report = new ArrayList<>();
    int passed = 0;
    int failed = 0;
    int known = 0;
    for (String name : names) {
      String msg = null;
      try (Connection c = connect(thresholds.get(name))) {
        checks.get(name).run(c);
      } catch (Failure f) {
        msg = f.getMessage();
      } catch (Exception e) {
        msg = e.toString();
      }
      String why = ON_STRATA ? KNOWN_FAILURES.get(name) : null;
      if (why != null && msg != null) {
        report.add("known failure: " + name + ": " + why + " (got " + msg.replaceAll("\\s+", " ") + ")");
        System.out.println("xfail " + name);
        known++;
      } else if (why != null) {
        report.add("UNEXPECTED PASS: " + name);
        System.out.println("ok " + name);
        passed++;
      } else if (msg != null) {
        System.out.println("FAIL " + name + ": " + msg);
        failed++;
      } else {
        System.out.println("ok " + name);
        passed++;
      }
    }
    report.forEach(System.out::println);
    System.out.println(known + " known failures");
    System.out.println(passed + " passed, " + failed + " failed");
    System.exit(failed == 0 ? 0 : 1);
  }
}
