#!/usr/bin/env bash
# Builds livekit-server v1.13.5 for the LiveKit integration test, once: the
# binary is kept in GOPATH/bin and reused by later runs on the same machine.
set -euo pipefail
bin="$(go env GOPATH)/bin/livekit-server"
if [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -q '1.13.5'; then
  echo "cached: $bin"; exit 0
fi
tmp=$(mktemp -d)
GOBIN="$tmp" go install github.com/livekit/livekit-server/cmd/server@v1.13.5
mv "$tmp/server" "$bin"
rm -rf "$tmp"
"$bin" --version
