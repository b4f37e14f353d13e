// pgx v5 over TLS against a Strata proxy: sslmode=verify-full against the
// given root certificate for the host name STRATA_TLS_HOST (tlsdrv.localhost)
// with the TCP connection going to 127.0.0.1, so the proxy routes by the SNI
// name (tenant tlsdrv, the only one with table tls_probe); SCRAM-SHA-256 as
// STRATA_TLS_USER (the AuthenticationSASL exchange in pgproto3's trace); a
// wrong password refused with 28P01; a certificate that does not cover
// STRATA_TLS_WRONG_HOST (tlsdrv.example.com) refused with an
// x509.HostnameError. pgx v5.7.1 has no channel binding: pgconn/auth_scram.go
// sends only SCRAM-SHA-256 with the gs2 header "n,,", and there is no
// channel_binding setting.
//
// How the name reaches 127.0.0.1: pgconn's Config.LookupFunc resolves the
// host; here it answers 127.0.0.1 for every name, while verify-full keeps
// the host name as tls.Config.ServerName (SNI and the certificate check), so
// tlsdrv.localhost need not resolve on the machine.
//
// Environment (set by ../run-tls): STRATA_PORT, STRATA_TLS_CA,
// STRATA_TLS_HOST, STRATA_TLS_WRONG_HOST, STRATA_TLS_USER,
// STRATA_TLS_PASSWORD. Run: GOFLAGS=-mod=readonly GOPROXY=off go run
// ./tls_check. Prints one line per check; exits 1 if one failed.
package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

const timeout = 10 * time.Second // each connect and query

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	if def == "" {
		fmt.Printf("FAIL setup: %s must be set\n", name)
		os.Exit(2)
	}
	return def
}

var (
	port      = env("STRATA_PORT", "")
	ca        = env("STRATA_TLS_CA", "")
	host      = env("STRATA_TLS_HOST", "tlsdrv.localhost")
	wrongHost = env("STRATA_TLS_WRONG_HOST", "tlsdrv.example.com")
	user      = env("STRATA_TLS_USER", "tlsuser")
	password  = env("STRATA_TLS_PASSWORD", "tlspw")
)

// quote makes a value for a keyword/value connection string.
func quote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// syncBuffer is the trace's writer (pgx may trace from its background reader).
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// connect opens a verify-full connection to name (SNI and certificate name)
// at 127.0.0.1 and returns it with the protocol trace.
func connect(ctx context.Context, name, pw string) (*pgx.Conn, *syncBuffer, error) {
	cfg, err := pgx.ParseConfig(fmt.Sprintf(
		"host=%s port=%s user=%s dbname=postgres sslmode=verify-full sslrootcert=%s connect_timeout=10",
		quote(name), quote(port), quote(user), quote(ca)))
	if err != nil {
		return nil, nil, err
	}
	cfg.Password = pw
	cfg.LookupFunc = func(context.Context, string) ([]string, error) { return []string{"127.0.0.1"}, nil }
	trace := &syncBuffer{}
	cfg.BuildFrontend = func(r io.Reader, w io.Writer) *pgproto3.Frontend {
		f := pgproto3.NewFrontend(r, w)
		f.Trace(trace, pgproto3.TracerOptions{SuppressTimestamps: true})
		return f
	}
	if n := len(cfg.Fallbacks); n != 0 {
		return nil, nil, fmt.Errorf("%d fallback configurations (without TLS?)", n)
	}
	if cfg.TLSConfig == nil || cfg.TLSConfig.InsecureSkipVerify || cfg.TLSConfig.ServerName != name {
		return nil, nil, fmt.Errorf("verify-full did not give a verifying tls.Config for %s", name)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	return conn, trace, err
}

func verifyFullSNIScram(ctx context.Context) (string, error) {
	conn, trace, err := connect(ctx, host, password)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	tc, ok := conn.PgConn().Conn().(*tls.Conn)
	if !ok {
		return "", fmt.Errorf("the connection is a %T, not TLS", conn.PgConn().Conn())
	}
	st := tc.ConnectionState()
	if !st.HandshakeComplete || st.ServerName != host || len(st.VerifiedChains) == 0 {
		return "", fmt.Errorf("TLS state: handshake %v, server name %q, %d verified chains",
			st.HandshakeComplete, st.ServerName, len(st.VerifiedChains))
	}
	t := trace.String()
	if !strings.Contains(t, "B\tAuthenticationSASL\t") || !strings.Contains(t, "B\tAuthenticationSASLFinal\t") {
		return "", fmt.Errorf("no SCRAM exchange in the trace:\n%s", t)
	}
	qctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	rows, err := conn.Query(qctx, "select v from tls_probe")
	if err != nil {
		return "", err
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return "", err
	}
	if len(got) != 1 || got[0] != "tlsdrv" {
		return "", fmt.Errorf("tls_probe: %q, want [tlsdrv]", got)
	}
	return fmt.Sprintf("%s, SNI %s, SCRAM-SHA-256, tls_probe = tlsdrv", tls.VersionName(st.Version), st.ServerName), nil
}

func wrongPasswordRefused(ctx context.Context) (string, error) {
	conn, _, err := connect(ctx, host, password+"-wrong")
	if err == nil {
		conn.Close(ctx)
		return "", errors.New("connected with a wrong password")
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "28P01" {
		return "", fmt.Errorf("want 28P01, got %w", err)
	}
	return "28P01 " + pe.Message, nil
}

func wrongHostnameRefused(ctx context.Context) (string, error) {
	conn, _, err := connect(ctx, wrongHost, password)
	if err == nil {
		conn.Close(ctx)
		return "", fmt.Errorf("connected to %s although the certificate does not cover it", wrongHost)
	}
	var he x509.HostnameError
	if !errors.As(err, &he) {
		return "", fmt.Errorf("want an x509.HostnameError, got %w", err)
	}
	return fmt.Sprintf("%s: %s", wrongHost, he.Error()), nil
}

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	failed := 0
	for _, c := range []struct {
		name string
		run  func(context.Context) (string, error)
	}{
		{"verify_full_sni_scram", verifyFullSNIScram},
		{"wrong_password_refused", wrongPasswordRefused},
		{"wrong_hostname_refused", wrongHostnameRefused},
	} {
		if what, err := c.run(ctx); err != nil {
			failed++
			fmt.Printf("FAIL %s: %v\n", c.name, err)
		} else {
			fmt.Printf("ok %s: %s\n", c.name, what)
		}
		if c.name == "verify_full_sni_scram" {
			fmt.Println("no channel binding in pgx")
		}
	}
	if failed > 0 {
		os.Exit(1)
	}
}
