"""asyncpg over TLS against a Strata proxy: verify-full against the given root
certificate for the host name STRATA_TLS_HOST (tlsdrv.localhost) over a TCP
connection to 127.0.0.1, so the proxy routes by the SNI name (tenant tlsdrv,
the only one with table tls_probe); SCRAM-SHA-256 as STRATA_TLS_USER (the
SASLInitialResponse seen in the TLS plaintext); a wrong password refused with
28P01; a certificate that does not cover STRATA_TLS_WRONG_HOST
(tlsdrv.example.com) refused. asyncpg has no channel binding: its SCRAM
(asyncpg/protocol/scram.pyx) offers only SCRAM-SHA-256 and hard-codes the gs2
header "n,,".

How the name reaches 127.0.0.1: asyncpg sends SNI and verifies the
certificate for the host it connects to, and tlsdrv.localhost need not
resolve on the machine, so the TCP host is 127.0.0.1 and the SSL context below
hands the wanted name to the handshake (Python's SNI and hostname check both
use the server_hostname wrap_bio gets).

The host name check is libpq's (verify-full), not OpenSSL's: Strata's
self-signed certificate names "*.localhost", and OpenSSL's X509_check_host
(Python's check_hostname) takes a wildcard only with two more labels after it
(RFC 6125 caution), so it refuses tlsdrv.localhost where libpq, Go and pgjdbc
accept it. OpenSSL still verifies the chain (CERT_REQUIRED with the root
certificate); the name is checked in the handshake, before the startup
message, by libpq's rule: a SAN dNSName equal to the name, or "*.REST" with
the name's first label for the "*", or an iPAddress SAN equal to it.

Run with the driver venv's python (see ../run-tls); environment STRATA_PORT,
STRATA_TLS_CA, STRATA_TLS_HOST, STRATA_TLS_WRONG_HOST, STRATA_TLS_USER,
STRATA_TLS_PASSWORD. Prints one line per check; exits 1 if one failed."""

import asyncio
import os
import ssl
import sys

import asyncpg

PORT = int(os.environ["STRATA_PORT"])
CA = os.environ["STRATA_TLS_CA"]
HOST = os.environ.get("STRATA_TLS_HOST", "tlsdrv.localhost")
WRONG_HOST = os.environ.get("STRATA_TLS_WRONG_HOST", "tlsdrv.example.com")
USER = os.environ.get("STRATA_TLS_USER", "tlsuser")
PASSWORD = os.environ.get("STRATA_TLS_PASSWORD", "tlspw")
TIMEOUT = 10  # seconds, for each connect, query and close


def libpq_name_matches(name, cert):
    """libpq's verify-full name check (fe-secure-common.c,
    pq_verify_peer_name_matches_certificate_name) over the SAN entries."""
    name = name.lower()
    first, dot, rest = name.partition(".")
    for kind, value in cert.get("subjectAltName", ()):
        value = value.lower()
        if kind == "DNS" and (value == name or
                              (value.startswith("*.") and first and dot and value[2:] == rest)):
            return True
        if kind == "IP Address" and value == name:
            return True
    return False


class CheckedSSLObject(ssl.SSLObject):
    """Checks the peer's name once the handshake verified the chain, and
    keeps the plaintext the client writes (to see its SASL messages)."""

    def do_handshake(self):
        super().do_handshake()  # SSLWantReadError until the handshake is done
        ctx = self.context
        cert = self.getpeercert()
        if not libpq_name_matches(ctx.tls_name, cert):
            sans = ", ".join(v for _, v in cert.get("subjectAltName", ()))
            e = ssl.SSLCertVerificationError(
                1, f"certificate verify failed: Hostname mismatch, certificate "
                   f"is not valid for {ctx.tls_name!r} (it names {sans})")
            e.verify_code = 62  # X509_V_ERR_HOSTNAME_MISMATCH
            e.verify_message = e.strerror
            raise e
        ctx.name_checked = True

    def write(self, data):
        n = super().write(data)
        self.context.sent += bytes(data)[:n]
        return n


class NamedContext(ssl.SSLContext):
    """An SSL context that sends tls_name as SNI and verifies the certificate
    for it, whatever host asyncpg connected the socket to."""

    sslobject_class = CheckedSSLObject

    def wrap_bio(self, incoming, outgoing, server_side=False,
                 server_hostname=None, session=None):
        return super().wrap_bio(incoming, outgoing, server_side=server_side,
                                server_hostname=self.tls_name, session=session)


def context(name):
    ctx = NamedContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False  # the name: CheckedSSLObject.do_handshake
    ctx.verify_mode = ssl.CERT_REQUIRED  # the chain: OpenSSL
    ctx.load_verify_locations(cafile=CA)
    ctx.tls_name = name
    ctx.name_checked = False
    ctx.sent = bytearray()
    return ctx


async def connect(name, password):
    ctx = context(name)
    conn = await asyncpg.connect(
        host="127.0.0.1", port=PORT, user=USER, password=password,
        database="postgres", ssl=ctx, timeout=TIMEOUT,
        command_timeout=TIMEOUT)
    return conn, ctx


async def verify_full_sni_scram():
    conn, ctx = await connect(HOST, PASSWORD)
    try:
        ssl_object = conn._transport.get_extra_info("ssl_object")
        assert ssl_object is not None, "the connection is not TLS"
        assert ssl_object.server_hostname == HOST, ssl_object.server_hostname
        assert ctx.name_checked, "the certificate's name was not checked"
        assert b"SCRAM-SHA-256\x00" in ctx.sent and b"n,,n=" in ctx.sent, \
            "no SCRAM-SHA-256 SASLInitialResponse was sent"
        rows = [tuple(r) for r in await conn.fetch("select v from tls_probe")]
        assert rows == [("tlsdrv",)], rows
        return f"{ssl_object.version()}, SNI {HOST}, SCRAM-SHA-256, tls_probe = tlsdrv"
    finally:
        await conn.close(timeout=TIMEOUT)


async def wrong_password_refused():
    try:
        conn, _ = await connect(HOST, PASSWORD + "-wrong")
    except asyncpg.InvalidPasswordError as e:
        assert e.sqlstate == "28P01", e.sqlstate
        return f"28P01 {e}"
    await conn.close(timeout=TIMEOUT)
    raise AssertionError("connected with a wrong password")


async def wrong_hostname_refused():
    try:
        conn, _ = await connect(WRONG_HOST, PASSWORD)
    except ssl.SSLCertVerificationError as e:
        # 62 is X509_V_ERR_HOSTNAME_MISMATCH: the chain verified, the name not.
        assert e.verify_code == 62, f"verify_code {e.verify_code}: {e}"
        return f"{WRONG_HOST}: {e.verify_message}"
    await conn.close(timeout=TIMEOUT)
    raise AssertionError(f"connected to {WRONG_HOST} although the certificate does not cover it")


async def main():
    failed = 0
    for check in (verify_full_sni_scram, wrong_password_refused, wrong_hostname_refused):
        try:
            what = await asyncio.wait_for(check(), 3 * TIMEOUT)
            print(f"ok {check.__name__}: {what}", flush=True)
        except Exception as e:  # report it and go on with the next check
            failed += 1
            print(f"FAIL {check.__name__}: {type(e).__name__}: {e or '(no message)'}", flush=True)
        if check is verify_full_sni_scram:
            print("no channel binding in asyncpg", flush=True)
    return failed


if __name__ == "__main__":
    sys.exit(1 if asyncio.run(main()) else 0)
