package policy

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Tool profiles: which tools a caller may use at all.
//
// A group names tools by category, by name, or both. A profile has three
// lists of entries; an entry is a tool name, "group:NAME" or "*" (every
// tool). Within one profile a tool is allowed when
//
//	(Allow is empty || Allow matches) && !Deny matches  ||  AlsoAllow matches
//
// so deny wins over allow, and also-allow adds a tool back even over deny.
// Across the pipeline a tool must be allowed by the global profile (if one
// is set) and by every profile that applies to the caller.

// GroupPrefix marks a group entry in a profile list.
const GroupPrefix = "group:"

// ToolGroup is a named set of tools: every tool in one of Categories
// (compared ignoring case), and every tool named in Tools.
type ToolGroup struct {
	Categories []string
	Tools      []string
}

// Profile allows, denies and adds back tools.
type Profile struct {
	Allow, Deny, AlsoAllow []string
}

// Profiles is the configured groups and profiles. A nil *Profiles allows
// everything.
type Profiles struct {
	Groups   map[string]ToolGroup
	Profiles map[string]Profile
	// Global is the profile applied to every caller; "" means none.
	Global string
}

// Validate reports every entry naming an unknown group, an empty entry,
// and a Global naming an unknown profile.
func (p *Profiles) Validate() error {
	if p == nil {
		return nil
	}
	var errs []error
	for _, name := range sortedKeys(p.Groups) {
		g := p.Groups[name]
		if name == "" {
			errs = append(errs, errors.New("a tool group has an empty name"))
		}
		if len(g.Categories) == 0 && len(g.Tools) == 0 {
			errs = append(errs, fmt.Errorf("tool group %q lists no categories and no tools", name))
		}
	}
	for _, name := range sortedKeys(p.Profiles) {
		pr := p.Profiles[name]
		if name == "" {
			errs = append(errs, errors.New("a profile has an empty name"))
		}
		for _, l := range []struct {
			field   string
			entries []string
		}{{"allow", pr.Allow}, {"deny", pr.Deny}, {"also_allow", pr.AlsoAllow}} {
			for _, e := range l.entries {
				switch {
				case e == "":
					errs = append(errs, fmt.Errorf("profile %q: %s has an empty entry", name, l.field))
				case strings.HasPrefix(e, GroupPrefix):
					g := strings.TrimPrefix(e, GroupPrefix)
					if _, ok := p.Groups[g]; !ok {
						errs = append(errs, fmt.Errorf("profile %q: %s entry %q names unknown tool group %q (known: %s)",
							name, l.field, e, g, known(sortedKeys(p.Groups))))
					}
				}
			}
		}
	}
	if p.Global != "" && !p.Has(p.Global) {
		errs = append(errs, fmt.Errorf("global profile %q is not defined (known: %s)", p.Global, known(sortedKeys(p.Profiles))))
	}
	return errors.Join(errs...)
}

// Has reports whether a profile of that name is defined.
func (p *Profiles) Has(name string) bool {
	if p == nil {
		return false
	}
	_, ok := p.Profiles[name]
	return ok
}

// Names lists the defined profiles, sorted.
func (p *Profiles) Names() []string {
	if p == nil {
		return nil
	}
	return sortedKeys(p.Profiles)
}

// Allowed decides whether tool (of category) may be used under profile,
// after the global profile: both must allow it. An empty profile applies
// only the global one. An unknown profile allows nothing. reason says
// which profile decided and why.
func (p *Profiles) Allowed(tool, category, profile string) (bool, string) {
	ok, _, reason := p.Check(tool, category, profile)
	return ok, reason
}

// Check is Allowed over several caller profiles: the tool must be allowed
// by the global profile and by each non-empty profile. It returns the name
// of the profile that refused ("" when allowed) and the reason.
func (p *Profiles) Check(tool, category string, profiles ...string) (ok bool, by, reason string) {
	if p == nil {
		if slices.ContainsFunc(profiles, func(s string) bool { return s != "" }) {
			return false, profiles[0], "no tool profiles are configured"
		}
		return true, "", "no tool profiles are configured"
	}
	reason = "no profile applies"
	for _, name := range append([]string{p.Global}, profiles...) {
		if name == "" {
			continue
		}
		pr, known := p.Profiles[name]
		if !known {
			return false, name, fmt.Sprintf("profile %q is not defined", name)
		}
		var ok bool
		ok, reason = p.decide(pr, tool, category)
		if !ok {
			return false, name, fmt.Sprintf("profile %q: %s", name, reason)
		}
	}
	return true, "", reason
}

// decide applies one profile.
func (p *Profiles) decide(pr Profile, tool, category string) (bool, string) {
	if e, ok := p.match(pr.AlsoAllow, tool, category); ok {
		return true, fmt.Sprintf("tool %q is added back by also_allow entry %q", tool, e)
	}
	if e, ok := p.match(pr.Deny, tool, category); ok {
		return false, fmt.Sprintf("tool %q is denied by deny entry %q", tool, e)
	}
	if len(pr.Allow) == 0 {
		return true, fmt.Sprintf("tool %q is allowed (no allow list)", tool)
	}
	if e, ok := p.match(pr.Allow, tool, category); ok {
		return true, fmt.Sprintf("tool %q is allowed by allow entry %q", tool, e)
	}
	return false, fmt.Sprintf("tool %q matches no allow entry (%s)", tool, strings.Join(pr.Allow, ", "))
}

// match returns the first entry of list matching the tool.
func (p *Profiles) match(list []string, tool, category string) (string, bool) {
	for _, e := range list {
		switch {
		case e == "*":
			return e, true
		case strings.HasPrefix(e, GroupPrefix):
			g, ok := p.Groups[strings.TrimPrefix(e, GroupPrefix)]
			if ok && (slices.Contains(g.Tools, tool) || (category != "" && slices.ContainsFunc(g.Categories, func(c string) bool { return strings.EqualFold(c, category) }))) {
				return e, true
			}
		case e == tool:
			return e, true
		}
	}
	return "", false
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func known(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
