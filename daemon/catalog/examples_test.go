package catalog

import (
	"os"
	"path/filepath"
	"testing"
)

// Every example tool definition (the catalog's and the example workers'
// tool files) passes the checks of creation and compiles, so `make demo`
// and the README never show one that the daemon would refuse.
func TestExampleTools(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "examples", "tools", "*.yaml"))
	if err != nil || len(files) < 5 {
		t.Fatalf("examples: %v (%d files)", err, len(files))
	}
	more, err := filepath.Glob(filepath.Join("..", "..", "examples", "workers", "*", "*.yaml"))
	if err != nil || len(more) == 0 {
		t.Fatalf("worker tool files: %v (%d files)", err, len(more))
	}
	files = append(files, more...)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		def, err := Parse(data)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if err := Check(def); err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if _, err := Compile(&Tool{Def: def}); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}
