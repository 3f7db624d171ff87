#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests, as an unprivileged user on a
# loopback port. Debian's postgresql package provides the binaries (CI
# installs it); nothing here touches the system cluster.
#
#   eval "$(.ci/postgres.sh start /tmp/agentd-pg)"   # exports AGENTD_TEST_POSTGRES
#   go test ./storage/...                            # now runs on both backends
#   .ci/postgres.sh stop /tmp/agentd-pg              # stops it and removes the directory
#
# As root the cluster runs as the user "postgres" (Debian's package creates
# it) or "nobody": PostgreSQL refuses to run as root.
set -euo pipefail
cmd=${1:?usage: postgres.sh start|stop DIR}
dir=${2:?usage: postgres.sh start|stop DIR}
bin=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
[ -x "$bin/initdb" ] || { echo "postgres.sh: no PostgreSQL binaries (apt-get install postgresql)" >&2; exit 1; }

as() { # run as the cluster's owner
  if [ "$(id -u)" = 0 ]; then runuser -u "$owner" -- "$@"; else "$@"; fi
}
owner=$(id -un)
if [ "$(id -u)" = 0 ]; then
  owner=nobody
  getent passwd postgres >/dev/null && owner=postgres
fi

case "$cmd" in
start)
  mkdir -p "$dir"
  [ "$(id -u)" = 0 ] && chown "$owner" "$dir"
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null ||
    echo $((20000 + RANDOM % 20000)))
  as "$bin/initdb" -D "$dir/data" -U agentd --auth=trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 ||
    { cat "$dir/initdb.log" >&2; exit 1; }
  # Throwaway data: durability off makes the suite several times faster.
  # pg_stat_statements: tests count the statements agentd runs.
  as "$bin/pg_ctl" -D "$dir/data" -l "$dir/data/server.log" -w -o \
    "-c listen_addresses=127.0.0.1 -p $port -k $dir/data -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=400 -c shared_preload_libraries=pg_stat_statements" \
    start >/dev/null
  echo "export AGENTD_TEST_POSTGRES='postgres://agentd@127.0.0.1:$port/postgres?sslmode=disable'"
  ;;
stop)
  [ -d "$dir/data" ] && as "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$dir"
  ;;
*) echo "usage: postgres.sh start|stop DIR" >&2; exit 2 ;;
esac
