package policy

import (
	"fmt"
	"testing"
)

// TestStartsPendingMatrix walks the whole matrix: kind × permissions ×
// secrets × caller × always-pending. The expected value is written per
// cell group from the rule, not computed by the function under test.
func TestStartsPendingMatrix(t *testing.T) {
	kinds := []string{"js", "shell", "http", "", "JS"}
	perms := [][]string{nil, {}, {"network"}, {"shell"}, {"filesystem"}, {"email"}, {"database"}, {"scheduling"}, {"secrets"}, {"network", "shell"}}
	secrets := [][]string{nil, {}, {"api_token"}, {"a", "b"}}
	callers := []string{"user", "llm", "", "robot"}
	n := 0
	for _, k := range kinds {
		for _, p := range perms {
			for _, s := range secrets {
				for _, c := range callers {
					for _, always := range []bool{false, true} {
						var want bool
						switch {
						case c == "user":
							want = false // a person's tool never waits
						case always:
							want = true
						case k == "js" && len(p) == 0 && len(s) == 0:
							want = false // the one safe cell
						default:
							want = true
						}
						name := fmt.Sprintf("kind=%q perms=%v secrets=%v caller=%q always=%v", k, p, s, c, always)
						if got := StartsPending(k, p, s, c, always); got != want {
							t.Errorf("%s: got %v, want %v", name, got, want)
						}
						n++
					}
				}
			}
		}
	}
	if n != 5*10*4*4*2 {
		t.Fatalf("checked %d cells", n)
	}
}

func TestStartsPendingCells(t *testing.T) {
	tests := []struct {
		name    string
		kind    string
		perms   []string
		secrets []string
		caller  string
		always  bool
		want    bool
	}{
		{"llm js bare", "js", nil, nil, CallerLLM, false, false},
		{"llm js bare, always pending", "js", nil, nil, CallerLLM, true, true},
		{"llm shell no permissions", "shell", nil, nil, CallerLLM, false, true},
		{"llm http", "http", nil, nil, CallerLLM, false, true},
		{"llm js network", "js", []string{"network"}, nil, CallerLLM, false, true},
		{"llm js secret", "js", nil, []string{"api_token"}, CallerLLM, false, true},
		{"user shell with everything", "shell", []string{"shell"}, []string{"k"}, CallerUser, true, false},
		{"unknown caller is held like an agent", "shell", nil, nil, "robot", false, true},
		{"empty caller is held like an agent", "js", []string{"network"}, nil, "", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := StartsPending(tt.kind, tt.perms, tt.secrets, tt.caller, tt.always); got != tt.want {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// FuzzStartsPending states the rule as properties over any input.
func FuzzStartsPending(f *testing.F) {
	f.Add("js", "", "", "llm", false)
	f.Add("shell", "shell", "api_token", "user", true)
	f.Add("http", "network", "", "robot", false)
	f.Fuzz(func(t *testing.T, kind, perm, secret, caller string, always bool) {
		var perms, secrets []string
		if perm != "" {
			perms = []string{perm}
		}
		if secret != "" {
			secrets = []string{secret}
		}
		got := StartsPending(kind, perms, secrets, caller, always)
		switch {
		case caller == CallerUser && got:
			t.Fatal("a person's tool waits")
		case caller != CallerUser && always && !got:
			t.Fatal("always pending let an agent's tool through")
		case caller != CallerUser && (kind != KindJS || perm != "" || secret != "") && !got:
			t.Fatalf("agent's %q tool with permission %q secret %q starts active", kind, perm, secret)
		case caller != CallerUser && !always && kind == KindJS && perm == "" && secret == "" && got:
			t.Fatal("bare JavaScript from an agent waits")
		}
	})
}
