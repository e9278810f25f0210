package policy

import (
	"fmt"
	"slices"
	"strings"
)

// Decisions on one call, as plain functions of plain values: the
// dispatcher asks them and turns their answers into coded errors.

// Tool status and approval values, as a definition and the store write them.
const (
	StatusActive = "active"

	ApprovalPreApproved = "preApproved"
	ApprovalAsk         = "ask"
	ApprovalBlocked     = "blocked"
)

// What becomes of a command that destroys work in a writable workspace
// (the shell rules' ask groups), a worker's protect: setting: held for a
// person (ask, the default), refused (blocked) or run (off).
const (
	ProtectAsk     = "ask"
	ProtectBlocked = "blocked"
	ProtectOff     = "off"
)

// StatusCallable reports whether a tool in status may be called: only
// active tools run; disabled, pending and rejected ones are refused.
func StatusCallable(status string) bool { return status == StatusActive }

// ApprovalVerdict is what a tool's approval setting says about one call.
type ApprovalVerdict int

// The approval verdicts.
const (
	// ApprovalRun: the call runs with no one asked.
	ApprovalRun ApprovalVerdict = iota
	// ApprovalPark: the call waits for a person's decision.
	ApprovalPark
	// ApprovalRefuse: the tool may not be called at all.
	ApprovalRefuse
)

func (v ApprovalVerdict) String() string {
	switch v {
	case ApprovalRun:
		return "run"
	case ApprovalPark:
		return "park"
	}
	return "refuse"
}

// Approval decides a call of a tool whose approval setting is mode.
// grantedAlways says a person allowed this exact call (tool, version,
// arguments) for good; it turns an ask into a run and changes nothing
// else. An unknown mode refuses.
func Approval(mode string, grantedAlways bool) ApprovalVerdict {
	switch mode {
	case ApprovalPreApproved:
		return ApprovalRun
	case ApprovalAsk:
		if grantedAlways {
			return ApprovalRun
		}
		return ApprovalPark
	}
	return ApprovalRefuse
}

// CallerProfiles lists the profiles a caller is held to after the global
// one, each once and lowercased: the one callers maps its id to, the one
// callers maps its worker to, and the one it asked for. callers' keys and
// values are lowercase.
func CallerProfiles(callers map[string]string, id, worker, requested string) []string {
	var out []string
	add := func(p string) {
		if p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	add(callers[strings.ToLower(id)])
	if worker != "" {
		add(callers[strings.ToLower(worker)])
	}
	add(strings.ToLower(requested))
	return out
}

// ProfileAllows decides whether a tool (name, category) is in the
// effective set of every profile in profiles, after set's global profile.
// With no set and no profile everything is allowed. The error says which
// profile refused and why.
func ProfileAllows(set *Profiles, profiles []string, name, category string) error {
	if set == nil && len(profiles) == 0 {
		return nil
	}
	ok, by, reason := set.Check(name, category, profiles...)
	if ok {
		return nil
	}
	return fmt.Errorf("tool %q is not in the effective tool set of profile %q: %s", name, by, reason)
}

// ShellNetworkAllowed reports whether a shell tool may hold the network
// permission: a shell command's own sockets pass no network guard, so
// each such tool must be named in granted (the config's list).
func ShellNetworkAllowed(tool string, hasNetwork bool, granted []string) bool {
	return !hasNetwork || slices.Contains(granted, tool)
}

// Stricter returns the stricter of two approval settings: blocked over
// ask over preApproved; an unknown setting counts as blocked.
func Stricter(a, b string) string {
	rank := func(m string) int {
		switch m {
		case ApprovalPreApproved:
			return 0
		case ApprovalAsk:
			return 1
		}
		return 2
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}
