package shellguard

import (
	"regexp"
	"strings"
)

// A listing of every variable (env, printenv, set, declare -p) piped
// straight into grep for some names prints those variables only: env |
// grep ^GO is how one looks at the Go settings, not a dump of secrets.
// Rules with except_filtered stand down for it; an inverted match, a
// pattern read from a file or a name that reads as a credential keep them.

// grepValueOpts are grep's (and rg's) options that take the next word.
var grepValueOpts = map[string]bool{"-A": true, "-B": true, "-C": true, "-m": true, "-d": true, "-D": true,
	"--max-count": true, "--context": true, "--after-context": true, "--before-context": true, "--label": true,
	"-g": true, "--glob": true, "-t": true, "--type": true, "-M": true, "--max-columns": true}

// filterNames is a pattern naming variables: NAME, ^NAME, NAME=, and
// alternatives of them, (A|B) or \(A\|B\).
var filterNames = regexp.MustCompile(`^\^?(\\?\()?[A-Za-z_][A-Za-z0-9_]*((\\?\|)\^?[A-Za-z_][A-Za-z0-9_]*)*(\\?\))?=?$`)

// credentialName is a variable name that reads as a credential's.
var credentialName = regexp.MustCompile(`(?i)token|secret|pass|key|auth|cred|session|cookie|private|cert|bearer|sig|aws|azure|gcp|google|github|gitlab|gh_|npm|pypi|docker|vault|slack|stripe|openai|anthropic|api`)

// namesFilter reports whether seg is grep (egrep, fgrep, rg) keeping the
// lines that name some variables (one pattern, not inverted, from the
// command line), or wc, which shows none.
func namesFilter(seg *segment) bool {
	if seg.kind != segCmd {
		return false
	}
	switch seg.name {
	case "grep", "egrep", "fgrep", "rg":
	case "wc":
		return true // counts show no variable
	default:
		return false
	}
	var pats []string
	operand := false
	args := seg.argv[1:]
	for k := 0; k < len(args); k++ {
		a := args[k]
		switch {
		case a == "--":
			if k+1 < len(args) && len(pats) == 0 {
				pats = append(pats, args[k+1])
			}
			k = len(args)
		case a == "-e" || a == "--regexp":
			if k+1 >= len(args) {
				return false
			}
			pats = append(pats, args[k+1])
			k++
		case strings.HasPrefix(a, "--regexp="):
			pats = append(pats, strings.TrimPrefix(a, "--regexp="))
		case a == "-f" || strings.HasPrefix(a, "--file") || a == "--invert-match" || a == "--files-without-match":
			return false
		case grepValueOpts[a]:
			k++
		case strings.HasPrefix(a, "--"):
		case strings.HasPrefix(a, "-") && len(a) > 1:
			// A cluster of flags: -v inverts, -f and -e take values.
			if strings.ContainsAny(a[1:], "vfeL") {
				return false
			}
		case !operand:
			operand = true
			if len(pats) == 0 {
				pats = append(pats, a)
			}
		}
	}
	if len(pats) != 1 {
		return false
	}
	p := pats[0]
	return filterNames.MatchString(p) && !credentialName.MatchString(p)
}
