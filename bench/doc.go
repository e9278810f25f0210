// Package bench holds the end-to-end benchmarks behind `make bench`: a real
// daemon process on a real socket, real executors and sandboxes, a real
// SQLite file; bench/table prints their medians against the targets.
package bench
