package template

import "testing"

// TestCurlFileOptions: no value makes curl read (and send) or write a
// local file, whichever option it reaches.
func TestCurlFileOptions(t *testing.T) {
	for _, c := range readTemplateCases(t, "curl.txt", 3) {
		want, tmpl, val := c.fields[0], c.fields[1], c.fields[2]
		got := "allow"
		cs, err := CompileShell(tmpl)
		if err != nil {
			got = "create"
		} else if _, err = cs.Render(map[string]any{"v": val}, ShellOptions{}); err != nil {
			got = "render"
		}
		if got != want {
			t.Errorf("curl.txt:%d: %q with v=%q: %s (%v), want %s", c.line, tmpl, val, got, err, want)
		}
	}
}
