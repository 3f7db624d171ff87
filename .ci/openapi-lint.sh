#!/usr/bin/env bash
# Lints the OpenAPI document the built binary serves with Redocly CLI (from
# the npm registry, pinned), failing on any warning (.ci/redocly.yaml).
set -euo pipefail
bin=${1:?usage: openapi-lint.sh AGENTD_BINARY}
here=$(cd "$(dirname "$0")" && pwd)
tools=${REDOCLY_DIR:-$HOME/.cache/agentd-redocly}
if [ ! -x "$tools/node_modules/.bin/redocly" ]; then
  mkdir -p "$tools"
  (cd "$tools" && npm install --silent --no-audit --no-fund @redocly/cli@2.77.0 >/dev/null)
fi
dir=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$dir"' EXIT
"$bin" serve --addr 127.0.0.1:0 --db "$dir/agentd.db" --log-format json >"$dir/out" 2>"$dir/log" &
pid=$!
addr=""
for _ in $(seq 100); do
  addr=$(grep -o '"addr":"[^"]*"' "$dir/log" | head -1 | cut -d'"' -f4 || true)
  [ -n "$addr" ] && break
  sleep 0.1
done
[ -n "$addr" ] || { echo "agentd did not start:"; cat "$dir/log"; exit 1; }
curl -sf "http://$addr/api/openapi.json" -o "$dir/openapi.json"
"$tools/node_modules/.bin/redocly" lint "$dir/openapi.json" --config "$here/redocly.yaml"
