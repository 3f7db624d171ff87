#!/usr/bin/env bash
# Runs every Fuzz target of the module from its seed corpus (testdata/fuzz)
# for a bounded number of inputs (default 10000 each). A count, not a
# duration: with Go 1.26 a duration-based -fuzztime can end in a spurious
# "context deadline exceeded" failure (go.dev/issue/75804, fixed in 1.27).
set -euo pipefail
n=${1:-10000x}
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for f in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | awk '{print $2}' | sort -u); do
    echo "fuzz $pkg $f"
    go test -run '^$' -fuzz "^$f\$" -fuzztime "$n" "$pkg" >/tmp/fuzz-$f.log 2>&1 || { cat /tmp/fuzz-$f.log; exit 1; }
  done
done
