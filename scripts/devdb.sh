#!/usr/bin/env bash
# devdb.sh — a private PostgreSQL cluster for development and tests.
#
#   scripts/devdb.sh start   start it (or reuse it when already running) and print its URL
#   scripts/devdb.sh url     print the URL of the running cluster (exit 1 when none)
#   scripts/devdb.sh stop    stop it
#
# With DEVDB_DURABLE=1 the same commands manage a second cluster, with
# PostgreSQL's production durability (fsync, synchronous_commit and
# full_page_writes on): the one make bench measures on. The first keeps them
# off for quick tests.
#
# The cluster's location is recorded under .devdb/ in the checkout. As root the
# data directory lives in a private folder under the system temp directory,
# owned by the postgres user (initdb refuses root, and postgres may not be able
# to enter the checkout); as an ordinary user it lives in .devdb/ itself.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
state="$root/.devdb"
durable=""
if [ "${DEVDB_DURABLE:-}" = 1 ]; then durable=1; state="$root/.devdb/durable"; fi
mkdir -p "$state"
# Parallel test packages start the cluster at the same moment: one at a time.
exec 9>"$state/lock"
flock -w 300 9 || { echo "devdb: $state/lock is still held after 5 minutes; is another devdb.sh stuck?" >&2; exit 1; }

bindir() {
  local d
  if command -v pg_config >/dev/null 2>&1; then
    d="$(pg_config --bindir 2>/dev/null || true)"
    if [ -x "$d/initdb" ]; then echo "$d"; return; fi
  fi
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k4 -n -r); do
    if [ -x "$d/initdb" ]; then echo "$d"; return; fi
  done
  if command -v initdb >/dev/null 2>&1; then dirname "$(command -v initdb)"; return; fi
  echo "devdb: no PostgreSQL server binaries found (install postgresql >= 14, or set DATABASE_URL)" >&2
  exit 1
}

as_pg() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

datadir() {
  if [ "$(id -u)" = 0 ]; then
    local h
    h="$(printf '%s' "$root" | sha256sum | cut -c1-12)"
    echo "${TMPDIR:-/tmp}/standmeet-devdb-$h${durable:+-durable}"
  else
    echo "$state/cluster"
  fi
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

url_for() { echo "postgres://postgres@127.0.0.1:$1/standmeet?sslmode=disable"; }

running() {
  [ -f "$state/port" ] || return 1
  local bin dir port
  bin="$(bindir)"; dir="$(cat "$state/dir" 2>/dev/null || datadir)"; port="$(cat "$state/port")"
  "$bin/pg_isready" -q -h 127.0.0.1 -p "$port" -U postgres >/dev/null 2>&1 && [ -f "$dir/data/postmaster.pid" ]
}

start() {
  if running; then url_for "$(cat "$state/port")"; return; fi
  local bin dir port
  bin="$(bindir)"; dir="$(datadir)"
  mkdir -p "$dir"
  if [ "$(id -u)" = 0 ]; then chown postgres "$dir"; chmod 700 "$dir"; fi
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    as_pg "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 --no-sync >"$state/initdb.log" 2>&1 \
      || as_pg "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C --no-sync >"$state/initdb.log" 2>&1 \
      || { cat "$state/initdb.log" >&2; exit 1; }
  fi
  if as_pg "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
    # Running, but .devdb/ forgot it (a fresh clone at the same path, or
    # .devdb/ removed): adopt it; its port is line 4 of postmaster.pid.
    port="$(sed -n 4p "$dir/data/postmaster.pid")"
  else
    # Below the kernel's ephemeral range (32768 and up here), where a
    # client connection's local port can take ours at any moment.
    port="$(cat "$state/port" 2>/dev/null || echo $(( 20000 + $(printf '%s%s' "$root" "$durable" | cksum | cut -d' ' -f1) % 12000 )))"
    while ! port_free "$port"; do port=$((port + 1)); done
  fi
  mkdir -p "$dir/sock"; [ "$(id -u)" = 0 ] && chown postgres "$dir/sock"
  if ! as_pg "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
    # fsync off: this cluster holds development and test data only. The server
    # must not inherit the lock's descriptor (9>&-): it would hold the lock for
    # as long as it runs, and every later devdb.sh would wait on it.
    # A port free a moment ago can be taken before the server binds it (a
    # client's local port): then try the next free one, a few times.
    # pg_stat_statements (make bench counts statements with it) where the
    # server has the module; a cluster without it still serves everything else.
    local preload="" libdir
    libdir="$("$bin/pg_config" --pkglibdir 2>/dev/null || echo "$bin/../lib")"
    if [ -f "$libdir/pg_stat_statements.so" ]; then
      preload="-c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.max=10000"
    fi
    # Durable: PostgreSQL's defaults for the three settings.
    local speed="-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    if [ "$durable" = 1 ]; then speed=""; fi
    local tries=0
    until as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start -o \
      "-p $port -k $dir/sock -c listen_addresses=127.0.0.1 -c max_connections=500 $speed -c shared_buffers=256MB $preload" \
      >/dev/null 2>&1 9>&-; do
      tries=$((tries + 1))
      if [ "$tries" -ge 5 ] || ! tail -5 "$dir/server.log" | grep -q "could not create any TCP/IP sockets"; then
        tail -20 "$dir/server.log" >&2; exit 1
      fi
      port=$((port + 1)); while ! port_free "$port"; do port=$((port + 1)); done
    done
  fi
  echo "$port" >"$state/port"; echo "$dir" >"$state/dir"
  "$bin/psql" -q -h 127.0.0.1 -p "$port" -U postgres -d postgres -tAc \
    "SELECT 1 FROM pg_database WHERE datname='standmeet'" | grep -q 1 \
    || "$bin/createdb" -h 127.0.0.1 -p "$port" -U postgres standmeet
  url_for "$port"
}

stop() {
  local bin dir
  bin="$(bindir)"; dir="$(cat "$state/dir" 2>/dev/null || datadir)"
  if [ -f "$dir/data/postmaster.pid" ]; then as_pg "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null; fi
  echo "devdb stopped"
}

case "${1:-start}" in
  start) start ;;
  url) running && url_for "$(cat "$state/port")" || { echo "devdb: not running" >&2; exit 1; } ;;
  stop) stop ;;
  *) echo "usage: $0 start|url|stop" >&2; exit 2 ;;
esac
