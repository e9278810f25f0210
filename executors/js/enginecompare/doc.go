// Package enginecompare measures the two pure-Go JavaScript engines the JS
// executor could be built on, github.com/dop251/goja and modernc.org/quickjs
// (QuickJS translated from C to Go), on what a tool call costs: a fresh VM,
// a trivial call in a fresh VM, a CPU-bound loop, a JSON round trip of a
// 10 KB object, and how each stops a memory bomb.
//
// It is its own module so that quickjs never enters the main module's
// dependencies. It has no non-test code. Run it with
//
//	go test -run . -bench . -benchmem
package enginecompare
