package repocode

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"

	"github.com/toolcage/toolcage/policy/shellsyntax"
)

// The git environment: git run by toolcage in a workspace (the exec
// toolset's commands, shell tools holding filesystem) reads the
// repository's configuration, which an agent with a writable workspace,
// or anyone before it, may have made name programs. Every such setting
// that a later setting can switch off is switched off here, as
// command-scope configuration (GIT_CONFIG_COUNT: above the repository's
// own, which git cannot be told to skip); the system and global files are
// not read. What no setting can switch off (diff.external, the drivers a
// .gitattributes file names, aliases) is what Scan finds.

// offSettings switch off the programs git would run from a setting:
// false where git runs the value (false runs nothing and fails), empty
// where an empty value means none.
var offSettings = [][2]string{
	{"core.fsmonitor", "false"},
	{"core.hooksPath", "/dev/null"},
	{"core.pager", "cat"},
	{"core.editor", "false"},
	{"sequence.editor", "false"},
	{"core.sshCommand", "false"},
	{"core.askPass", ""},
	{"credential.helper", ""}, // an empty helper clears the list, URL-specific ones too
	{"gpg.program", "false"},
	{"gpg.openpgp.program", "false"},
	{"gpg.x509.program", "false"},
	{"gpg.ssh.program", "false"},
	{"gpg.ssh.defaultKeyCommand", "false"},
	{"core.alternateRefsCommand", "false"},
	{"protocol.ext.allow", "never"}, // wins over protocol.allow and any url.*.insteadOf to ext::
}

// offKey matches the keys Env makes harmless: those it sets, and those a
// setting of it overrides (credential.URL.helper, pager.CMD: git starts
// a pager only on a terminal, which a sandbox has not; protocol and URL
// rewrites, which reach a command only through ext::;
// uploadpack.packObjectsHook, which git reads only from protected
// configuration, never a repository's).
var offKey = regexp.MustCompile(`^(core\.(fsmonitor|hookspath|pager|editor|sshcommand|askpass|alternaterefscommand)|sequence\.editor|` +
	`credential(\..+)?\.helper|gpg(\..+)?\.program|gpg\.ssh\.defaultkeycommand|pager\..+|protocol(\..+)?\.allow|` +
	`url\..+\.(insteadof|pushinsteadof)|uploadpack\.packobjectshook|include\.path|includeif\..+\.path)$`)

// Env is the environment git runs with in a sandbox, added to env (a
// tool's own, which may hold command-scope settings of its own: ours come
// after them, and the last one wins): every program a setting can
// switch off switched off, the system and global configuration not read,
// and safeDirs (the person's workspace, which the sandbox's user may not
// own) marked safe for git's ownership check, which trusts the
// repository's configuration inside the sandbox only.
func Env(env map[string]string, safeDirs ...string) map[string]string {
	out := make(map[string]string, len(env)+2*len(offSettings)+8)
	for k, v := range env {
		out[k] = v
	}
	n := 0
	if c, err := strconv.Atoi(env["GIT_CONFIG_COUNT"]); err == nil && c > 0 && c < 1000 {
		n = c
	}
	add := func(k, v string) {
		out[fmt.Sprintf("GIT_CONFIG_KEY_%d", n)] = k
		out[fmt.Sprintf("GIT_CONFIG_VALUE_%d", n)] = v
		n++
	}
	for _, d := range safeDirs {
		add("safe.directory", d)
	}
	for _, s := range offSettings {
		add(s[0], s[1])
	}
	out["GIT_CONFIG_COUNT"] = strconv.Itoa(n)
	out["GIT_CONFIG_NOSYSTEM"] = "1"
	out["GIT_CONFIG_GLOBAL"] = "/dev/null"
	return out
}

// Finding is a setting of a repository's configuration that makes git
// run a program Env does not switch off.
type Finding struct {
	File  string // the configuration file, as read on the host
	Key   string // section.[subsection.]name, as written
	Value string
}

func (f Finding) String() string { return fmt.Sprintf("%s = %s (%s)", f.Key, f.Value, f.File) }

// Alias is the alias a finding defines ("" for other settings): it runs
// only when a command names it.
func (f Finding) Alias() string {
	if k := strings.ToLower(f.Key); strings.HasPrefix(k, "alias.") {
		return f.Key[len("alias."):]
	}
	return ""
}

