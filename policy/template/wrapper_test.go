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
