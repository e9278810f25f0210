package policy

import (
	"strings"
	"testing"
)

func testProfiles() *Profiles {
	return &Profiles{
		Groups: map[string]ToolGroup{
			"shell": {Categories: []string{"shell", "system"}},
			"read":  {Tools: []string{"cat_file", "list_dir"}},
			"mixed": {Categories: []string{"web"}, Tools: []string{"dns_lookup"}},
		},
		Profiles: map[string]Profile{
			"everything": {},
			"no_shell":   {Deny: []string{"group:shell"}},
			"readonly":   {Allow: []string{"group:read"}},
			"deny_wins":  {Allow: []string{"*"}, Deny: []string{"rm_rf", "group:shell"}},
			"add_back":   {Allow: []string{"group:read"}, Deny: []string{"group:shell"}, AlsoAllow: []string{"uptime", "cat_file"}},
			"nothing":    {Deny: []string{"*"}},
			"web":        {Allow: []string{"group:mixed"}},
		},
	}
}

func TestProfileAllowed(t *testing.T) {
	for _, tc := range []struct {
		global, profile, tool, category string
		want                            bool
		reason                          string
	}{
		{"", "", "anything", "", true, ""},
		{"", "everything", "anything", "x", true, "no allow list"},
		{"", "no_shell", "uptime", "shell", false, `deny entry "group:shell"`},
		{"", "no_shell", "uptime", "system", false, `deny entry "group:shell"`},
		{"", "no_shell", "word_count", "text", true, ""},
		{"", "no_shell", "word_count", "", true, ""},
		// group by list
		{"", "readonly", "cat_file", "", true, `allow entry "group:read"`},
		{"", "readonly", "cat_file", "shell", true, ""},
		{"", "readonly", "rm_rf", "", false, "matches no allow entry"},
		// deny beats allow
		{"", "deny_wins", "word_count", "", true, `allow entry "*"`},
		{"", "deny_wins", "rm_rf", "", false, `deny entry "rm_rf"`},
		{"", "deny_wins", "ls", "shell", false, `deny entry "group:shell"`},
		// also-allow adds back over deny and past the allow list
		{"", "add_back", "uptime", "shell", true, `also_allow entry "uptime"`},
		{"", "add_back", "ps", "shell", false, "deny entry"},
		{"", "add_back", "cat_file", "shell", true, "also_allow"},
		{"", "add_back", "list_dir", "", true, "allow entry"},
		{"", "add_back", "other", "", false, "no allow entry"},
		{"", "nothing", "x", "", false, `deny entry "*"`},
		// a group mixing categories and names
		{"", "web", "fetch", "web", true, ""},
		{"", "web", "dns_lookup", "net", true, ""},
		{"", "web", "ping", "net", false, ""},
		// global, then the caller's: both must allow
		{"no_shell", "", "uptime", "shell", false, `profile "no_shell"`},
		{"no_shell", "add_back", "uptime", "shell", false, `profile "no_shell"`},
		{"add_back", "no_shell", "uptime", "shell", false, `profile "no_shell"`},
		{"no_shell", "readonly", "cat_file", "", true, ""},
		{"no_shell", "readonly", "word_count", "", false, `profile "readonly"`},
		// unknown profile allows nothing
		{"", "missing", "x", "", false, `profile "missing" is not defined`},
	} {
		p := testProfiles()
		p.Global = tc.global
		got, reason := p.Allowed(tc.tool, tc.category, tc.profile)
		if got != tc.want || !strings.Contains(reason, tc.reason) {
			t.Errorf("global %q profile %q tool %q/%q: got %v %q, want %v containing %q",
				tc.global, tc.profile, tc.tool, tc.category, got, reason, tc.want, tc.reason)
		}
	}
}

func TestProfileCheckNarrows(t *testing.T) {
	p := testProfiles()
	if ok, by, _ := p.Check("uptime", "shell", "everything", "no_shell"); ok || by != "no_shell" {
		t.Fatalf("narrowing by a second profile: %v %q", ok, by)
	}
	if ok, _, _ := p.Check("uptime", "shell", "everything", ""); !ok {
		t.Fatal("an empty extra profile narrows nothing")
	}
	var none *Profiles
	if ok, _ := none.Allowed("x", "", ""); !ok {
		t.Fatal("nil profiles allow everything")
	}
	if ok, _ := none.Allowed("x", "", "p"); ok {
		t.Fatal("nil profiles know no profile")
	}
}

func TestProfileValidate(t *testing.T) {
	if err := testProfiles().Validate(); err != nil {
		t.Fatal(err)
	}
	p := testProfiles()
	p.Global = "nope"
	p.Profiles["bad"] = Profile{Allow: []string{"group:ghost"}, Deny: []string{""}, AlsoAllow: []string{"group:other"}}
	p.Groups["empty"] = ToolGroup{}
	err := p.Validate()
	if err == nil {
		t.Fatal("want errors")
	}
	for _, want := range []string{`global profile "nope" is not defined`, `allow entry "group:ghost" names unknown tool group "ghost"`,
		`deny has an empty entry`, `also_allow entry "group:other"`, `tool group "empty" lists no categories and no tools`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}
