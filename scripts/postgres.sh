#!/usr/bin/env bash
# A throwaway PostgreSQL cluster on 127.0.0.1, for the tests that run the ledger on PostgreSQL.
#
#   bash scripts/postgres.sh start DIR   creates a cluster in DIR, starts it on a free loopback
#                                        port and prints its URL (postgres://storemap@127.0.0.1:PORT/storemap)
#   bash scripts/postgres.sh pause DIR   stops the server and keeps its data, as an outage would
#   bash scripts/postgres.sh resume DIR  starts it again on the same port
#   bash scripts/postgres.sh stop DIR    stops it and removes the cluster (the caller removes DIR)
#
# PostgreSQL comes from Debian's packages: a machine without a server gets them installed
# (apt-get, as root). The cluster is made for tests and nothing else: trust authentication on
# loopback only, its socket in its own folder, no fsync. As root, initdb and the server run as
# the unprivileged `postgres` user the Debian package creates, in a folder of that user's under
# /tmp (DIR, the caller's, may sit where that user cannot reach); DIR/cluster names it, and
# `stop` removes it.
set -euo pipefail
cmd=${1:-}
dir=${2:-}
if [ -z "$cmd" ] || [ -z "$dir" ]; then
  echo "usage: bash scripts/postgres.sh start|pause|resume|stop DIR" >&2
  exit 2
fi

server_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }
bin=$(server_bin)
if [ -z "$bin" ] || [ ! -x "$bin/postgres" ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "postgres.sh: no PostgreSQL server here, and installing one needs root (apt-get install postgresql)" >&2
    exit 1
  fi
  echo "postgres.sh: installing PostgreSQL from Debian's packages" >&2
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
  bin=$(server_bin)
fi

# Runs a server program as the user that owns the cluster.
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# Starts the cluster's server on a port; fails when the port is taken.
serve() {
  as_owner "$bin/pg_ctl" -D "$1/data" -l "$1/server.log" -w -t 120 \
    -o "-p $2 -k $1 -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
    start >/dev/null 2>&1
}

# The cluster DIR names, refusing anything that is not a test cluster.
cluster_of() {
  local c
  c=$(cat "$1/cluster")
  case "$c" in /tmp/storemap-pg.*) echo "$c" ;; *) echo "postgres.sh: $1/cluster does not name a test cluster" >&2; exit 1 ;; esac
}

case "$cmd" in
  start)
    mkdir -p "$dir"
    cluster=$(as_owner mktemp -d /tmp/storemap-pg.XXXXXX)
    echo "$cluster" >"$dir/cluster"
    as_owner "$bin/initdb" -D "$cluster/data" -U storemap --auth=trust -E UTF8 --locale=C.UTF-8 --no-instructions >"$dir/initdb.log" 2>&1 || {
      cat "$dir/initdb.log" >&2
      exit 1
    }
    # PostgreSQL cannot be told to pick a port itself: take one that is free now, and try
    # another if something took it before the server bound it.
    for _ in $(seq 1 20); do
      port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
      if serve "$cluster" "$port"; then
        as_owner "$bin/createdb" -h 127.0.0.1 -p "$port" -U storemap storemap
        echo "$port" >"$dir/port"
        echo "postgres://storemap@127.0.0.1:$port/storemap"
        exit 0
      fi
    done
    cat "$cluster/server.log" >&2
    echo "postgres.sh: the server did not start" >&2
    exit 1
    ;;
  pause)
    cluster=$(cluster_of "$dir")
    as_owner "$bin/pg_ctl" -D "$cluster/data" -m fast -w stop >/dev/null
    ;;
  resume)
    cluster=$(cluster_of "$dir")
    serve "$cluster" "$(cat "$dir/port")" || {
      cat "$cluster/server.log" >&2
      exit 1
    }
    ;;
  stop)
    [ -f "$dir/cluster" ] || exit 0
    cluster=$(cluster_of "$dir")
    as_owner "$bin/pg_ctl" -D "$cluster/data" -m fast -w stop >/dev/null 2>&1 || true
    rm -rf "$cluster" "$dir/cluster"
    ;;
  *)
    echo "usage: bash scripts/postgres.sh start|pause|resume|stop DIR" >&2
    exit 2
    ;;
esac
