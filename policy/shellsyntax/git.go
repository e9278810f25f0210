package shellsyntax

import (
	"regexp"
	"strings"
)

// What git makes of its settings and its subcommands' options: which
// configuration keys name a program git runs (or a place it loads
// programs and more settings from), and, per subcommand, the options that
// write files or name programs. The deny rules (policy/shellguard), the
// exec toolset's rules (policy/execrules, through Effects) and the git
// environment toolcage runs git with (policy/repocode) read these; none
// keeps a list of its own.

// gitCommandKey matches keys whose value is a command line git runs
// (through a shell, or as a program with arguments).
var gitCommandKey = regexp.MustCompile(`^(core\.(pager|sshcommand|editor|askpass|fsmonitor|gitproxy|alternaterefscommand)|` +
	`sequence\.editor|diff\.external|diff\..+\.(textconv|command)|merge\..+\.driver|filter\..+\.(clean|smudge|process)|` +
	`pager\..+|gpg(\..+)?\.program|gpg\.ssh\.defaultkeycommand|credential(\..+)?\.helper|` +
	`(difftool|mergetool|man|browser)\..+\.(cmd|path)|web\.browser|interactive\.difffilter|uploadpack\.packobjectshook|` +
	`sendemail\.(sendmailcmd|tocmd|cccmd|headercmd|smtpserver)|trailer\..+\.(command|cmd)|remote\..+\.(uploadpack|receivepack)|` +
	`submodule\..+\.update|imap\.tunnel|instaweb\.(httpd|browser)|` +
	// Any section's key of these names: how git names a command.
	`(.+\.)?(cmd|command|program|helper|driver|textconv|external|sshcommand|askpass|fsmonitor|clean|smudge|process|packobjectshook))$`)

// gitPlaceKey matches keys whose value is where git finds programs or
// more settings (hooks, included config, templates with hooks, a remote
// helper git-remote-VCS), or that let a URL run a command (ext::).
var gitPlaceKey = regexp.MustCompile(`^(core\.hookspath|include\.path|includeif\..+\.path|init\.templatedir|` +
	`remote\..+\.vcs|protocol(\..+)?\.allow|url\..+\.(insteadof|pushinsteadof))$`)

// GitKeyCommand reports whether git runs the value of configuration key
// (section.[subsection.]name, any case) as a command line.
func GitKeyCommand(key string) bool { return gitCommandKey.MatchString(gitKeyFold(key)) }

// GitKeyRuns reports whether a setting of key makes git run a program the
// value names or finds: GitKeyCommand's keys, the places git loads
// programs or settings from (core.hooksPath, include.path), and aliases
// (alias.x = !shell, or options such as -c core.pager=...).
func GitKeyRuns(key string) bool {
	k := gitKeyFold(key)
	return gitCommandKey.MatchString(k) || gitPlaceKey.MatchString(k) || strings.HasPrefix(k, "alias.")
}

// GitConfigKey says which of git config's n operands (after its options;
// first is the first one's text, "" when it is not known) is the key a
// write sets, its value the next one: git config KEY VALUE, git config
// set KEY VALUE. It is -1 for a read (git config KEY) and for the verbs
// that read, remove or edit (get, list, unset, edit...).
func GitConfigKey(first string, n int) int {
	k := 0
	switch first {
	case "set":
		k = 1
	case "get", "list", "unset", "rename-section", "remove-section", "edit":
		return -1
	}
	if n < k+2 {
		return -1
	}
	return k
}

// gitKeyFold folds a key as git compares it: section and name ignore
// case; a subsection does not, but folding it too only widens the match.
func gitKeyFold(key string) string { return strings.ToLower(strings.TrimSpace(key)) }

