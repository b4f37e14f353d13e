// node-postgres (pg) over TLS against a Strata proxy: verify-full against the
// given root certificate for the host name STRATA_TLS_HOST (tlsdrv.localhost)
// over a TCP connection to 127.0.0.1, so the proxy routes by the SNI name
// (tenant tlsdrv, the only one with table tls_probe); SCRAM-SHA-256 as
// STRATA_TLS_USER (the SASL exchange seen on pg's connection object);
// a wrong password refused with 28P01; a certificate that does not cover
// STRATA_TLS_WRONG_HOST (tlsdrv.example.com) refused. pg 8.13.1 has no
// channel binding: lib/crypto/sasl.js offers only SCRAM-SHA-256 with the gs2
// header "n,," (enableChannelBinding came in a later pg).
//
// How the name reaches 127.0.0.1: pg connects to `host` and passes the `ssl`
// object to tls.connect, whose `servername` is both the SNI name and the name
// the certificate is checked for; tlsdrv.localhost need not resolve.
//
// The name check is libpq's (verify-full), not Node's alone: Strata's
// self-signed certificate names "*.localhost", and tls.checkServerIdentity
// takes a wildcard only with two more labels after it (RFC 6125 caution), so
// it refuses tlsdrv.localhost where libpq, Go and pgjdbc accept it. The
// chain is Node's (rejectUnauthorized with the root certificate as `ca`); the
// name goes through tls.checkServerIdentity first and, when that refuses it,
// libpq's rule: a SAN dNSName "*.REST" matches the name whose first label
// stands for the "*".
//
// Environment (set by ../run-tls): STRATA_PORT, STRATA_TLS_CA,
// STRATA_TLS_HOST, STRATA_TLS_WRONG_HOST, STRATA_TLS_USER,
// STRATA_TLS_PASSWORD. Prints one line per check; exits 1 if one failed.
'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const tls = require('node:tls');
const pg = require('pg');

const PORT = Number(process.env.STRATA_PORT);
assert.ok(PORT > 0, 'STRATA_PORT must be set');
const CA = fs.readFileSync(process.env.STRATA_TLS_CA);
const HOST = process.env.STRATA_TLS_HOST || 'tlsdrv.localhost';
const WRONG_HOST = process.env.STRATA_TLS_WRONG_HOST || 'tlsdrv.example.com';
const USER = process.env.STRATA_TLS_USER || 'tlsuser';
const PASSWORD = process.env.STRATA_TLS_PASSWORD || 'tlspw';
const TIMEOUT_MS = 10000; // each connect and query

// The whole run: well under the caller's limit.
setTimeout(() => {
  console.log('FAIL timeout: the TLS check took more than 45 s');
  process.exit(1);
}, 45000).unref();

const notes = new Set();

// tls.checkServerIdentity, then libpq's wildcard rule where Node is stricter.
function checkServerIdentity(name, cert) {
  const err = tls.checkServerIdentity(name, cert);
  if (!err) return undefined;
  const [first, ...rest] = name.toLowerCase().split('.');
  const dnsNames = (cert.subjectaltname || '').split(', ')
    .filter((san) => san.startsWith('DNS:')).map((san) => san.slice(4).toLowerCase());
  if (first && rest.length > 0 && dnsNames.includes('*.' + rest.join('.'))) {
    notes.add(`note: tls.checkServerIdentity refuses ${name} for *.${rest.join('.')}; ` +
      'accepted by libpq\'s rule');
    return undefined;
  }
  return err;
}

// A connected client for `servername` (SNI and certificate name) at
// 127.0.0.1, and the authentication messages the server sent it.
async function connect(servername, password) {
  const client = new pg.Client({
    host: '127.0.0.1', port: PORT, user: USER, password, database: 'postgres',
    ssl: { ca: CA, servername, rejectUnauthorized: true, checkServerIdentity },
    connectionTimeoutMillis: TIMEOUT_MS, query_timeout: TIMEOUT_MS,
  });
  const auth = [];
  for (const name of ['authenticationSASL', 'authenticationSASLFinal', 'authenticationCleartextPassword',
    'authenticationMD5Password']) {
    client.connection.on(name, (msg) => auth.push(msg.mechanisms ? `${name}(${msg.mechanisms})` : name));
  }
  const con = client.connection;
  const sendInitial = con.sendSASLInitialResponseMessage.bind(con);
  con.sendSASLInitialResponseMessage = (mechanism, data) => {
    auth.push(`SASLInitialResponse(${mechanism})`);
    return sendInitial(mechanism, data);
  };
  client.on('error', () => {}); // a late socket error after a failed connect
  await client.connect();
  return { client, auth };
}

async function verifyFullSniScram() {
  const { client, auth } = await connect(HOST, PASSWORD);
  try {
    const stream = client.connection.stream;
    assert.ok(stream instanceof tls.TLSSocket && stream.encrypted, 'the connection is not TLS');
    assert.ok(stream.authorized, `certificate not verified: ${stream.authorizationError}`);
    // The server may offer SCRAM-SHA-256-PLUS too; pg answers SCRAM-SHA-256.
    assert.ok(auth.length === 3 && /^authenticationSASL\(.*\bSCRAM-SHA-256\b/.test(auth[0]) &&
      auth[1] === 'SASLInitialResponse(SCRAM-SHA-256)' && auth[2] === 'authenticationSASLFinal',
    `authentication: ${auth.join(', ')}`);
    const res = await client.query('select v from tls_probe');
    assert.deepEqual(res.rows, [{ v: 'tlsdrv' }]);
    return `${stream.getProtocol()}, SNI ${HOST}, SCRAM-SHA-256, tls_probe = tlsdrv`;
  } finally {
    await client.end();
  }
}

async function wrongPasswordRefused() {
  let client;
  try {
    ({ client } = await connect(HOST, PASSWORD + '-wrong'));
  } catch (e) {
    assert.equal(e.code, '28P01', `want 28P01, got ${e.code ?? 'no code'}: ${e.message}`);
    return `28P01 ${e.message}`;
  }
  await client.end();
  throw new Error('connected with a wrong password');
}

async function wrongHostnameRefused() {
  let client;
  try {
    ({ client } = await connect(WRONG_HOST, PASSWORD));
  } catch (e) {
    assert.equal(e.code, 'ERR_TLS_CERT_ALTNAME_INVALID',
      `want ERR_TLS_CERT_ALTNAME_INVALID, got ${e.code ?? 'no code'}: ${e.message}`);
    return `${WRONG_HOST}: ${e.message}`;
  }
  await client.end();
  throw new Error(`connected to ${WRONG_HOST} although the certificate does not cover it`);
}

async function main() {
  let failed = 0;
  for (const [name, check] of [['verify_full_sni_scram', verifyFullSniScram],
    ['wrong_password_refused', wrongPasswordRefused], ['wrong_hostname_refused', wrongHostnameRefused]]) {
    try {
      console.log(`ok ${name}: ${await check()}`);
    } catch (e) {
      failed++;
      console.log(`FAIL ${name}: ${e.message.split('\n')[0]}`);
    }
    if (name === 'verify_full_sni_scram') console.log('no channel binding in node');
  }
  for (const note of notes) console.log(note);
  process.exit(failed ? 1 : 0);
}

main();