// Scan limits: git's own include depth, and what is read in all.
const (
	maxIncludeDepth = 10
	maxConfigBytes  = 1 << 20
	maxConfigFiles  = 32
)

// ErrUnreadable is a repository configuration Scan could not read
// whole: treat it as naming a program.
var ErrUnreadable = errors.New("repository configuration could not be read whole")

// Scan reads the configuration of the git repository at dir, a
// directory below root (the workspace on the host): dir/.git (a
// directory or a "gitdir:" file), its common directory, config.worktree
// and the files they include, whatever the condition. It lists the
// settings that name a program Env does not switch off. Every file is
// opened beneath root, as the sandbox sees it: a path leading out of it
// (a symlink, .., an absolute include) is not the repository's to
// vouch for and is a finding of its own; a repository git in the sandbox
// cannot reach is none. No repository is no finding. A configuration
// that cannot be read whole (too large, too many includes, not a file)
// is ErrUnreadable.
func Scan(root, dir string) ([]Finding, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnreadable, err)
	}
	defer r.Close()
	rel, err := filepath.Rel(root, dir)
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
		return nil, fmt.Errorf("%w: %s is not inside %s", ErrUnreadable, dir, root)
	}
	s := &scanner{root: r, base: root, seen: map[string]bool{}}
	gitDir, ok := s.gitDir(rel)
	if !ok {
		return nil, nil
	}
	files := []string{path.Join(gitDir, "config"), path.Join(gitDir, "config.worktree")}
	if common, err := s.read(path.Join(gitDir, "commondir")); err == nil {
		c := strings.TrimSpace(string(common))
		if local, ok := s.local(gitDir, c); ok {
			files = append(files, path.Join(local, "config"), path.Join(local, "config.worktree"))
		}
	}
	for _, f := range files {
		if err := s.file(f, 0); err != nil {
			return s.found, err
		}
	}
	return s.found, nil
}

type scanner struct {
	root  *os.Root
	base  string
	found []Finding
	seen  map[string]bool
	files int
	bytes int
}

// local makes p (relative to directory dir, or absolute on the host) a
// path beneath the root, if it is one.
func (s *scanner) local(dir, p string) (string, bool) {
	if filepath.IsAbs(p) {
		rel, err := filepath.Rel(s.base, p)
		if err != nil || !filepath.IsLocal(rel) {
			return "", false
		}
		return filepath.ToSlash(rel), true
	}
	j := path.Join(dir, filepath.ToSlash(p))
	return j, filepath.IsLocal(j) || j == "."
}

// gitDir finds dir's git directory: dir/.git, or where a .git file
// points (when that is beneath the root).
func (s *scanner) gitDir(dir string) (string, bool) {
	p := path.Join(filepath.ToSlash(dir), ".git")
	fi, err := s.root.Stat(p)
	switch {
	case err != nil:
		return "", false
	case fi.IsDir():
		return p, true
	}
	b, err := s.read(p)
	if err != nil {
		return "", false
	}
	target, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return "", false
	}
	return s.local(path.Dir(p), strings.TrimSpace(target))
}

func (s *scanner) file(p string, depth int) error {
	if depth > maxIncludeDepth || s.files >= maxConfigFiles {
		return fmt.Errorf("%s: %w: more than %d files or %d levels of includes", p, ErrUnreadable, maxConfigFiles, maxIncludeDepth)
	}
	if s.seen[p] {
		return nil
	}
	s.seen[p] = true
	b, err := s.read(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil // git skips a missing file, an include too
	case err != nil:
		return fmt.Errorf("%s: %w: %v", p, ErrUnreadable, err)
	}
	s.files++
	s.bytes += len(b)
	for _, e := range parseConfig(b) {
		k := strings.ToLower(e.key)
		if k == "include.path" || strings.HasPrefix(k, "includeif.") && strings.HasSuffix(k, ".path") {
			inc, ok := s.local(path.Dir(p), e.value)
			if !ok || strings.HasPrefix(e.value, "~") {
				// Settings from outside the workspace, or a home: not
				// the repository's to vouch for.
				s.found = append(s.found, Finding{File: p, Key: e.key, Value: e.value})
				continue
			}
			if err := s.file(inc, depth+1); err != nil {
				return err
			}
			continue
		}
		if shellsyntax.GitKeyRuns(e.key) && !offKey.MatchString(k) {
			s.found = append(s.found, Finding{File: p, Key: e.key, Value: e.value})
		}
	}
	return nil
}

