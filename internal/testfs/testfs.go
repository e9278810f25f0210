// Package testfs holds file-system helpers for tests: a directory whose
// entries cannot be deleted, to make a removal fail for real.
package testfs

import (
	"os"
	"testing"
)

// Undeletable makes dir's entries (and so dir) impossible to delete until
// the returned undo is called (the test's cleanup calls it too): for a
// process that is not root, dir becomes read-only; root ignores modes, so
// for root dir gets the immutable flag (where the file system has it; the
// test is skipped where it does not).
func Undeletable(t testing.TB, dir string) (undo func()) {
	t.Helper()
	mark := readOnly
	if os.Geteuid() == 0 {
		mark = immutable
	}
	back, err := mark(dir)
	if err != nil {
		if os.Getenv("CI") == "true" {
			// CI's machine has the flag: there a skip would hide a test.
			t.Fatalf("cannot make %s undeletable: %v", dir, err)
		}
		t.Skipf("cannot make %s undeletable here: %v", dir, err)
	}
	done := false
	undo = func() {
		if !done {
			done = true
			back()
		}
	}
	t.Cleanup(undo)
	return undo
}

func readOnly(dir string) (func(), error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(dir, 0o555); err != nil {
		return nil, err
	}
	return func() { _ = os.Chmod(dir, fi.Mode().Perm()) }, nil
}
