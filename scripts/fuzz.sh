#!/usr/bin/env bash
# Runs every fuzz target of the module, one after another, for FUZZTIME each
# (a duration such as 30s, or a count such as 500x). `go test -fuzz` takes
# one target at a time, so each package's test binary is built once with
# the fuzzing instrumentation (go test -c -fuzz) and run once per target,
# in the package's directory as go test would. The targets are the
# `func FuzzX(` of the _test.go files. A finding is written to the
# package's testdata/fuzz/FuzzX, as go test writes it, and fails the run.
#
#   scripts/fuzz.sh [PATTERN]   # only targets whose package or name match
#   FUZZTIME=100x FUZZCACHE=fresh scripts/fuzz.sh   # the short pass of make test
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
fuzztime=${FUZZTIME:-10s}
pattern=${1:-}
work=$(mktemp -d)
# FUZZCACHE=fresh starts from the seeds alone (make test's short pass, whose
# start-up must not grow with what earlier runs found); else go test's cache.
cache=${FUZZCACHE:-$(go env GOCACHE)/fuzz}
[ "$cache" = fresh ] && cache=$work/cache
trap 'rm -rf "$work"' EXIT
failed=()
n=0
start=$SECONDS
targets=$(git ls-files '*_test.go' | xargs grep -oE '^func Fuzz[A-Za-z0-9_]*\(' |
  sed -E 's|^(.*)/[^/]*:func (Fuzz[A-Za-z0-9_]*)\($|\1 \2|; s|^[^/ ]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\($|. \1|' | sort -u)
built=
while read -r dir name; do
  if [ -n "$pattern" ] && [[ "./$dir $name" != *"$pattern"* ]]; then continue; fi
  bin="$work/$(echo "$dir" | tr / _).test"
  if [ "$built" != "$dir" ]; then
    if ! go test -c -fuzz "^${name}\$" -o "$bin" "./$dir" >"$work/log" 2>&1; then
      cat "$work/log"; failed+=("./$dir (build)"); built=$dir; continue
    fi
    built=$dir
  fi
  [ -x "$bin" ] || continue
  n=$((n + 1))
  printf 'fuzz %-28s %s\n' "./$dir" "$name"
  # -parallel 2: CI's machine has two cores.
  if ! (cd "$root/$dir" && "$bin" -test.run '^$' -test.fuzz "^${name}\$" -test.fuzztime "$fuzztime" \
      -test.fuzzcachedir "$cache" -test.parallel 2) >"$work/log" 2>&1; then
    # go test's fuzzing can end a timed run with "context deadline
    # exceeded" while a worker is inside a slow input, having found
    # nothing (no input written): that is the clock, not a finding.
    if grep -q 'context deadline exceeded' "$work/log" && ! grep -q 'Failing input written' "$work/log"; then
      echo "  (stopped by the clock inside an input; nothing found)"
    else
      cat "$work/log"; failed+=("./$dir $name")
    fi
  fi
done <<<"$targets"
echo "fuzz: $n targets, ${fuzztime} each, $((SECONDS - start)) s"
if [ ${#failed[@]} -gt 0 ]; then
  printf 'fuzz: FAILED %s\n' "${failed[@]}"
  exit 1
fi
