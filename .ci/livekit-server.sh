#!/usr/bin/env bash
# Provides livekit-server v1.13.5 for the LiveKit integration test as
# GOPATH/bin/livekit-server. It is built once (about 3 minutes on 2 cores)
# and reused by later runs on the same machine.
set -euo pipefail
gobin="$(go env GOPATH)/bin"
bin="$gobin/livekit-server"
mkdir -p "$gobin"
for c in "$bin" "$gobin/server"; do
  if [ -x "$c" ] && "$c" --version 2>/dev/null | grep -q '1\.13\.5'; then
    [ "$c" = "$bin" ] || cp "$c" "$bin"
    echo "cached: $bin"; exit 0
  fi
done
tmp=$(mktemp -d)
GOBIN="$tmp" go install github.com/livekit/livekit-server/cmd/server@v1.13.5
mv "$tmp/server" "$bin"
rm -rf "$tmp"
"$bin" --version
