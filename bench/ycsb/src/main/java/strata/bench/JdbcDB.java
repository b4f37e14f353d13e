package strata.bench;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.Vector;
import java.util.concurrent.atomic.AtomicInteger;

import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;
import site.ycsb.StringByteIterator;

/**
 * A YCSB binding over plain JDBC, written for the Strata benchmark so that
 * PostgreSQL, PostgreSQL behind PgBouncer and Strata are driven by exactly the
 * same client code.
 *
 * <p>YCSB makes one instance per client thread; each holds one connection in
 * autocommit mode, so every operation is its own transaction (and its own
 * durable commit for writes). Statements are prepared once per shape (operation
 * plus field list) and reused; whether the server sees named prepared
 * statements, unnamed extended-protocol statements or simple queries is decided
 * by the JDBC URL (prepareThreshold, preferQueryMode), which the harness sets
 * per protocol mode.
 *
 * <p>Properties: {@code db.url}, {@code db.user}, {@code db.passwd}, and
 * {@code db.batchsize} (inserts per commit; above 1 only used by the load
 * phase, where it makes loading fast without changing what is measured).
 *
 * <p>The table is {@code usertable(YCSB_KEY varchar primary key, FIELD0..FIELD9
 * text)}, created by the harness before loading. Errors are counted by YCSB as
 * failed operations; the first few messages are printed to stderr, prefixed
 * {@code JDBCDB-ERROR}, so that the harness can report why a cell failed.
 */
public class JdbcDB extends DB {
  private static final int MAX_ERRORS_PRINTED = 5;
  private static final AtomicInteger ERRORS_PRINTED = new AtomicInteger();

  private Connection conn;
  private final Map<String, PreparedStatement> statements = new HashMap<>();
  private int batchSize = 1;
  private int pendingInserts = 0;

  @Override
  public void init() throws DBException {
    Properties p = getProperties();
    String url = p.getProperty("db.url");
    if (url == null) {
      throw new DBException("db.url is not set");
    }
    batchSize = Integer.parseInt(p.getProperty("db.batchsize", "1"));
    try {
      conn = DriverManager.getConnection(url, p.getProperty("db.user", "postgres"), p.getProperty("db.passwd", ""));
      conn.setAutoCommit(batchSize <= 1);
    } catch (SQLException e) {
      report("connect", e);
      throw new DBException(e);
    }
  }

  @Override
  public void cleanup() throws DBException {
    try {
      if (pendingInserts > 0) {
        flushInserts();
      }
      for (PreparedStatement s : statements.values()) {
        s.close();
      }
      conn.close();
    } catch (SQLException e) {
      report("cleanup", e);
      throw new DBException(e);
    }
  }

  @Override
  public Status read(String table, String key, Set<String> fields, Map<String, ByteIterator> result) {
    String cols = fields == null ? "*" : String.join(", ", new TreeSet<>(fields));
    try {
      PreparedStatement s = prepare("read " + table + " " + cols,
          "SELECT " + cols + " FROM " + table + " WHERE YCSB_KEY = ?");
      s.setString(1, key);
      try (ResultSet rs = s.executeQuery()) {
        if (!rs.next()) {
          return Status.NOT_FOUND;
        }
        if (result != null) {
          copyRow(rs, result);
        }
      }
      return Status.OK;
    } catch (SQLException e) {
      return failed("read", e);
    }
  }

