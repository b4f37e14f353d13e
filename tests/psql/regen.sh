#!/usr/bin/env bash
# Regenerates the expected outputs from a real PostgreSQL (the oracle):
#   tests/psql/regen.sh <port>      (PostgreSQL listening on 127.0.0.1:<port>, trust auth)
set -euo pipefail
cd "$(dirname "$0")"
port=${1:?usage: regen.sh <postgres port>}
for f in *.sql; do
  psql -X -h 127.0.0.1 -p "$port" -U postgres -d postgres -f "$f" > "${f%.sql}.out" 2>&1 || true
done
