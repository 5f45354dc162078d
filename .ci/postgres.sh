# shellcheck shell=bash
# Makes a PostgreSQL server reachable on 127.0.0.1:5432 and creates a throwaway database for the tests.
# Sourced by .ci/run; sets PARLEY_TEST_DATABASE_URL and PG_BIN (the server's bin dir, for tests that
# start a private instance).

pg_ready() { pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; }

ensure_postgres() {
  if ! command -v pg_ctlcluster >/dev/null 2>&1 || ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
    apt_install postgresql postgresql-contrib
  fi
  PG_BIN=$(dirname "$(ls -d /usr/lib/postgresql/*/bin/initdb | sort -V | tail -n 1)")
  export PG_BIN
  if ! pg_ready; then
    local version
    version=$(ls /etc/postgresql | sort -V | tail -n 1)
    pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
    for _ in $(seq 1 30); do pg_ready && break; sleep 1; done
  fi
  pg_ready || { echo "PostgreSQL did not start" >&2; return 1; }
  # A fresh Debian install authenticates TCP clients by password: give the superuser one.
  # (On machines configured with trust auth the password is simply ignored.)
  if ! PGPASSWORD=postgres psql -h 127.0.0.1 -U postgres -d postgres -Atc 'select 1' >/dev/null 2>&1; then
    su postgres -c "psql -q -c \"ALTER USER postgres PASSWORD 'postgres'\"" </dev/null
  fi
  PARLEY_CI_DB="parley_ci_$$_$(date +%s)"
  PGPASSWORD=postgres psql -q -h 127.0.0.1 -U postgres -d postgres -c "CREATE DATABASE $PARLEY_CI_DB"
  PARLEY_TEST_DATABASE_URL="postgres://postgres:postgres@127.0.0.1:5432/$PARLEY_CI_DB"
}

drop_test_database() {
  [ -n "${PARLEY_CI_DB:-}" ] || return 0
  PGPASSWORD=postgres psql -q -h 127.0.0.1 -U postgres -d postgres -c "DROP DATABASE IF EXISTS $PARLEY_CI_DB WITH (FORCE)"
}