// gitSubcommands are the grammars of git's subcommands, for Effects: the
// options that take a value (so the value is not read as an option), and
// those that write a file or name a program (WriteOpts, CodeOpts,
// RunOpts). git's options come before and after operands (Permute).
var gitSubcommands = func() map[string]*Grammar {
	diffLike := &Grammar{Permute: true, ValueLong: []string{"output", "format", "pretty", "author", "committer", "grep", "since", "until", "after", "before"},
		ValueOpts: "nU", WriteLong: []string{"output"}, RunLong: []string{"ext-diff", "textconv"}}
	m := map[string]*Grammar{
		"format-patch": {Permute: true, ValueOpts: "ov", ValueLong: []string{"output-directory", "output", "subject-prefix"},
			WriteOpts: "o", WriteLong: []string{"output-directory", "output"}, RunLong: []string{"ext-diff", "textconv"}},
		"archive":   {Permute: true, ValueOpts: "o", ValueLong: []string{"output", "format", "prefix", "remote", "exec"}, WriteOpts: "o", WriteLong: []string{"output"}, CodeLong: []string{"exec", "remote"}},
		"grep":      {Permute: true, ValueOpts: "efABCm", OptOpts: "O", OptLong: []string{"open-files-in-pager"}, RunOpts: "O", RunLong: []string{"open-files-in-pager", "textconv"}},
		"blame":     {Permute: true, ValueOpts: "LSC", ValueLong: []string{"contents"}, RunLong: []string{"textconv"}},
		"cat-file":  {Permute: true, RunLong: []string{"textconv", "filters"}},
		"clone":     gitClone,
		"fetch":     {Permute: true, ValueLong: []string{"depth"}, CodeLong: []string{"upload-pack"}},
		"pull":      {Permute: true, ValueLong: []string{"depth"}, CodeLong: []string{"upload-pack"}},
		"ls-remote": {Permute: true, CodeOpts: "u", CodeLong: []string{"upload-pack"}},
		"push":      {Permute: true, ValueOpts: "o", ValueLong: []string{"push-option", "repo"}, CodeLong: []string{"receive-pack", "exec"}},
		"send-pack": {Permute: true, CodeLong: []string{"receive-pack", "exec"}},
		"rebase":    {Permute: true, ValueOpts: "sX", ValueLong: []string{"onto", "strategy"}, CodeOpts: "x", CodeLong: []string{"exec"}},
		"difftool":  {Permute: true, CodeOpts: "xt", CodeLong: []string{"extcmd", "tool"}},
		"mergetool": {Permute: true, CodeOpts: "t", CodeLong: []string{"tool"}},
		"send-email": {Permute: true, CodeLong: []string{"sendmail-cmd", "smtp-server", "to-cmd", "cc-cmd", "header-cmd"},
			ValueLong: []string{"to", "cc", "bcc", "from", "subject"}},
		"filter-branch": {Permute: true, CodeLong: []string{"env-filter", "tree-filter", "index-filter", "parent-filter", "msg-filter",
			"commit-filter", "tag-name-filter"}},
		"help":     {Permute: true, RunOpts: "wmi", RunLong: []string{"web", "man", "info"}},
		"instaweb": {Permute: true, CodeOpts: "dp", CodeLong: []string{"httpd", "browser", "module-path"}},
		// git config: -e runs the editor, -f FILE is written by a write;
		// a key that names a program is read by Effects (gitConfigEffect).
		"config": {Permute: true, ValueOpts: "f", ValueLong: []string{"file", "blob", "type", "default", "comment", "value"},
			RunOpts: "e", RunLong: []string{"edit"}},
	}
	for _, name := range strings.Fields("diff log show whatchanged diff-tree diff-index diff-files range-diff reflog stash") {
		m[name] = diffLike
	}
	return m
}()

// gitClone is git clone's grammar: its -c/--config KEY=VALUE settings are
// read like git -c's.
var gitClone = &Grammar{Permute: true, ValueOpts: "obj", ValueLong: []string{"origin", "branch", "depth", "reference"},
	CodeOpts: "uc", CodeLong: []string{"upload-pack", "template", "separate-git-dir", "config"}}

// gitRunVerbs are subcommands whose next operand makes them run a
// command line (git bisect run CMD, git submodule foreach CMD);
// gitWriteVerbs, ones whose next operand makes them write the file after
// it (git bundle create FILE).
var (
	gitRunVerbs   = map[string]string{"bisect": "run", "submodule": "foreach"}
	gitWriteVerbs = map[string]string{"bundle": "create"}
)
