package policy

import (
	"slices"
	"strings"
	"testing"
)

func TestStatusCallable(t *testing.T) {
	for _, tt := range []struct {
		status string
		want   bool
	}{
		{"active", true}, {"disabled", false}, {"pending_approval", false}, {"rejected", false}, {"", false}, {"Active", false},
	} {
		if got := StatusCallable(tt.status); got != tt.want {
			t.Errorf("StatusCallable(%q) = %v, want %v", tt.status, got, tt.want)
		}
	}
}

func TestApproval(t *testing.T) {
	for _, tt := range []struct {
		mode   string
		always bool
		want   ApprovalVerdict
	}{
		{ApprovalPreApproved, false, ApprovalRun},
		{ApprovalPreApproved, true, ApprovalRun},
		{ApprovalAsk, false, ApprovalPark},
		{ApprovalAsk, true, ApprovalRun},
		{ApprovalBlocked, false, ApprovalRefuse},
		{ApprovalBlocked, true, ApprovalRefuse}, // an --always grant never unblocks
		{"", false, ApprovalRefuse},
		{"ASK", true, ApprovalRefuse},
	} {
		if got := Approval(tt.mode, tt.always); got != tt.want {
			t.Errorf("Approval(%q, %v) = %v, want %v", tt.mode, tt.always, got, tt.want)
		}
	}
}

func TestCallerProfiles(t *testing.T) {
	callers := map[string]string{"uid:1000": "dev", "w1": "agent", "bot": "agent"}
	for _, tt := range []struct {
		id, worker, requested string
		want                  []string
	}{
		{"uid:1000", "", "", []string{"dev"}},
		{"UID:1000", "", "", []string{"dev"}},
		{"uid:1000", "W1", "Readonly", []string{"dev", "agent", "readonly"}},
		{"bot", "w1", "agent", []string{"agent"}}, // each once
		{"nobody", "", "", nil},
		{"nobody", "", "x", []string{"x"}},
	} {
		if got := CallerProfiles(callers, tt.id, tt.worker, tt.requested); !slices.Equal(got, tt.want) {
			t.Errorf("CallerProfiles(%q, %q, %q) = %q, want %q", tt.id, tt.worker, tt.requested, got, tt.want)
		}
	}
}

func TestProfileAllows(t *testing.T) {
	set := testProfiles()
	for _, tt := range []struct {
		name     string
		set      *Profiles
		profiles []string
		tool     string
		category string
		refused  string // a part of the error; "" means allowed
	}{
		{"no profiles at all", nil, nil, "anything", "", ""},
		{"a profile with none configured", nil, []string{"dev"}, "anything", "", `profile "dev"`},
		{"unknown profile", set, []string{"nope"}, "anything", "", `"nope" is not defined`},
	} {
		err := ProfileAllows(tt.set, tt.profiles, tt.tool, tt.category)
		switch {
		case tt.refused == "" && err != nil:
			t.Errorf("%s: refused: %v", tt.name, err)
		case tt.refused != "" && (err == nil || !strings.Contains(err.Error(), tt.refused)):
			t.Errorf("%s: got %v, want an error with %q", tt.name, err, tt.refused)
		}
	}
	// Whatever Check decides, ProfileAllows agrees with it.
	for _, name := range set.Names() {
		for _, tool := range []string{"read_file", "shell_exec", "weather", "x"} {
			ok, _, _ := set.Check(tool, "", name)
			if err := ProfileAllows(set, []string{name}, tool, ""); (err == nil) != ok {
				t.Errorf("profile %s, tool %s: Check %v, ProfileAllows %v", name, tool, ok, err)
			}
		}
	}
}

func TestShellNetworkAllowed(t *testing.T) {
	for _, tt := range []struct {
		tool    string
		network bool
		granted []string
		want    bool
	}{
		{"dig", false, nil, true},
		{"dig", true, nil, false},
		{"dig", true, []string{"curl"}, false},
		{"dig", true, []string{"curl", "dig"}, true},
		{"dig", true, []string{"DIG"}, false}, // names are exact
	} {
		if got := ShellNetworkAllowed(tt.tool, tt.network, tt.granted); got != tt.want {
			t.Errorf("ShellNetworkAllowed(%q, %v, %q) = %v, want %v", tt.tool, tt.network, tt.granted, got, tt.want)
		}
	}
}

func TestStricter(t *testing.T) {
	for _, tt := range []struct{ a, b, want string }{
		{ApprovalPreApproved, ApprovalAsk, ApprovalAsk},
		{ApprovalAsk, ApprovalPreApproved, ApprovalAsk},
		{ApprovalBlocked, ApprovalAsk, ApprovalBlocked},
		{ApprovalPreApproved, ApprovalPreApproved, ApprovalPreApproved},
		{ApprovalPreApproved, "bogus", "bogus"},
	} {
		if got := Stricter(tt.a, tt.b); got != tt.want {
			t.Errorf("Stricter(%s, %s) = %s, want %s", tt.a, tt.b, got, tt.want)
		}
	}
}
