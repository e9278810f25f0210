package boundary

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// notLinux matches a build constraint that selects a system other than Linux.
var notLinux = regexp.MustCompile(`^//go:build .*(!linux|darwin|windows|freebsd|openbsd|netbsd)`)

// TestLinuxOnly: toolcage is built for Linux alone (the sandbox, the peer
// check, Landlock and seccomp have no stand-ins), so no file pretends to
// serve another system: no _other.go stubs, no constraint that picks one.
// A port would add real implementations and a CI build for them together.
func TestLinuxOnly(t *testing.T) {
	root := "../.."
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); p != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		if strings.HasSuffix(p, "_other.go") {
			t.Errorf("%s: a stand-in for other systems", rel)
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, "package ") {
				break
			}
			if notLinux.MatchString(line) {
				t.Errorf("%s: %q selects a system other than Linux", rel, line)
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
}
