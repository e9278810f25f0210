package template

import "testing"

func BenchmarkRenderShell(b *testing.B) {
	args := map[string]any{"record_type": "MX", "domain": "example.com", "dir": "/var/log", "n": 20.0}
	for _, bc := range []struct{ name, cmd string }{
		{"argv", "dig +short {{.record_type}} {{.domain}}"},
		{"shell", "ls -la {{dir}} | head -n {{n}} | wc -l"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := RenderShell(bc.cmd, args, ShellOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(bc.name+"/compiled", func(b *testing.B) {
			c, err := CompileShell(bc.cmd)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Render(args, ShellOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkRenderHTTP(b *testing.B) {
	spec := HTTPSpec{
		Method:  "POST",
		URL:     "https://api.example.com/v1/users/{{user}}/items?fields={{fields}}",
		Params:  map[string]string{"limit": "{{limit}}", "q": "name:{{q}}"},
		Headers: map[string]string{"Authorization": "Bearer {{secret.token}}", "X-Trace": "{{trace}}"},
	}
	args := map[string]any{"user": "ada lovelace", "fields": "a,b", "limit": 10.0, "q": "x&y", "trace": "t-1"}
	secrets := func(string) (string, error) { return "tok", nil }
	b.Run("oneshot", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := RenderHTTP(spec, args, secrets); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("compiled", func(b *testing.B) {
		c, err := CompileHTTP(spec)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.Render(args, secrets); err != nil {
				b.Fatal(err)
			}
		}
	})
}
