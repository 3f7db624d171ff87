#!/usr/bin/env bash
# Runs every Fuzz target of the module for a short time (default 5s each),
# starting from its seed corpus in testdata/fuzz.
set -euo pipefail
t=${1:-5s}
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for f in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | awk '{print $2}' | sort -u); do
    echo "fuzz $pkg $f"
    go test -run '^$' -fuzz "^$f\$" -fuzztime "$t" "$pkg" >/tmp/fuzz-$f.log 2>&1 || { cat /tmp/fuzz-$f.log; exit 1; }
  done
done
