package strata.drivers;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;
import javax.net.SocketFactory;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLSocket;
import org.postgresql.ssl.LibPQFactory;
import org.postgresql.util.PSQLException;

/**
 * pgjdbc over TLS against a Strata proxy: sslmode=verify-full against the given root certificate
 * (sslrootcert, pgjdbc's LibPQFactory and PgjdbcHostnameVerifier) for the host name
 * STRATA_TLS_HOST (tlsdrv.localhost) with the TCP connection going to 127.0.0.1, so the proxy
 * routes by the SNI name (tenant tlsdrv, the only one with table tls_probe); SCRAM-SHA-256 as
 * STRATA_TLS_USER with channelBinding=disable, then SCRAM-SHA-256-PLUS with channelBinding=require
 * (pgjdbc 42.7.4: tls-server-end-point), the mechanism read from pgjdbc's ScramAuthenticator log; a
 * wrong password refused with 28P01; a certificate that does not cover STRATA_TLS_WRONG_HOST
 * (tlsdrv.example.com) refused by the hostname verifier.
 *
 * <p>How the name reaches 127.0.0.1: the URL names the host, which pgjdbc uses for SNI and the
 * hostname check, and the socketFactory below connects every socket to 127.0.0.1 at the port
 * asked for, so the name need not resolve on the machine. The TLS socket pgjdbc made is seen
 * through sslfactory, LibPQFactory itself with the socket kept.
 *
 * <p>Environment (set by ../run-tls): STRATA_PORT, STRATA_TLS_CA, STRATA_TLS_HOST,
 * STRATA_TLS_WRONG_HOST, STRATA_TLS_USER, STRATA_TLS_PASSWORD. Prints one line per check; exits 1
 * if one failed.
 */
public final class TlsCheck {
  static final String PORT = Objects.requireNonNull(System.getenv("STRATA_PORT"), "STRATA_PORT");
  static final String CA = Objects.requireNonNull(System.getenv("STRATA_TLS_CA"), "STRATA_TLS_CA");
  static final String HOST = env("STRATA_TLS_HOST", "tlsdrv.localhost");
  static final String WRONG_HOST = env("STRATA_TLS_WRONG_HOST", "tlsdrv.example.com");
  static final String USER = env("STRATA_TLS_USER", "tlsuser");
  static final String PASSWORD = env("STRATA_TLS_PASSWORD", "tlspw");
  static final int TIMEOUT_S = 10; // connect, login and each read

  /** The TLS socket of the last connection (set by RecordingSslFactory). */
  static volatile SSLSocket lastTls;

  /** pgjdbc's SCRAM log lines; the logger is held here so that its level stays. */
  static final List<String> SCRAM_LOG = new ArrayList<>();

  static final Logger SCRAM_LOGGER = Logger.getLogger("org.postgresql.core.v3.ScramAuthenticator");

  private TlsCheck() {}

  static String env(String name, String def) {
    String v = System.getenv(name);
    return v == null || v.isEmpty() ? def : v;
  }

  /** Connects every socket to 127.0.0.1, at the port pgjdbc asks for, whatever the host name. */
  public static final class LoopbackSocketFactory extends SocketFactory {
    public LoopbackSocketFactory() {}

    @Override
    public Socket createSocket() {
      return new LoopbackSocket();
    }

    @Override
    public Socket createSocket(String host, int port) throws IOException {
      return connected(port);
    }

    @Override
    public Socket createSocket(String host, int port, InetAddress localHost, int localPort)
        throws IOException {
      return connected(port);
    }

    @Override
    public Socket createSocket(InetAddress host, int port) throws IOException {
      return connected(port);
    }

    @Override
    public Socket createSocket(InetAddress address, int port, InetAddress localAddress, int localPort)
        throws IOException {
      return connected(port);
    }

    private static Socket connected(int port) throws IOException {
      Socket s = new LoopbackSocket();
      s.connect(InetSocketAddress.createUnresolved("loopback", port), TIMEOUT_S * 1000);
      return s;
    }
  }

  static final class LoopbackSocket extends Socket {
    @Override
    public void connect(SocketAddress endpoint, int timeout) throws IOException {
      int port = ((InetSocketAddress) endpoint).getPort();
      InetAddress loopback = InetAddress.getByAddress(new byte[] {127, 0, 0, 1});
      super.connect(new InetSocketAddress(loopback, port), timeout);
    }
  }

  /** pgjdbc's own LibPQFactory (sslmode, sslrootcert), keeping the TLS socket it makes. */
  public static final class RecordingSslFactory extends LibPQFactory {
    public RecordingSslFactory(Properties info) throws PSQLException {
      super(info);
    }

    @Override
    public Socket createSocket(Socket socket, String host, int port, boolean autoClose)
        throws IOException {
      Socket s = super.createSocket(socket, host, port, autoClose);
      if (s instanceof SSLSocket) {
        lastTls = (SSLSocket) s;
      }
      return s;
    }
  }

