// Package jscheck is the static check of JavaScript tool code: it refuses
// code that names a forbidden pattern (eval, require, process ...) before
// the code is stored or run.
package jscheck
