package shellsyntax

import (
	"fmt"
	"strings"
	"testing"
)

// effects renders Effects as "kind:word:name ..." (w, r, ?).
func effects(ws []string) string {
	var out []string
	for _, e := range Effects(words(ws)) {
		out = append(out, fmt.Sprintf("%c:%d:%s", " wr?"[e.Kind], e.Word, e.Name))
	}
	return strings.Join(out, " ")
}

func TestEffects(t *testing.T) {
	tests := []struct {
		line []string
		want string
	}{
		// Everyday: nothing beyond the words.
		{strings.Fields("git log --oneline"), ""},
		{strings.Fields("git diff --stat"), ""},
		{strings.Fields("git -c color.ui=never log"), ""},
		{strings.Fields("git -c user.name=x commit -m y"), ""},
		{strings.Fields("git status -s"), ""},
		{strings.Fields("git --no-pager log -n 5 --format %h"), ""},
		{strings.Fields("git --exec-path"), ""},
		{strings.Fields("git log -- $F"), ""},
		{strings.Fields("git config user.name"), ""},
		{strings.Fields("git config --get core.pager"), ""},
		{strings.Fields("git config user.email a@b"), ""},
		{strings.Fields("sort -k 2 file"), ""},
		{strings.Fields("sed -n 1,5p file"), ""},
		{[]string{"sed", "s/new/old/g", "file"}, ""},
		{[]string{"sed", "-e", "s/x/y/", "file"}, ""},
		{strings.Fields("find . -name *.go -print"), ""},
		{strings.Fields("curl -s https://example.com"), ""},
		{strings.Fields("python3 -c print(1)"), ""},
		{strings.Fields("ls -la"), ""},
		{strings.Fields("make test"), ""},
		// Options that write a file.
		{strings.Fields("git diff --output=.git/config"), "w:2:output"},
		{strings.Fields("git log --output .git/config"), "w:2:output"},
		{strings.Fields("git log -p --output=x --oneline"), "w:3:output"},
		{strings.Fields("git format-patch -o out HEAD~1"), "w:2:o"},
		{strings.Fields("git archive -oout.tar HEAD"), "w:2:o"},
		{strings.Fields("git bundle create x.bundle HEAD"), "w:2:create"},
		{strings.Fields("sort -o out in"), "w:1:o"},
		{strings.Fields("sort in --output=out"), "w:2:output"},
		{strings.Fields("sed -i s/a/b/ f"), "w:1:i"},
		{strings.Fields("sed -ni.bak 1p f"), "w:1:i"},
		{[]string{"sed", "1w /tmp/x", "f"}, "w:1:script"},
		{[]string{"sed", "s/a/b/w .git/config", "f"}, "w:1:script"},
		{[]string{"sed", "-e", "s|a|b|e", "f"}, "w:1:script"},
		{strings.Fields("find . -fprint .git/config"), "w:2:fprint"},
		{strings.Fields("find . -name *.o -delete"), "w:4:delete"},
		{strings.Fields("curl https://example.com -o x"), "w:2:o"},
		{strings.Fields("wget -O x https://example.com"), "w:1:O"},
		{strings.Fields("less -o log f"), "w:1:o"},
		{strings.Fields("perl -pi -e s/a/b/ f"), "w:1:i"},
		{strings.Fields("rsync --log-file=x a b"), "w:1:log-file"},
		// Options that name a program, or where programs come from.
		{strings.Fields("git -c core.fsmonitor=./x status"), "r:1:c"},
		{strings.Fields("git -c core.hooksPath=h commit"), "r:1:c"},
		{strings.Fields("git -c alias.x=!sh x"), "r:1:c"},
		{strings.Fields("git -c CORE.PAGER=x log"), "r:1:c"},
		{strings.Fields("git -c $K log"), "r:1:c"},
		{strings.Fields("git --config-env=core.pager=X log"), "r:1:config-env"},
		{strings.Fields("git --exec-path=. status"), "r:1:exec-path"},
		{strings.Fields("git --git-dir=x log"), "r:1:git-dir"},
		{strings.Fields("git -C sub log"), "r:1:C"},
		{strings.Fields("git log --ext-diff"), "r:2:ext-diff"},
		{strings.Fields("git diff --textconv"), "r:2:textconv"},
		{strings.Fields("git grep -Ox foo"), "r:2:O"},
		{strings.Fields("git fetch --upload-pack=x origin"), "r:2:upload-pack"},
		{strings.Fields("git clone -u x a b"), "r:2:u"},
		{strings.Fields("git clone -c core.fsmonitor=x a b"), "r:2:c"},
		{strings.Fields("git clone --template=t a b"), "r:2:template"},
		{strings.Fields("git push --receive-pack x"), "r:2:receive-pack"},
		{strings.Fields("git rebase -x make HEAD~3"), "r:2:x"},
		{strings.Fields("git difftool --extcmd=x"), "r:2:extcmd"},
		{strings.Fields("git bisect run make"), "r:2:run"},
		{strings.Fields("git submodule foreach x"), "r:2:foreach"},
		{strings.Fields("git config core.fsmonitor ./x"), "r:2:config"},
		{strings.Fields("git config --local alias.st !sh"), "r:3:config"},
		{strings.Fields("git config set core.hooksPath h"), "r:3:config"},
		{strings.Fields("git config --add include.path ../x"), "r:3:config"},
		{strings.Fields("git config $K x"), "r:2:config"},
		{strings.Fields("git config -e"), "r:2:e"},
		{strings.Fields("make -f other.mk"), "r:1:f"},
		{strings.Fields("make --eval=x"), "r:1:eval"},
		{strings.Fields("tar -I x -cf a.tar ."), "r:1:I"},
		{strings.Fields("tar --to-command=x -xf a.tar"), "r:1:to-command"},
		{strings.Fields("rsync -e x a b"), "r:1:e"},
		{strings.Fields("npm test --script-shell=x"), "r:2:script-shell"},
		{strings.Fields("sort --compress-program=x f"), "r:1:compress-program"},
		{strings.Fields("curl -K cfg"), "r:1:K"},
		// Abbreviated long options, as getopt_long and git take them.
		{strings.Fields("git log --outp=.git/config"), "w:2:outp"},
		{strings.Fields("git diff --ext-d"), "r:2:ext-d"},
		{strings.Fields("git --exec-pa=. status"), "r:1:exec-pa"},
		{strings.Fields("sort --out=x f"), "w:1:out"},
		{strings.Fields("sed --in-pl s/a/b/ f"), "w:1:in-pl"},
		{strings.Fields("git diff --text"), ""},
		{strings.Fields("git log --no-ext-diff"), ""},
		{strings.Fields("git diff --ou"), ""}, // too short to tell
		// Words known only when it runs, where an option may stand.
		{strings.Fields("git log $X"), "?:2:"},
		{strings.Fields("git $X"), "?:1:"},
		{strings.Fields("git diff -$X"), "?:2:"},
		{strings.Fields("git diff v$X"), ""},
		{strings.Fields("sort $X f"), "?:1:"},
		{strings.Fields("git status $X"), ""}, // no option of git status writes or runs
	}
	for _, tt := range tests {
		if got := effects(tt.line); got != tt.want {
			t.Errorf("Effects(%q) = %q, want %q", tt.line, got, tt.want)
		}
	}
}

