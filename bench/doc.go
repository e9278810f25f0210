// Package bench holds the benchmarks `make bench` runs against real
// daemons, executors and sandboxes; bench/table prints their medians
// against the targets.
package bench