  @Override
  public Status scan(String table, String startKey, int recordCount, Set<String> fields,
                     Vector<HashMap<String, ByteIterator>> result) {
    String cols = fields == null ? "*" : String.join(", ", new TreeSet<>(fields));
    try {
      PreparedStatement s = prepare("scan " + table + " " + cols,
          "SELECT " + cols + " FROM " + table + " WHERE YCSB_KEY >= ? ORDER BY YCSB_KEY LIMIT ?");
      s.setString(1, startKey);
      s.setInt(2, recordCount);
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          HashMap<String, ByteIterator> row = new HashMap<>();
          copyRow(rs, row);
          result.add(row);
        }
      }
      return Status.OK;
    } catch (SQLException e) {
      return failed("scan", e);
    }
  }

  @Override
  public Status update(String table, String key, Map<String, ByteIterator> values) {
    TreeMap<String, ByteIterator> sorted = new TreeMap<>(values);
    List<String> sets = new ArrayList<>();
    for (String f : sorted.keySet()) {
      sets.add(f + " = ?");
    }
    String assignments = String.join(", ", sets);
    try {
      PreparedStatement s = prepare("update " + table + " " + assignments,
          "UPDATE " + table + " SET " + assignments + " WHERE YCSB_KEY = ?");
      int i = 1;
      for (ByteIterator v : sorted.values()) {
        s.setString(i++, v.toString());
      }
      s.setString(i, key);
      return s.executeUpdate() == 1 ? Status.OK : Status.NOT_FOUND;
    } catch (SQLException e) {
      return failed("update", e);
    }
  }

  @Override
  public Status insert(String table, String key, Map<String, ByteIterator> values) {
    TreeMap<String, ByteIterator> sorted = new TreeMap<>(values);
    String cols = String.join(", ", sorted.keySet());
    String marks = "?" + ", ?".repeat(sorted.size());
    try {
      PreparedStatement s = prepare("insert " + table + " " + cols,
          "INSERT INTO " + table + " (YCSB_KEY, " + cols + ") VALUES (" + marks + ")");
      s.setString(1, key);
      int i = 2;
      for (ByteIterator v : sorted.values()) {
        s.setString(i++, v.toString());
      }
      if (batchSize <= 1) {
        s.executeUpdate();
        return Status.OK;
      }
      s.addBatch();
      if (++pendingInserts >= batchSize) {
        flushInserts();
      }
      return Status.BATCHED_OK;
    } catch (SQLException e) {
      return failed("insert", e);
    }
  }

  @Override
  public Status delete(String table, String key) {
    try {
      PreparedStatement s = prepare("delete " + table, "DELETE FROM " + table + " WHERE YCSB_KEY = ?");
      s.setString(1, key);
      return s.executeUpdate() == 1 ? Status.OK : Status.NOT_FOUND;
    } catch (SQLException e) {
      return failed("delete", e);
    }
  }

  /** Sends every batched insert and commits them (load phase only). */
  private void flushInserts() throws SQLException {
    for (Map.Entry<String, PreparedStatement> e : statements.entrySet()) {
      if (e.getKey().startsWith("insert ")) {
        e.getValue().executeBatch();
      }
    }
    conn.commit();
    pendingInserts = 0;
  }

  private PreparedStatement prepare(String shape, String sql) throws SQLException {
    PreparedStatement s = statements.get(shape);
    if (s == null) {
      s = conn.prepareStatement(sql);
      statements.put(shape, s);
    }
    return s;
  }

  private static void copyRow(ResultSet rs, Map<String, ByteIterator> out) throws SQLException {
    ResultSetMetaData md = rs.getMetaData();
    for (int c = 1; c <= md.getColumnCount(); c++) {
      String v = rs.getString(c);
      out.put(md.getColumnName(c), new StringByteIterator(v == null ? "" : v));
    }
  }

  private Status failed(String op, SQLException e) {
    report(op, e);
    if (batchSize > 1) {
      try {
        for (PreparedStatement s : statements.values()) {
          s.clearBatch();
        }
        conn.rollback();
      } catch (SQLException ignored) {
        // The connection is already broken; the original error is what matters.
      }
      pendingInserts = 0;
    }
    return Status.ERROR;
  }

  private static void report(String op, SQLException e) {
    if (ERRORS_PRINTED.incrementAndGet() <= MAX_ERRORS_PRINTED) {
      System.err.println("JDBCDB-ERROR " + op + ": [" + e.getSQLState() + "] " + e.getMessage());
    }
  }
}
