package repocode

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func TestFile(t *testing.T) {
	for _, p := range []string{".git/config", "./.git/hooks/pre-commit", "/workspace/.git/config", "sub/.git/info/attributes", ".git",
		".gitattributes", "a/.gitmodules", "Makefile", "GNUmakefile", "build/rules.mk", "package.json", "web/.npmrc", ".envrc",
		".vscode/tasks.json", ".idea/workspace.xml", ".husky/pre-commit", "x/../.git/config", ".GIT/config", ".exrc"} {
		if !File(p) {
			t.Errorf("File(%q) = false", p)
		}
	}
	for _, p := range []string{"README.md", "main.go", "notes/git.txt", ".gitignore", "make.txt", "package-lock.json.bak", "src/makefile.go",
		"docs/.github-notes", "out.log", "/tmp/x"} {
		if File(p) {
			t.Errorf("File(%q) = true", p)
		}
	}
}

func TestEnv(t *testing.T) {
	env := Env(map[string]string{"LANG": "C", "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "user.name", "GIT_CONFIG_VALUE_0": "x"}, "/workspace")
	if env["LANG"] != "C" || env["GIT_CONFIG_KEY_0"] != "user.name" || env["GIT_CONFIG_KEY_1"] != "safe.directory" || env["GIT_CONFIG_VALUE_1"] != "/workspace" {
		t.Fatalf("a tool's own settings kept, ours after them: %v", env)
	}
	n, _ := strconv.Atoi(env["GIT_CONFIG_COUNT"])
	got := map[string]string{}
	for i := 0; i < n; i++ {
		got[env[fmt.Sprintf("GIT_CONFIG_KEY_%d", i)]] = env[fmt.Sprintf("GIT_CONFIG_VALUE_%d", i)]
	}
	for k, v := range map[string]string{"core.fsmonitor": "false", "core.hooksPath": "/dev/null", "core.pager": "cat", "core.sshCommand": "false", "credential.helper": ""} {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if env["GIT_CONFIG_NOSYSTEM"] != "1" || env["GIT_CONFIG_GLOBAL"] != "/dev/null" {
		t.Errorf("system and global configuration read: %v", env)
	}
	// Every setting Env sets is one Scan leaves to it.
	for _, s := range offSettings {
		if !offKey.MatchString(strings.ToLower(s[0])) {
			t.Errorf("%s is set but not in offKey", s[0])
		}
	}
}

func writeRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, text := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func keys(fs []Finding) string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Key)
	}
	return strings.Join(out, " ")
}

