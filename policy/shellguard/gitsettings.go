package shellguard

import (
	"regexp"
	"slices"
	"strings"

	"github.com/toolcage/toolcage/policy/shellsyntax"
)

// Git settings that make git run programs, set in a repository: the
// person's git reads the repository's configuration and hooks when they
// later work there, outside any sandbox. The detector git_program_setting
// finds a command that stores such a setting in the repository (git
// config KEY VALUE, without --global or --system, of a key
// shellsyntax.GitKeyRuns names, whose value runs more than a program on
// the person's PATH), and one that writes the repository's configuration
// or hooks by other means (a redirection, cp, tee, sed -i, chmod... into
// .git/config or .git/hooks/). Reading them, and settings of keys that
// run nothing, pass. A repository planted under another name (a bare
// x.git, a .git file pointing elsewhere) is a known gap.

// gitSettings reports what seg stores in a repository's git settings.
func (w *walker) gitSettings(seg *segment, args []arg) {
	if seg.name == "git" && gitSetsProgram(seg, args) {
		w.detected("git_program_setting", 0, seg.text)
		return
	}
	for _, p := range written(seg) {
		if gitSettingsPath(p) {
			w.detected("git_program_setting", 0, seg.text)
			return
		}
	}
}

// gitSetsProgram reports a git config write of a program setting into the
// repository (or a file named with -f).
func gitSetsProgram(seg *segment, args []arg) bool {
	sub := shellsyntax.Read(seg).Cmd
	if sub < 0 || sub >= len(args) || args[sub].e != "config" {
		return false
	}
	var ops []arg
	for i := sub + 1; i < len(args); i++ {
		a := args[i]
		switch {
		case len(ops) == 1 && ops[0].e != "set" || len(ops) == 2 && ops[0].e == "set":
			ops = append(ops, a) // the value, whatever it starts with
		case a.e == "--global" || a.e == "--system":
			return false // the sandbox's own, never the person's repository
		case valueOpt(gitConfig, a.e):
			i++
		case strings.HasPrefix(a.e, "--get") || a.e == "--list" || a.e == "-l" || strings.HasPrefix(a.e, "--unset") ||
			a.e == "--rename-section" || a.e == "--remove-section" || a.e == "-e" || a.e == "--edit":
			return false
		case strings.HasPrefix(a.e, "-") && !a.dyn:
		default:
			ops = append(ops, a)
		}
	}
	first := ""
	if len(ops) > 0 && !ops[0].dyn {
		first = ops[0].e
	}
	k := shellsyntax.GitConfigKey(first, len(ops))
	if k < 0 {
		return false
	}
	key, val := ops[k], ops[k+1]
	if key.dyn {
		return true
	}
	return gitSettingRuns(key.e, val.e, val.dyn)
}

// gitConfig is git config's grammar (policy/shellsyntax): its options
// that take a value (-f FILE, --type TYPE).
var gitConfig = shellsyntax.GrammarOf("git").Verb("config")

// valueOpt reports whether word is one of g's options that take the next
// word as their value, written alone (-f, --file).
func valueOpt(g *shellsyntax.Grammar, word string) bool {
	if name, ok := strings.CutPrefix(word, "--"); ok {
		return slices.Contains(g.ValueLong, name)
	}
	return len(word) == 2 && word[0] == '-' && strings.IndexByte(g.ValueOpts, word[1]) >= 0
}

// gitSettingRuns reports whether setting key to val makes git run more
// than a program on the person's PATH.
func gitSettingRuns(key, val string, dyn bool) bool {
	k := strings.ToLower(key)
	switch {
	case !shellsyntax.GitKeyRuns(k):
		return false
	case dyn:
		return true
	case strings.HasPrefix(k, "alias."):
		// !shell text, or options that run programs (-c core.pager=...).
		return strings.HasPrefix(strings.TrimSpace(val), "!") || gitAliasOptions.MatchString(val)
	case strings.HasPrefix(k, "url."):
		return strings.Contains(k, "ext::") // a URL rewritten to run a command
	case strings.HasPrefix(k, "protocol."):
		v := strings.ToLower(strings.TrimSpace(val))
		return v == "always" || v == "user"
	case shellsyntax.GitKeyCommand(k):
		return !bareProgram.MatchString(strings.TrimSpace(val))
	}
	// Where git finds hooks, settings or templates: anywhere but nowhere.
	return strings.TrimSpace(val) != "/dev/null"
}

var (
	// gitAliasOptions are options in an alias that make git run programs.
	gitAliasOptions = regexp.MustCompile(`(^|\s)(-c\b|--config-env|--exec-path|--git-dir|-C\b)`)
	// bareProgram is a value that names a program on the person's PATH
	// and nothing else (less, vim, cat, false): no path, no arguments,
	// no shell text.
	bareProgram = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]*$`)
)

// gitSettingsPath reports whether p is a repository's configuration or
// hooks: .git/config, .git/config.worktree, .git/hooks/..., and the same
// in .git/modules/NAME/ and .git/worktrees/NAME/ (info/attributes names
// drivers, which only settings define); or .git itself (a directory
// copied or moved into place whole, a "gitdir:" file).
func gitSettingsPath(p string) bool {
	parts := strings.Split(strings.ReplaceAll(p, "\\", "/"), "/")
	for i, part := range parts {
		if !strings.EqualFold(part, ".git") {
			continue
		}
		if strings.Trim(strings.Join(parts[i+1:], ""), ".") == "" {
			return true
		}
		for j := i + 1; j < len(parts); j++ {
			switch strings.ToLower(parts[j]) {
			case "config", "config.worktree", "hooks", "commondir":
				return true
			case "modules", "worktrees":
				j++ // the name of the submodule or worktree
			case ".", "":
			default:
				return false
			}
		}
	}
	return false
}
