#!/usr/bin/env bash
# A throwaway PostgreSQL 15 cluster for tests and benchmarks: unix socket only (no TCP),
# trust authentication, data and socket under one directory, run by an unprivileged user
# when we are root (PostgreSQL refuses to run as root).
#
#   tools/pg-cluster.sh start DIR [PORT]     initdb DIR/data if needed, start; prints the
#                                            libpq connection string on stdout
#   tools/pg-cluster.sh standby PRIMARY DIR [PORT]
#                                            a streaming standby of the running cluster at
#                                            PRIMARY (pg_basebackup -R; made anew unless it
#                                            is running), started; prints its connection
#                                            string
#   tools/pg-cluster.sh stop DIR             stops the cluster at DIR (fast shutdown)
#   tools/pg-cluster.sh conninfo DIR         prints the connection string of DIR's cluster
#
# The cluster's superuser is `mentat` (whatever the OS user), and so is its database.
set -euo pipefail

PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
cmd=${1:?usage: pg-cluster.sh start|standby|stop|conninfo DIR [PORT]}
shift

as_owner() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

conninfo() {
  local dir=$1
  echo "host=$dir port=$(cat "$dir/port") dbname=mentat user=mentat"
}

configure() {
  local dir=$1 port=$2
  cat >>"$dir/data/postgresql.conf" <<EOF
listen_addresses = ''
unix_socket_directories = '$dir'
port = $port
max_connections = 100
shared_buffers = 256MB
wal_level = replica
max_wal_senders = 4
hot_standby = on
logging_collector = off
EOF
}

start_server() {
  local dir=$1
  if as_owner "$PGBIN/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then return 0; fi
  as_owner "$PGBIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null
}

case "$cmd" in
  start)
    dir=$(realpath -m "${1:?DIR}")
    port=${2:-5432}
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres: "$dir"
    if [ ! -f "$dir/data/PG_VERSION" ]; then
      # -c fast: the primary checkpoints at once (the default spreads it over most of
      # checkpoint_timeout, a minute and more of waiting on an idle test cluster).
      as_owner "$PGBIN/initdb" -D "$dir/data" -U mentat -A trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log"
      configure "$dir" "$port"
      echo "$port" >"$dir/port"
      printf 'local replication all trust\n' >>"$dir/data/pg_hba.conf"
    fi
    start_server "$dir"
    [ "$(as_owner "$PGBIN/psql" -U mentat -h "$dir" -p "$(cat "$dir/port")" -d postgres -qAt \
      -c "SELECT 1 FROM pg_database WHERE datname = 'mentat'")" = 1 ] ||
      as_owner "$PGBIN/createdb" -U mentat -h "$dir" -p "$(cat "$dir/port")" mentat
    conninfo "$dir"
    ;;
  standby)
    primary=$(realpath -m "${1:?PRIMARY}")
    dir=$(realpath -m "${2:?DIR}")
    port=${3:-5433}
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres: "$dir"
    # A standby that is not running is made again from the primary: an old copy may be of
    # another primary (a cluster made anew in the same directory).
    if ! as_owner "$PGBIN/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
      rm -rf "$dir/data"
    fi
    if [ ! -f "$dir/data/PG_VERSION" ]; then
      # -c fast: the primary checkpoints at once (the default spreads it over most of
      # checkpoint_timeout, a minute and more of waiting on an idle test cluster).
      as_owner "$PGBIN/pg_basebackup" -U mentat -h "$primary" -p "$(cat "$primary/port")" \
        -D "$dir/data" -R -X stream -c fast >"$dir/basebackup.log" 2>&1
      # The copied configuration names the primary's socket and port: this one's own.
      configure "$dir" "$port"
      echo "$port" >"$dir/port"
    fi
    start_server "$dir"
    conninfo "$dir"
    ;;
  stop)
    dir=$(realpath -m "${1:?DIR}")
    if [ -f "$dir/data/postmaster.pid" ]; then
      as_owner "$PGBIN/pg_ctl" -D "$dir/data" -m fast -w -t 60 stop >/dev/null
    fi
    ;;
  conninfo)
    conninfo "$(realpath -m "${1:?DIR}")"
    ;;
  *)
    echo "pg-cluster.sh: unknown command '$cmd'" >&2
    exit 2
    ;;
esac
