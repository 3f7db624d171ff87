#!/usr/bin/env bash
# GET throughput of agentd, SQLite against PostgreSQL, in one run on this
# machine: wrk -t2 -c32 on GET /api/v1/agents (20 agents, keys rotated so
# the rate limit never refuses) against
#   1. one process on a SQLite file,
#   2. one process on PostgreSQL,
#   3. three processes on the same PostgreSQL database, each on its port,
#      one wrk against each at once, their rates summed.
# PostgreSQL is a throwaway cluster from .ci/postgres.sh (durability off, as
# in the tests) unless AGENTD_BENCH_POSTGRES names a database URL.
#
#   scripts/bench-get.sh              # 10 s per measurement
#   DURATION=30s scripts/bench-get.sh
#
# Needs wrk (apt-get install -y wrk), curl, python3 and Go.
set -euo pipefail
cd "$(dirname "$0")/.."
dur=${DURATION:-10s}
command -v wrk >/dev/null || { echo "bench-get.sh: wrk is not installed (apt-get install -y wrk)" >&2; exit 1; }
work=$(mktemp -d /tmp/agentd-bench.XXXXXX)
pgdir=""
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -n "$pgdir" ] && .ci/postgres.sh stop "$pgdir"
  rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/agentd" .
freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# serve DB PORT: start agentd and wait for /healthz.
serve() {
  "$work/agentd" serve --addr "127.0.0.1:$2" --db "$1" --log-level warn >"$work/out-$2" 2>"$work/err-$2" &
  pids+=($!)
  for _ in $(seq 200); do
    curl -sf "http://127.0.0.1:$2/healthz" >/dev/null && return 0
    sleep 0.1
  done
  echo "agentd on port $2 did not start:" >&2; cat "$work/err-$2" >&2; exit 1
}

# seed DB PORT: 16 keys of 100,000 a minute into $work/keys.lua, 20 agents.
seed() {
  local keys=()
  for _ in $(seq 16); do
    keys+=("$("$work/agentd" --db "$1" key create --rate-limit 100000 --never-expires --json |
      python3 -c 'import json,sys; print(json.load(sys.stdin)["key"])')")
  done
  for i in $(seq 20); do
    curl -sf -o /dev/null -X POST "http://127.0.0.1:$2/api/v1/agents" -H "x-api-key: ${keys[0]}" \
      -H 'Content-Type: application/json' \
      -d "{\"name\":\"Agent $i\",\"type\":\"voice\",\"status\":\"active\",\"model\":\"gpt-4o\",\"instructions\":\"Be brief.\"}"
  done
  {
    printf 'local keys = {'
    printf '"%s",' "${keys[@]}"
    printf '}\nlocal i = 0\nrequest = function()\n  i = i + 1\n'
    printf '  return wrk.format("GET", "/api/v1/agents", {["x-api-key"] = keys[(i %% #keys) + 1]})\nend\n'
  } >"$work/keys.lua"
}

# bench PORT...: one wrk per port at once; prints the summed requests/s.
bench() {
  local outs=() wrks=()
  for p in "$@"; do
    wrk -t2 -c32 -d"$dur" -s "$work/keys.lua" "http://127.0.0.1:$p/api/v1/agents" >"$work/wrk-$p" 2>&1 &
    wrks+=($!)
    outs+=("$work/wrk-$p")
  done
  wait "${wrks[@]}"
  for f in "${outs[@]}"; do
    if grep -q "Non-2xx" "$f"; then echo "bench-get.sh: errors in $f:" >&2; cat "$f" >&2; exit 1; fi
  done
  awk '/^Requests\/sec:/ {s += $2} END {printf "%.0f\n", s}' "${outs[@]}"
}

# 1. SQLite, one process.
p=$(freeport)
serve "$work/agentd.db" "$p"
seed "$work/agentd.db" "$p"
bench "$p" >/dev/null # warm-up
sqlite=$(bench "$p")
kill "${pids[-1]}"; wait "${pids[-1]}" 2>/dev/null || true

# 2 and 3. PostgreSQL.
if [ -n "${AGENTD_BENCH_POSTGRES:-}" ]; then
  pg=$AGENTD_BENCH_POSTGRES
else
  pgdir=$(mktemp -d /tmp/agentd-bench-pg.XXXXXX)
  pg=$(.ci/postgres.sh start "$pgdir" | sed -n "s/^export AGENTD_TEST_POSTGRES='\(.*\)'$/\1/p")
fi
ports=("$(freeport)" "$(freeport)" "$(freeport)")
serve "$pg" "${ports[0]}"
seed "$pg" "${ports[0]}"
bench "${ports[0]}" >/dev/null # warm-up
pg1=$(bench "${ports[0]}")
serve "$pg" "${ports[1]}"
serve "$pg" "${ports[2]}"
bench "${ports[@]}" >/dev/null # warm-up
pg3=$(bench "${ports[@]}")

echo "GET /api/v1/agents, wrk -t2 -c32 -d$dur, $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ)"
printf '%-34s %8s req/s\n' "SQLite, one process" "$sqlite" "PostgreSQL, one process" "$pg1" "PostgreSQL, three processes (sum)" "$pg3"
python3 -c "print(f'PostgreSQL/SQLite {$pg1/$sqlite:.2f}; three/one {$pg3/$pg1:.2f}')"
