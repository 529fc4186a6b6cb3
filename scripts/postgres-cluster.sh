#!/bin/sh
# A throw-away PostgreSQL cluster in a folder of its own, for tests, benches and trying the team
# server: nothing outside DIR is written, and `stop` removes DIR again.
#   scripts/postgres-cluster.sh start DIR [PORT]   starts it (made on first use) and prints its URL
#   scripts/postgres-cluster.sh createdb DIR NAME  makes a database in it and prints its URL
#   scripts/postgres-cluster.sh stop DIR [--keep]  stops it and removes DIR (--keep: only stops)
#   scripts/postgres-cluster.sh check              prints PostgreSQL's bin folder, or how to install it
# The cluster listens on 127.0.0.1 only (PORT, or a free one), trusts every connection from there
# (no password: anyone on this machine may connect while it runs), keeps its unix socket in DIR
# and runs with fsync=off: fast, and no place for data that matters. It runs as the user
# `postgres` when started by root (initdb refuses root). PG_BIN names the bin folder to use.
set -eu

MIN_MAJOR=15
INSTALL_HINT="install PostgreSQL $MIN_MAJOR or later (Debian/Ubuntu: apt-get install postgresql; macOS: brew install postgresql@16), or set PG_BIN to its bin folder"

fail() {
  echo "postgres-cluster: $*" >&2
  exit 1
}

major_of() {
  "$1/initdb" --version 2>/dev/null | sed -n 's/.* \([0-9][0-9]*\)[.0-9]*.*/\1/p' | head -n 1
}

# PG_BIN, else the newest /usr/lib/postgresql/N/bin (Debian keeps initdb off PATH), else pg_config's.
find_bin() {
  if [ -n "${PG_BIN:-}" ]; then
    [ -x "$PG_BIN/initdb" ] || fail "PG_BIN=$PG_BIN holds no initdb; $INSTALL_HINT"
    echo "$PG_BIN"
    return
  fi
  for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k5 -n -r); do
    if [ -x "$dir/initdb" ]; then
      echo "$dir"
      return
    fi
  done
  if command -v pg_config >/dev/null 2>&1 && [ -x "$(pg_config --bindir)/initdb" ]; then
    pg_config --bindir
    return
  fi
  if command -v initdb >/dev/null 2>&1; then
    dirname "$(command -v initdb)"
    return
  fi
  fail "PostgreSQL is not installed: $INSTALL_HINT"
}

checked_bin() {
  bin=$(find_bin)
  major=$(major_of "$bin")
  [ -n "$major" ] && [ "$major" -ge "$MIN_MAJOR" ] ||
    fail "$bin/initdb is PostgreSQL ${major:-of an unknown version}; $INSTALL_HINT"
  echo "$bin"
}

# initdb and the server refuse to run as root: as root, they run as the user `postgres`.
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    id postgres >/dev/null 2>&1 || fail "running as root needs the user 'postgres' to run the server as"
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

# A string, not a number: Node colours a number it logs when FORCE_COLOR is set (a Playwright
# worker sets it), and the colour codes would land in postgresql.conf.
free_port() {
  node -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(String(s.address().port));s.close()})"
}

cmd=${1:-}
case "$cmd" in
check)
  checked_bin
  ;;
start)
  [ $# -ge 2 ] || fail "usage: $0 start DIR [PORT]"
  dir=$2
  bin=$(checked_bin)
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    # A new cluster only in an empty folder: a folder given by mistake is never taken over.
    [ -z "$(ls -A "$dir")" ] || fail "$dir is not empty and holds no cluster made by this script"
    port=${3:-$(free_port)}
    mkdir -p "$dir/socket"
    if [ "$(id -u)" -eq 0 ]; then chown -R postgres "$dir"; fi
    as_owner test -w "$dir" || fail "$dir must be writable by the user the server runs as (and its parents searchable)"
    as_owner "$bin/initdb" -D "$dir/data" -U postgres -E UTF8 --locale=C --no-sync --auth=reject >"$dir/initdb.log" 2>&1 ||
      fail "initdb failed; see $dir/initdb.log"
    cat >>"$dir/data/postgresql.conf" <<CONF
# Added by scripts/postgres-cluster.sh: a throw-away cluster for tests and benches.
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$dir/socket'
fsync = off
full_page_writes = off
max_connections = 200
CONF
    # Only TCP from 127.0.0.1, without a password; the socket accepts no one.
    as_owner sh -c "echo 'host all all 127.0.0.1/32 trust' >'$dir/data/pg_hba.conf'"
    echo "$port" >"$dir/port"
  fi
  port=$(cat "$dir/port")
  as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null ||
    fail "the server did not start (port $port taken?); see $dir/server.log: $(tail -n 3 "$dir/server.log" 2>/dev/null)"
  echo "postgres://postgres@127.0.0.1:$port/postgres"
  ;;
createdb)
  [ $# -eq 3 ] || fail "usage: $0 createdb DIR NAME"
  dir=$2
  [ -f "$dir/port" ] || fail "$dir holds no cluster made by this script"
  port=$(cat "$dir/port")
  "$(checked_bin)/createdb" -h 127.0.0.1 -p "$port" -U postgres "$3"
  echo "postgres://postgres@127.0.0.1:$port/$3"
  ;;
stop)
  [ $# -ge 2 ] || fail "usage: $0 stop DIR [--keep]"
  dir=$2
  # Only a folder this script made is removed, never one given by mistake.
  [ -f "$dir/port" ] || fail "$dir holds no cluster made by this script; nothing removed"
  if [ -f "$dir/data/postmaster.pid" ]; then
    as_owner "$(checked_bin)/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
  fi
  [ "${3:-}" = "--keep" ] || rm -rf "$dir"
  ;;
*)
  fail "usage: $0 start DIR [PORT] | createdb DIR NAME | stop DIR [--keep] | check"
  ;;
esac
