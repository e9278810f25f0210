#!/usr/bin/env bash
# make bench: run the benchmarks and print the table of medians vs targets.
# One run on a shared machine is noisy: compare numbers from the same run.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp)
trap 'rm -f "$out"' EXIT
go test -run '^$' -bench . -benchtime "${BENCHTIME:-2s}" ./bench/ 2>&1 | tee "$out" >/dev/null || { cat "$out"; exit 1; }
go run ./bench/table < "$out"
