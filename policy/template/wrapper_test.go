package template

import (
	"testing"
)

// TestFixedWrapperCode: a placeholder among the positional arguments of a
// fixed program that runs them as code is in code position.
func TestFixedWrapperCode(t *testing.T) {
	for _, c := range readTemplateCases(t, "wrapper.txt", 2) {
		want, tmpl := c.fields[0], c.fields[1]
		err := ValidateShell(tmpl)
		switch want {
		case "create":
			if err == nil {
				t.Errorf("wrapper.txt:%d: ValidateShell(%q) = nil, want refused", c.line, tmpl)
			}
		case "allow":
			if err != nil {
				t.Errorf("wrapper.txt:%d: ValidateShell(%q) = %v, want accepted", c.line, tmpl, err)
			}
		default:
			t.Fatalf("wrapper.txt:%d: unknown want %q", c.line, want)
		}
	}
}

// TestPlusCommands: a value starting with "+" is a command for less and
// vi, refused where it starts a word before "--".
func TestPlusCommands(t *testing.T) {
	for _, tc := range []struct {
		tmpl, v string
		ok      bool
	}{
		{"less {{.v}}", "+!rm -rf /", false},
		{"more {{.v}}", "+!sh", false},
		{"vim -R {{.v}}", "+:!id", false},
		{"less {{.v}}", "notes.txt", true},
		{"less -- {{.v}}", "+notes.txt", true},
		{"less notes{{.v}}", "+x", true},
		{"grep -c {{.v}} notes.txt", "+x", true},
	} {
		_, err := RenderShell(tc.tmpl, map[string]any{"v": tc.v}, ShellOptions{})
		if (err == nil) != tc.ok {
			t.Errorf("RenderShell(%q, v=%q) = %v, want ok %v", tc.tmpl, tc.v, err, tc.ok)
		}
	}
}
