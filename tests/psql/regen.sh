#!/usr/bin/env bash
# Regenerates the expected outputs (*.out) from a real PostgreSQL 15, the
# oracle, started by testkit; review the diff like code.
set -euo pipefail
cd "$(dirname "$0")/../.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/strata-target}
UPDATE_GOLDENFILES=1 STRATA_TEST_TARGET=postgres cargo test -p e2e --test psql -- psql_scripts_match_postgres