// read reads a regular file beneath the root, within what is left of
// maxConfigBytes. It opens without blocking (a FIFO put there is refused,
// not waited on) and never follows a path out of the root.
func (s *scanner) read(p string) ([]byte, error) {
	f, err := s.root.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file")
	}
	limit := maxConfigBytes - s.bytes
	b, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	if len(b) > limit {
		return nil, fmt.Errorf("more than %d bytes of configuration", maxConfigBytes)
	}
	return b, nil
}

// entry is one key = value of a configuration file.
type entry struct{ key, value string }

// parseConfig reads git's configuration format leniently: [section],
// [section "subsection"], [section.subsection], name = value, a name
// alone (true), comments, quotes, escapes and continued lines. What it
// cannot read is skipped; since a finding is what parks a call, a
// lenient reading errs towards git's, which reads more.
func parseConfig(b []byte) []entry {
	var out []entry
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), maxConfigBytes+1)
	var pending string
	for sc.Scan() {
		line := pending + sc.Text()
		pending = ""
		if strings.HasSuffix(line, "\\") && !strings.HasSuffix(line, "\\\\") {
			pending = strings.TrimSuffix(line, "\\")
			continue
		}
		rest := strings.TrimSpace(line)
		if strings.HasPrefix(rest, "[") {
			end := closingBracket(rest)
			if end < 0 {
				continue
			}
			section = sectionName(rest[1:end])
			rest = strings.TrimSpace(rest[end+1:])
		}
		if rest == "" || rest[0] == '#' || rest[0] == ';' || section == "" {
			continue
		}
		name, value, hasEq := strings.Cut(rest, "=")
		name = strings.TrimSpace(name)
		if i := strings.IndexAny(name, " \t#;"); i >= 0 {
			name = name[:i]
		}
		if name == "" {
			continue
		}
		v := "true"
		if hasEq {
			v = configValue(value)
		}
		out = append(out, entry{key: section + "." + name, value: v})
	}
	return out
}

// closingBracket finds the ] that ends a section header, past a quoted
// subsection.
func closingBracket(s string) int {
	quoted := false
	for i := 1; i < len(s); i++ {
		switch {
		case s[i] == '\\' && quoted:
			i++
		case s[i] == '"':
			quoted = !quoted
		case s[i] == ']' && !quoted:
			return i
		}
	}
	return -1
}

// sectionName reads a header's inside: section "sub" or section.sub.
func sectionName(h string) string {
	h = strings.TrimSpace(h)
	name, sub, ok := strings.Cut(h, " ")
	if !ok {
		return h
	}
	sub = strings.TrimSpace(sub)
	sub = strings.TrimSuffix(strings.TrimPrefix(sub, "\""), "\"")
	sub = strings.NewReplacer(`\"`, `"`, `\\`, `\`).Replace(sub)
	return name + "." + sub
}

// configValue reads a value: quotes removed, escapes decoded, a comment
// outside quotes cut.
func configValue(v string) string {
	var b strings.Builder
	quoted := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '"':
			quoted = !quoted
		case c == '\\' && i+1 < len(v):
			i++
			switch v[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(v[i])
			}
		case (c == '#' || c == ';') && !quoted:
			return strings.TrimSpace(b.String())
		default:
			b.WriteByte(c)
		}
	}
	return strings.TrimSpace(b.String())
}

// Held says why git run in dir (below root) would run a program the
// repository's configuration names that Env does not switch off, or "":
// a finding (an alias only when uses says the command runs it), or a
// configuration Scan could not read whole. Callers hold the call for a
// person on a reason.
func Held(root, dir string, uses func(alias string) bool) string {
	found, err := Scan(root, dir)
	if err != nil {
		return err.Error()
	}
	for _, f := range found {
		if a := f.Alias(); a == "" || uses != nil && uses(a) {
			return "the repository's git configuration names a program: " + f.Key
		}
	}
	return ""
}

// Dir is the host directory of a sandbox path below /workspace, for a
// workspace at root; root itself for any other path.
func Dir(root, sandboxPath string) string {
	if rel, ok := strings.CutPrefix(sandboxPath, "/workspace/"); ok && filepath.IsLocal(rel) {
		return filepath.Join(root, rel)
	}
	return root
}
