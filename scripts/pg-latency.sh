#!/usr/bin/env bash
# Write throughput of one and three agentd processes on one PostgreSQL
# database reached through a latency proxy: 1 ms of round-trip time, as a
# database on another host of the same network adds. These machines'
# kernels have no netem, so the delay comes from Toxiproxy
# (github.com/Shopify/toxiproxy/v2, installed here with go install). Its
# latency toxic counts whole milliseconds, so the whole 1 ms is added on
# the way back (downstream) rather than 0.5 ms each way.
#
#   scripts/pg-latency.sh            # prints the benchmark lines
#
# It starts a throwaway cluster (.ci/postgres.sh), a Toxiproxy server and a
# proxy with the latency toxic, then runs BenchmarkWrites (batches of calls
# and knowledge source upserts from six clients) and BenchmarkDials (600
# calls, three times, dialled by the sim dialer with a CPS budget far above
# the claims' pace) from test/, whose processes are the built agentd binary serving on
# their own ports with one database URL: the proxy's.
set -euo pipefail
cd "$(dirname "$0")/.."
latency_ms=${LATENCY_MS:-1}
bin=${TOXIPROXY_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/agentd-toxiproxy}
if [ ! -x "$bin/server" ]; then
  mkdir -p "$bin"
  GOBIN=$bin go install github.com/Shopify/toxiproxy/v2/cmd/...@v2.5.0
fi
work=$(mktemp -d)
chmod 755 "$work" # the cluster may run as another user (postgres.sh as root)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
tox_pid=
cleanup() {
  [ -n "$tox_pid" ] && kill "$tox_pid" 2>/dev/null || true
  .ci/postgres.sh stop "$work/pg" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

pg_env=$(.ci/postgres.sh start "$work/pg")
eval "$pg_env" # exports AGENTD_TEST_POSTGRES
pg_port=$(sed -E 's#.*@127\.0\.0\.1:([0-9]+)/.*#\1#' <<<"$AGENTD_TEST_POSTGRES")
api_port=$(free_port)
proxy_port=$(free_port)
"$bin/server" -host 127.0.0.1 -port "$api_port" >"$work/toxiproxy.log" 2>&1 &
tox_pid=$!
api=http://127.0.0.1:$api_port
for _ in $(seq 100); do curl -sf "$api/version" >/dev/null && break; sleep 0.1; done
curl -sf -X POST "$api/proxies" -d "{\"name\":\"pg\",\"listen\":\"127.0.0.1:$proxy_port\",\"upstream\":\"127.0.0.1:$pg_port\"}" >/dev/null
curl -sf -X POST "$api/proxies/pg/toxics" \
  -d "{\"name\":\"rtt\",\"type\":\"latency\",\"stream\":\"downstream\",\"attributes\":{\"latency\":$latency_ms}}" >/dev/null
export AGENTD_TEST_POSTGRES="postgres://agentd@127.0.0.1:$proxy_port/postgres?sslmode=disable"

# The round trip as agentd's driver sees it: SELECT 1, a hundred times.
psql=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)/psql
echo "round trip through the proxy: $(
  "$psql" "$AGENTD_TEST_POSTGRES" -Atc "\\timing on" $(printf -- '-c SELECT\\ 1 %.0s' $(seq 100)) 2>/dev/null |
    awk '/^Time:/ {s += $2; n++} END {printf "%.2f ms (mean of %d)", s / n, n}'
)"
# Each figure comes with the machine's CPU use over its run (cpu-busy-%):
# three processes can outrun one only while the CPUs have room.
go test ./test -run '^$' -bench "${BENCH_WRITES:-BenchmarkWrites}" -benchtime 1x -timeout 30m
# Dials: the median of three runs of AGENTD_BENCH_DIALS calls each.
AGENTD_BENCH_DIALS=${AGENTD_BENCH_DIALS:-600} go test ./test -run '^$' -bench "${BENCH_DIALS:-BenchmarkDials}" -benchtime 3x -timeout 30m