func TestGitKeys(t *testing.T) {
	for _, k := range []string{"core.fsmonitor", "core.hooksPath", "core.sshCommand", "core.pager", "alias.x", "diff.external",
		"filter.lfs.clean", "diff.foo.textconv", "merge.x.driver", "pager.log", "credential.helper", "credential.https://x.helper",
		"include.path", "includeIf.gitdir:x.path", "gpg.program", "gpg.ssh.program", "remote.origin.uploadpack", "remote.origin.vcs",
		"protocol.ext.allow", "url.ext::sh.insteadOf", "core.editor", "sequence.editor", "submodule.x.update", "uploadpack.packObjectsHook"} {
		if !GitKeyRuns(k) {
			t.Errorf("GitKeyRuns(%q) = false", k)
		}
	}
	for _, k := range []string{"color.ui", "user.name", "core.autocrlf", "color.pager", "diff.renames", "log.showSignature", "pull.rebase",
		"core.quotepath", "init.defaultBranch", "filter.lfs.required", "safe.directory", "core.untrackedCache"} {
		if GitKeyRuns(k) {
			t.Errorf("GitKeyRuns(%q) = true", k)
		}
	}
	if GitKeyCommand("core.hooksPath") || !GitKeyCommand("core.fsmonitor") {
		t.Error("GitKeyCommand: hooksPath is a place, fsmonitor a command")
	}
}

// TestGitConfigKey: the one reading of git config's operands, for Effects
// and the deny rules (shellguard's git_program_setting).
func TestGitConfigKey(t *testing.T) {
	for _, tt := range []struct {
		first string
		n     int
		want  int
	}{
		{"core.pager", 2, 0},  // git config core.pager less
		{"core.pager", 1, -1}, // a read
		{"", 2, 0},            // git config $KEY VALUE
		{"", 1, -1},
		{"set", 3, 1}, // git config set KEY VALUE
		{"set", 2, -1},
		{"get", 3, -1},
		{"unset", 2, -1},
		{"edit", 1, -1},
		{"list", 0, -1},
		{"x", 0, -1},
	} {
		if got := GitConfigKey(tt.first, tt.n); got != tt.want {
			t.Errorf("GitConfigKey(%q, %d) = %d, want %d", tt.first, tt.n, got, tt.want)
		}
	}
}

func FuzzEffects(f *testing.F) {
	for _, s := range []string{"git log --output=x", "git -c a=b config x y", "sed -i s/a/b/w", "find . -delete", "git config", "git config -"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		ws := words(strings.Fields(line))
		if len(ws) == 0 {
			return
		}
		for _, e := range Effects(ws) {
			if e.Word < 1 || e.Word >= len(ws) {
				t.Fatalf("%q: effect at word %d of %d", line, e.Word, len(ws))
			}
		}
	})
}