  static Connection connect(String host, String password, String channelBinding) throws SQLException {
    Properties p = new Properties();
    p.setProperty("user", USER);
    p.setProperty("password", password);
    p.setProperty("sslmode", "verify-full");
    p.setProperty("sslrootcert", CA);
    p.setProperty("sslfactory", RecordingSslFactory.class.getName());
    p.setProperty("socketFactory", LoopbackSocketFactory.class.getName());
    p.setProperty("channelBinding", channelBinding);
    p.setProperty("connectTimeout", String.valueOf(TIMEOUT_S));
    p.setProperty("loginTimeout", String.valueOf(TIMEOUT_S));
    p.setProperty("socketTimeout", String.valueOf(TIMEOUT_S));
    p.setProperty("gssEncMode", "disable");
    lastTls = null;
    synchronized (SCRAM_LOG) {
      SCRAM_LOG.clear();
    }
    return DriverManager.getConnection("jdbc:postgresql://" + host + ":" + PORT + "/postgres", p);
  }

  /** The SCRAM mechanism pgjdbc used on the last connection, from its log. */
  static String scramMechanism() {
    synchronized (SCRAM_LOG) {
      for (String line : SCRAM_LOG) {
        int i = line.indexOf("Using SCRAM mechanism:");
        if (i >= 0) {
          return line.substring(i + "Using SCRAM mechanism:".length()).trim();
        }
      }
      return "none (log: " + SCRAM_LOG + ")";
    }
  }

  /** The TLS version of the last connection, after checking its SNI name. */
  static String tlsOf(String host) {
    SSLSocket s = lastTls;
    check(s != null, "the connection is not TLS (no socket from sslfactory)");
    String protocol = s.getSession().getProtocol();
    check(protocol.startsWith("TLS"), "TLS session protocol " + protocol);
    check(
        Objects.equals(s.getSSLParameters().getServerNames(), List.of(new SNIHostName(host))),
        "SNI " + s.getSSLParameters().getServerNames());
    return protocol;
  }

  static void check(boolean ok, String what) {
    if (!ok) {
      throw new IllegalStateException(what);
    }
  }

  static String probe(Connection c) throws SQLException {
    List<String> got = new ArrayList<>();
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("select v from tls_probe")) {
      while (rs.next()) {
        got.add(rs.getString(1));
      }
    }
    check(got.equals(List.of("tlsdrv")), "tls_probe: " + got + ", want [tlsdrv]");
    return "tls_probe = tlsdrv";
  }

  static String verifyFullSniScram() throws SQLException {
    try (Connection c = connect(HOST, PASSWORD, "disable")) {
      String tls = tlsOf(HOST);
      String mech = scramMechanism();
      check(mech.equals("SCRAM-SHA-256"), "SCRAM mechanism " + mech);
      return tls + ", SNI " + HOST + ", " + mech + ", " + probe(c);
    }
  }

  static String channelBindingRequired() throws SQLException {
    try (Connection c = connect(HOST, PASSWORD, "require")) {
      String tls = tlsOf(HOST);
      String mech = scramMechanism();
      check(mech.equals("SCRAM-SHA-256-PLUS"), "SCRAM mechanism " + mech);
      try (Statement st = c.createStatement();
          ResultSet rs = st.executeQuery("select 1")) {
        check(rs.next() && rs.getInt(1) == 1 && !rs.next(), "select 1");
      }
      return tls + ", " + mech + ", select 1";
    }
  }

  static String wrongPasswordRefused() throws SQLException {
    try {
      connect(HOST, PASSWORD + "-wrong", "disable").close();
    } catch (SQLException e) {
      check("28P01".equals(e.getSQLState()), "want 28P01, got " + e.getSQLState() + ": " + e);
      return "28P01 " + e.getMessage();
    }
    throw new IllegalStateException("connected with a wrong password");
  }

  static String wrongHostnameRefused() throws SQLException {
    try {
      connect(WRONG_HOST, PASSWORD, "disable").close();
    } catch (SQLException e) {
      // MakeSSL.verifyPeerName, after the handshake verified the chain.
      check(
          e.getMessage() != null
              && e.getMessage().contains("The hostname " + WRONG_HOST + " could not be verified"),
          "want a hostname verification error, got " + e);
      return WRONG_HOST + ": " + e.getMessage();
    }
    throw new IllegalStateException(
        "connected to " + WRONG_HOST + " although the certificate does not cover it");
  }

  public static void main(String[] args) {
    SCRAM_LOGGER.setLevel(Level.FINEST);
    SCRAM_LOGGER.setUseParentHandlers(false);
    SCRAM_LOGGER.addHandler(
        new Handler() {
          final SimpleFormatter formatter = new SimpleFormatter();

          @Override
          public void publish(LogRecord r) {
            synchronized (SCRAM_LOG) {
              SCRAM_LOG.add(formatter.formatMessage(r));
            }
          }

          @Override
          public void flush() {}

          @Override
          public void close() {}
        });
    DriverManager.setLoginTimeout(TIMEOUT_S);

    List<String> names =
        List.of(
            "verify_full_sni_scram",
            "channel_binding_required",
            "wrong_password_refused",
            "wrong_hostname_refused");
    List<Callable<String>> checks =
        List.of(
            TlsCheck::verifyFullSniScram,
            TlsCheck::channelBindingRequired,
            TlsCheck::wrongPasswordRefused,
            TlsCheck::wrongHostnameRefused);
    int failed = 0;
    for (int i = 0; i < checks.size(); i++) {
      try {
        System.out.println("ok " + names.get(i) + ": " + checks.get(i).call());
      } catch (Exception e) {
        failed++;
        System.out.println("FAIL " + names.get(i) + ": " + e);
      }
    }
    System.exit(failed > 0 ? 1 : 0);
  }
}