func TestScan(t *testing.T) {
	plain := "[core]\n\trepositoryformatversion = 0\n\tbare = false\n[remote \"origin\"]\n\turl = https://example.com/x.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[user]\n\tname = A\n"
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"no repository", map[string]string{"README.md": "x"}, ""},
		{"a plain repository", map[string]string{".git/config": plain}, ""},
		{"switched off by Env", map[string]string{".git/config": plain + "[core]\n\tfsmonitor = ./x\n\thooksPath = h\n\tpager = ./x\n\tsshCommand = ./x\n[credential]\n\thelper = store\n[pager]\n\tlog = ./x\n"}, ""},
		{"diff.external", map[string]string{".git/config": plain + "[diff]\n\texternal = ./x\n"}, "diff.external"},
		{"drivers", map[string]string{".git/config": "[filter \"x\"]\n\tclean = ./x %f\n\tsmudge = ./x\n[diff \"y\"]\n\ttextconv = ./y\n[merge \"z\"]\n\tdriver = ./z\n"}, "filter.x.clean filter.x.smudge diff.y.textconv merge.z.driver"},
		{"alias", map[string]string{".git/config": "[alias]\n\tst = !sh ./x\n"}, "alias.st"},
		{"same line, odd case", map[string]string{".git/config": "[Diff] External = ./x\n"}, "Diff.External"},
		{"old subsection form", map[string]string{".git/config": "[filter.x]\n\tprocess = ./x\n"}, "filter.x.process"},
		{"continued and quoted", map[string]string{".git/config": "[diff]\n\texternal = \"./x\\\n y\" ; comment\n"}, "diff.external"},
		{"comment only", map[string]string{".git/config": "[diff]\n#\texternal = ./x\n;external = y\n"}, ""},
		{"include", map[string]string{".git/config": "[include]\n\tpath = ../inc.cfg\n", "inc.cfg": "[diff]\n\texternal = ./x\n"}, "diff.external"},
		{"includeIf", map[string]string{".git/config": "[includeIf \"gitdir:/x/\"]\n\tpath = sub/inc.cfg\n", ".git/sub/inc.cfg": "[alias]\n\tx = log\n"}, "alias.x"},
		{"include from a home", map[string]string{".git/config": "[include]\n\tpath = ~/evil.cfg\n"}, "include.path"},
		{"include outside", map[string]string{".git/config": "[include]\n\tpath = /etc/evil.cfg\n"}, "include.path"},
		{"include cycle", map[string]string{".git/config": "[include]\n\tpath = config\n[diff]\n\texternal = x\n"}, "diff.external"},
		{"missing include", map[string]string{".git/config": "[include]\n\tpath = nothere.cfg\n"}, ""},
		{"worktree config", map[string]string{".git/config": plain, ".git/config.worktree": "[diff]\n\texternal = ./x\n"}, "diff.external"},
		{"gitdir file", map[string]string{".git": "gitdir: .repo\n", ".repo/config": "[diff]\n\texternal = ./x\n"}, "diff.external"},
		{"gitdir outside", map[string]string{".git": "gitdir: /nonexistent/x\n"}, ""},
		{"commondir", map[string]string{".git": "gitdir: wt\n", "wt/commondir": "../main\n", "wt/config": "", "main/config": "[filter \"a\"]\n\tclean = x\n"}, "filter.a.clean"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := writeRepo(t, tt.files)
			got, err := Scan(root, root)
			if err != nil {
				t.Fatal(err)
			}
			if keys(got) != tt.want {
				t.Errorf("Scan = %q, want %q (%v)", keys(got), tt.want, got)
			}
		})
	}
}

func TestScanUnreadable(t *testing.T) {
	big := writeRepo(t, map[string]string{".git/config": "[user]\n\tname = " + strings.Repeat("a", maxConfigBytes) + "\n"})
	if _, err := Scan(big, big); !errors.Is(err, ErrUnreadable) {
		t.Errorf("a config over the limit: %v", err)
	}
	edge := writeRepo(t, map[string]string{".git/config": strings.Repeat("#", maxConfigBytes)})
	if _, err := Scan(edge, edge); err != nil {
		t.Errorf("a config at the limit: %v", err)
	}
	fifo := writeRepo(t, map[string]string{".git/HEAD": "ref: refs/heads/main\n"})
	if err := syscall.Mkfifo(filepath.Join(fifo, ".git", "config"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Scan(fifo, fifo); !errors.Is(err, ErrUnreadable) {
		t.Errorf("a FIFO as the config: %v", err)
	}
	out := writeRepo(t, map[string]string{".git/HEAD": "x", "../outside.cfg": ""})
	if err := os.Symlink("/etc/hostname", filepath.Join(out, ".git", "config")); err != nil {
		t.Fatal(err)
	}
	if _, err := Scan(out, out); !errors.Is(err, ErrUnreadable) {
		t.Errorf("a config symlinked out of the workspace: %v", err)
	}
	chain := map[string]string{}
	for i := 0; i <= maxIncludeDepth+1; i++ {
		name := fmt.Sprintf("c%d", i)
		if i == 0 {
			name = ".git/config"
		}
		chain[name] = fmt.Sprintf("[include]\n\tpath = %s/c%d\n", map[bool]string{true: "..", false: "."}[i == 0], i+1)
	}
	deep := writeRepo(t, chain)
	if _, err := Scan(deep, deep); !errors.Is(err, ErrUnreadable) {
		t.Errorf("includes deeper than git's limit: %v", err)
	}
}

func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{"[core]\n\tpager = x\n", "[a \"b\\\"c\"] d = e\n", "[x\n", "a=b\\\n", "[s]\nk = \"\\", "[s.t]\nk"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, e := range parseConfig([]byte(text)) {
			if !strings.Contains(e.key, ".") {
				t.Fatalf("%q: key %q has no section", text, e.key)
			}
		}
	})
}
