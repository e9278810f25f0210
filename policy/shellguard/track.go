package shellguard

import (
	"cmp"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/toolcage/toolcage/policy/shellsyntax"
)

// This file records what commands change for the commands after them:
// the working directory, variables, aliases, copies of programs, files
// written and downloaded, and the shell text other programs take in options
// and input; and it finds fork bombs in the function call graph.

// track records what a command changes that later commands depend on.
func (w *walker) track(seg *segment, sc *scope, stdin *data) {
	args := nonDropped(seg.args)
	w.socketInput(seg, stdin)
	switch seg.name {
	case "cd", "pushd", "chdir":
		var target arg
		if ops := operands(args, true); len(ops) > 0 {
			target = ops[0]
		}
		old := w.cwd
		defer func() { w.setOldPWD(old) }()
		switch {
		case target.dyn || target.glob || target.e == "-":
			w.cwd = "?"
		case target.e == "":
			w.cwd = "~"
		case strings.HasPrefix(target.e, "/") || strings.HasPrefix(target.e, "~"):
			w.cwd = path.Clean(target.e)
		case w.cwd == "?":
		default:
			if w.cwd = path.Join(w.cwd, target.e); w.cwd == "." {
				w.cwd = ""
			}
		}
	case "popd":
		w.cwd = "?"
	case "export", "declare", "typeset", "local", "readonly":
		nameref := slices.ContainsFunc(args[1:], func(a arg) bool {
			return len(a.e) > 1 && a.e[0] == '-' && strings.IndexByte(a.e, 'n') > 0
		})
		for _, a := range args[1:] {
			name, val, hasEq := strings.Cut(a.e, "=")
			name = strings.TrimSuffix(name, "+")
			if !shellsyntax.IsName(name) {
				continue // an option (-x, +x) or no name
			}
			seg.assigns = append(seg.assigns, assign{name: name, value: val})
			if nameref {
				// A reference to another variable: its value is that one's.
				w.setVar(name, nil, originOther)
				continue
			}
			if !hasEq {
				continue
			}
			_, raw, _ := strings.Cut(a.p, "=")
			w.runEnv(name, raw, sc)
			switch {
			case a.dyn:
				w.setVar(name, nil, a.origins)
			case strings.HasPrefix(raw, "("):
				w.setArray(name, nil, false, 0)
			default:
				w.setVar(name, []string{raw}, 0)
			}
		}
	case "set":
		for k, a := range args[1:] {
			if a.e == "--" || (k == 0 && !strings.HasPrefix(a.e, "-") && !strings.HasPrefix(a.e, "+")) {
				if a.e == "--" {
					k++
				}
				sc.pos, sc.posKnown = args[1+k:], true
				break
			}
			if a.e == "-o" || a.e == "+o" {
				break
			}
		}
	case "read":
		var names []string
		for k := 1; k < len(args); k++ {
			a := args[k].e
			if strings.HasPrefix(a, "-") {
				if strings.ContainsAny(a[len(a)-1:], "adinNptu") {
					k++
				}
				continue
			}
			names = append(names, a)
		}
		if stdin.known() {
			line, _, _ := strings.Cut(stdin.texts[0], "\n")
			fields := strings.Fields(line)
			for k, n := range names {
				v := ""
				if k < len(fields) {
					v = fields[k]
					if k == len(names)-1 {
						v = strings.Join(fields[k:], " ")
					}
				}
				w.setVar(n, []string{v}, 0)
			}
		} else {
			for _, n := range names {
				w.setVar(n, nil, originsOf(stdin))
			}
		}
	case "printf":
		if len(args) > 2 && args[1].e == "-v" {
			w.setVar(args[2].e, printfData(args[3:]).texts, 0) // always known
		}
	case "mapfile", "readarray":
		name := "MAPFILE"
		if n := len(args); n > 1 && shellsyntax.IsName(args[n-1].e) {
			name = args[n-1].e
		}
		w.setArray(name, nil, false, originsOf(stdin))
	case "alias":
		for _, a := range args[1:] {
			if name, val, ok := strings.Cut(a.p, "="); ok {
				put(&w.aliases, strings.ToLower(name), val)
			}
		}
	case "hash":
		for k := 1; k+2 < len(args); k++ {
			if args[k].e == "-p" {
				w.linkCommand(args[k+1].e, args[k+2].e, true)
			}
		}
	case "ln", "cp", "install", "mv", "rsync":
		if ops := operands(args, false); len(ops) >= 2 {
			src, dst := ops[0], ops[len(ops)-1]
			w.linkCommand(src.e, dst.e, false)
			if d := w.files[w.fileKey(src.e)]; d != nil {
				w.setFile(w.fileKey(dst.e), d)
			}
		}
	case "tee", "dd":
		d := cmp.Or(stdin, &data{origins: originOther})
		for _, a := range args[1:] {
			switch {
			case seg.name == "tee" && !strings.HasPrefix(a.e, "-"):
				w.setFile(w.fileKey(a.e), d)
			case seg.name == "dd" && strings.HasPrefix(a.e, "of=") && !strings.HasPrefix(a.e, "of=/dev/"):
				w.setFile(w.fileKey(a.e[3:]), d)
			}
		}
	}
	if fetchers[seg.name] {
		w.trackDownload(seg, args)
	}
	w.trackUnpack(seg, args)
	switch seg.name {
	case "printf", "read", "declare", "typeset", "local", "export", "readonly", "unset", "let", "test", "[", "mapfile", "readarray", "getopts", "wait":
		// Names with subscripts are evaluated: a[$(cmd)] runs cmd.
		for _, a := range args[1:] {
			if mayRunCode(a.p) {
				w.walkScriptLenient(a.p, &scope{depth: sc.depth + 1})
			}
		}
	}
	w.optionPayloads(seg, args, sc, stdin)
	w.gitSettings(seg, args) // gitsettings.go
}

// optionPayloads checks shell text that commands take in options or
// input and run later: git -c core.pager=..., ssh -o ProxyCommand=...,
// rsync -e, tar --to-command, zip -TT, man -P, gdb -ex
// 'shell ...', sed's e command, tmux, at and crontab input, parallel.
func (w *walker) optionPayloads(seg *segment, args []arg, sc *scope, stdin *data) {
	scope := &scope{depth: sc.depth + 1}
	run := func(text string) {
		if strings.TrimSpace(text) != "" {
			w.walkScriptLenient(text, scope)
		}
	}
	switch seg.name {
	case "git":
		// setting runs a configuration value that is a command: the value
		// of a key that names one, or "!shell" text where bang allows it
		// (any git -c key, an alias stored by git config).
		setting := func(key, val string, bang bool) {
			switch {
			case bang && strings.HasPrefix(val, "!"):
				run(val[1:])
			case shellsyntax.GitKeyCommand(key):
				run(val)
			}
		}
		for _, v := range optionValues(args, "-c", "--config") {
			key, val, _ := strings.Cut(v, "=")
			setting(key, val, true)
		}
		// git config [--global] KEY VALUE stores an alias or a command
		// that a later git command runs: judged now.
		if ops := operands(args, false); len(ops) >= 3 && ops[0].e == "config" {
			setting(ops[1].e, ops[2].p, strings.HasPrefix(strings.ToLower(ops[1].e), "alias."))
		}
	case "ssh", "scp", "sftp", "autossh":
		for _, v := range optionValues(args, "-o", "") {
			key, val, found := strings.Cut(v, "=")
			if !found {
				key, val, _ = strings.Cut(strings.TrimSpace(v), " ")
			}
			switch strings.ToLower(strings.TrimSpace(key)) {
			case "proxycommand", "localcommand", "knownhostscommand", "remotecommand", "match":
				run(strings.TrimPrefix(strings.TrimSpace(val), "exec "))
			}
		}
		if seg.name == "scp" || seg.name == "sftp" {
			// -S PROGRAM is run in place of ssh.
			for _, v := range optionValues(args, "-S", "") {
				run(v)
			}
		}
	case "tar", "gtar", "bsdtar", "rsync", "zip", "man", "gdb":
		// The values of the grammar's code options (policy/shellsyntax):
		// tar's --checkpoint-action runs exec=CMD, gdb's commands run
		// shell CMD and !CMD.
		for _, o := range shellsyntax.Read(seg).Opts {
			v, ok := optArg(args, o)
			text := strings.TrimSpace(v.p)
			switch {
			case !ok || o.Kind != shellsyntax.OptCode:
			case seg.name == "gdb":
				if rest, ok := strings.CutPrefix(text, "shell "); ok {
					run(rest)
				} else if rest, ok := strings.CutPrefix(text, "!"); ok {
					run(rest)
				}
			case o.Name == "checkpoint-action":
				if rest, ok := strings.CutPrefix(text, "exec="); ok {
					run(rest)
				}
			default:
				run(v.p)
			}
		}
	case "sed", "gsed":
		for _, a := range args[1:] {
			for _, m := range sedExec.FindAllStringSubmatch(a.p, 8) {
				run(m[1])
			}
			if sedSubstExec.MatchString(a.p) {
				w.detected("shell_input", originDecode|originsOf(stdin), seg.text)
			}
		}
	case "tmux":
		for i := 1; i < len(args); i++ {
			switch args[i].e {
			case "new-session", "new", "new-window", "neww", "split-window", "splitw", "respawn-pane", "respawnp", "respawn-window", "respawnw", "run-shell", "run", "display-popup", "popup", "send-keys", "send", "if-shell", "if":
				var ops []string
				for j := i + 1; j < len(args); j++ {
					a := args[j].e
					enter := a == "Enter" || a == "C-m" || a == "KPEnter"
					switch {
					case enter:
					case len(ops) > 0 || !strings.HasPrefix(a, "-"):
						ops = append(ops, args[j].p) // the command's words, its options included
					case len(a) == 2 && strings.IndexByte("cFnNsStxywhe", a[1]) >= 0:
						j++ // an option's value
					}
				}
				run(strings.Join(ops, " "))
				return
			}
		}
	case "perf":
		// perf stat|record|trace ... CMD ARGS runs CMD.
		k := 1
		for k < len(args) && strings.HasPrefix(args[k].e, "-") {
			k++
		}
		if k >= len(args) || !perfRuns[args[k].e] {
			break
		}
		for k++; k < len(args) && strings.HasPrefix(args[k].e, "-"); k++ {
			a := args[k].e
			if a == "--" {
				k++
				break
			}
			if (len(a) == 2 && strings.IndexByte("eoptCGFcIrmuxDLj", a[1]) >= 0) || perfValueLong[a] {
				k++
			}
		}
		run(joinQuoted(args[min(k, len(args)):])) // a value option may end the words
	case "coreutils":
		// coreutils --coreutils-prog=NAME ARGS is the NAME program.
		if len(args) > 1 {
			if prog, ok := strings.CutPrefix(args[1].e, "--coreutils-prog="); ok {
				run(quote(prog) + " " + joinQuoted(args[2:]))
			}
		}
	case "at", "batch":
		if stdin.known() {
			for _, t := range stdin.texts {
				run(t)
			}
		} else if stdin != nil && stdin.origins&(originFetch|originSocket|originDecode) != 0 {
			w.detected("shell_input", stdin.origins, seg.text)
		}
	case "crontab":
		var data *data
		if ops := operands(args, true); len(ops) > 0 {
			data = w.fileData(ops[len(ops)-1], stdin)
		}
		if data == nil && len(args) == 1 {
			data = stdin
		}
		if data != nil {
			// Known lines among unknown ones ((crontab -l; echo JOB))
			// are jobs too.
			for _, t := range append(data.texts, data.partial...) {
				for _, line := range strings.Split(t, "\n") {
					run(cronCommand(line))
				}
			}
		}
	case "parallel":
		var tmpl, vals []string
		sep, inCmd := false, false
		for _, a := range args[1:] {
			switch {
			case a.e == ":::" || a.e == "::::":
				sep = true
			case sep:
				vals = append(vals, a.p)
			case inCmd || !strings.HasPrefix(a.e, "-"):
				inCmd = true
				tmpl = append(tmpl, a.p)
			}
		}
		t := strings.Join(tmpl, " ")
		if len(vals) == 0 {
			run(t)
		}
		for _, v := range vals[:min(len(vals), 8)] {
			switch {
			case t == "":
				run(v) // parallel ::: CMD...: each value is a command line
			case strings.Contains(t, "{}"):
				run(strings.ReplaceAll(t, "{}", quote(v)))
			default:
				run(t + " " + quote(v))
			}
		}
	}
}

// optionValues are the values of option short (-c) or long (--config, if
// any) wherever it stands: -c VALUE, -cVALUE, --config VALUE and
// --config=VALUE, as written.
func optionValues(args []arg, short, long string) []string {
	var vals []string
	for i := 1; i < len(args); i++ {
		a := args[i].e
		switch {
		case (a == short || long != "" && a == long) && i+1 < len(args):
			i++
			vals = append(vals, args[i].p)
		case len(a) > 2 && strings.HasPrefix(a, short):
			vals = append(vals, args[i].p[2:])
		case long != "" && strings.HasPrefix(a, long+"="):
			vals = append(vals, args[i].p[len(long)+1:])
		}
	}
	return vals
}

// operands are the words after the program that are not options; a lone
// "-" (standard input) is one when dash is set.
func operands(args []arg, dash bool) []arg {
	var ops []arg
	for _, a := range args[1:] {
		if !strings.HasPrefix(a.e, "-") || dash && a.e == "-" {
			ops = append(ops, a)
		}
	}
	return ops
}

// perfRuns are the perf subcommands that run a command; perfValueLong
// their long options that take the next word.
var (
	perfRuns      = map[string]bool{"stat": true, "record": true, "trace": true, "sched": true, "mem": true, "c2c": true, "lock": true, "kvm": true, "kmem": true, "ftrace": true, "timechart": true}
	perfValueLong = map[string]bool{"--event": true, "--output": true, "--pid": true, "--tid": true, "--cpu": true, "--cgroup": true, "--freq": true, "--count": true, "--repeat": true, "--mmap-pages": true, "--uid": true, "--call-graph": true, "--delay": true}
)

// joinQuoted joins raw words into a command line, each quoted as needed.
func joinQuoted(args []arg) string {
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = quote(a.p)
	}
	return strings.Join(parts, " ")
}

// vimInterp reads an editor command that runs code in an embedded
// interpreter (:lua, :luado, :py3, :python3, :pyx, :perl, :ruby).
func vimInterp(v string) (lang, code string, ok bool) {
	name, code, found := strings.Cut(v, " ")
	lang, ok = vimLangs[name]
	return lang, code, ok && found
}

var vimLangs = map[string]string{
	"lua": "lua", "luado": "lua", "perl": "perl", "perldo": "perl", "ruby": "ruby", "rubydo": "ruby",
	"py": "python", "py3": "python", "python": "python", "python3": "python",
	"pyx": "python", "pythonx": "python", "pydo": "python", "py3do": "python",
}

// sedExec finds GNU sed's e command; sedSubstExec its s///e flag.
var (
	sedExec      = regexp.MustCompile(`(?m)(?:^|[;{}\n])\s*(?:\d+|\$|/[^/]*/)?\s*e\s+([^;\n}]+)`)
	sedSubstExec = regexp.MustCompile(`(^|[;{\n])\s*(\d+|\$|/[^/]*/)?\s*s/([^/\\]|\\.)*/([^/\\]|\\.)*/[gpiImM0-9w]*e`)
)

// cronCommand returns the command part of a crontab line.
func cronCommand(line string) string {
	fields := strings.Fields(line)
	if len(fields) == 0 || fields[0][0] == '#' || isAssignText(fields[0]) {
		return ""
	}
	n := 5
	if fields[0][0] == '@' {
		n = 1
	}
	if len(fields) <= n {
		return ""
	}
	return strings.Join(fields[n:], " ")
}

// linkCommand remembers that dst (a copy, link or hash entry) runs the
// command src names.
func (w *walker) linkCommand(src, dst string, hashEntry bool) {
	base := baseName(src)
	if base == "" || base == "." || base == ".." {
		return
	}
	// A copy of a program in a bin directory runs it; a copy of a local
	// file is no command.
	switch {
	case hashEntry:
		put(&w.pathCmds, strings.ToLower(dst), base)
	case strings.Contains(src, "/bin/") || strings.HasPrefix(src, "/bin") || strings.Contains(src, "/sbin"):
		put(&w.pathCmds, w.fileKey(dst), base)
		w.pathCmds[baseName(dst)] = base
	}
}

// trackDownload remembers files a download command writes.
func (w *walker) trackDownload(seg *segment, args []arg) {
	fetched := func() *data { return &data{origins: originFetch} }
	var url string
	for k := 1; k < len(args); k++ {
		a := args[k].e
		if url == "" && strings.Contains(a, "://") {
			url = a
		}
		switch {
		case a == "-o" || a == "--output" || a == "-O" && seg.name == "wget" || a == "--output-document":
			if k+1 < len(args) {
				w.setFile(w.fileKey(args[k+1].e), fetched())
				k++
			}
		case strings.HasPrefix(a, "--output=") || strings.HasPrefix(a, "--output-document="):
			_, v, _ := strings.Cut(a, "=")
			w.setFile(w.fileKey(v), fetched())
		case len(a) > 2 && a[0] == '-' && a[1] != '-':
			// A cluster: -sSLo FILE, -qO FILE, -oFILE.
			if v, next, ok := outputInCluster(seg.name, a); ok {
				if next && k+1 < len(args) {
					v = args[k+1].e
					k++
				}
				w.setFile(w.fileKey(v), fetched())
			}
		}
	}
	// curl -O and plain wget save under the URL's last component.
	u, _, _ := strings.Cut(url, "?")
	u, _, _ = strings.Cut(u, "#")
	if base := path.Base(u); base != "" && base != "/" && base != "." && !strings.Contains(base, ":") {
		w.setFile(w.fileKey(base), fetched())
		put(&w.fetchedBase, base, true)
	}
}

// forkBombs reports functions that call themselves, directly or through
// other functions, from a pipeline or in the background. The functions are
// tried in name order, so the message names the same one on every run.
func (w *walker) forkBombs() {
	if len(w.calls) == 0 {
		return // (most checks call no function: sorting nothing allocates)
	}
	for _, f := range slices.Sorted(maps.Keys(w.calls)) {
		// Depth-first search for a path back to f with a spawning edge.
		type state struct {
			node    string
			spawned bool
		}
		seen := map[state]bool{}
		for stack := []state{{f, false}}; len(stack) > 0; {
			s := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for callee, spawned := range w.calls[s.node] {
				ns := state{callee, s.spawned || spawned}
				if callee == f && ns.spawned {
					w.detected("fork_bomb", 0, f+"() { ... "+f+" | "+f+" & ... }")
					return
				}
				if !seen[ns] {
					seen[ns] = true
					stack = append(stack, ns)
				}
			}
		}
	}
}

// wgetValueLetters are wget's short options that take a value.
const wgetValueLetters = "OoaPeiBtTwQUDIXARlY"

// outputInCluster reads a download command's short option cluster: when
// its output option (curl -o, wget -O) is in it, the file is the rest of
// the word, or the next word (next) when the letter ends the cluster. The
// first letter taking a value takes the rest, as getopt reads it.
func outputInCluster(name, a string) (file string, next, ok bool) {
	out := byte('o')
	takes := func(c byte) bool { return shellsyntax.CurlValueOpts["-"+string(c)] }
	switch name {
	case "curl", "curlie":
	case "wget", "wget2":
		if a[1] == 'n' {
			return "", false, false // -nv, -nc, -nd: wget's two-letter flags
		}
		out = 'O'
		takes = func(c byte) bool { return strings.IndexByte(wgetValueLetters, c) >= 0 }
	default:
		return "", false, false
	}
	for k := 1; k < len(a); k++ {
		if !takes(a[k]) {
			continue
		}
		if a[k] != out {
			return "", false, false
		}
		return a[k+1:], k+1 == len(a), true
	}
	return "", false, false
}

// unpackers are archive tools and, for each, the option naming the
// directory they unpack into.
var unpackers = map[string]string{"tar": "-C", "gtar": "-C", "bsdtar": "-C", "unzip": "-d", "7z": "-o", "7za": "-o"}

// trackUnpack remembers the directory a downloaded archive is unpacked
// into: what runs from below it was downloaded too (curl -o t.tgz URL &&
// tar xzf t.tgz && ./t/install.sh).
func (w *walker) trackUnpack(seg *segment, args []arg) {
	dirOpt, ok := unpackers[seg.name]
	if !ok || len(w.files) == 0 {
		return
	}
	dir, fetched := ".", false
	for k := 1; k < len(args); k++ {
		a := args[k].e
		switch {
		case a == dirOpt || a == "--directory":
			if k+1 < len(args) {
				dir = args[k+1].e
				k++
			}
		case strings.HasPrefix(a, dirOpt) && len(a) > len(dirOpt) && seg.name != "tar" && seg.name != "gtar" && seg.name != "bsdtar":
			dir = a[len(dirOpt):] // 7z -oDIR
		case strings.HasPrefix(a, "--directory="):
			dir = strings.TrimPrefix(a, "--directory=")
		default:
			// The archive: an operand, or the value of tar's -f (attached
			// to a cluster: xzf FILE reads FILE as an operand here).
			if d := w.files[w.fileKey(a)]; d != nil && d.origins&originFetch != 0 {
				fetched = true
			}
		}
	}
	if fetched {
		w.setFile(w.fileKey(dir)+"/", &data{origins: originFetch})
	}
}

// unpackedFetch reports whether path p lies below a directory a downloaded
// archive was unpacked into.
func (w *walker) unpackedFetch(p string) bool {
	key := w.fileKey(p)
	for k, d := range w.files {
		if strings.HasSuffix(k, "/") && d.origins&originFetch != 0 && (strings.HasPrefix(key, k) || k == "./" && !strings.HasPrefix(key, "/") && !strings.HasPrefix(key, "~")) {
			return true
		}
	}
	return false
}

// setOldPWD sets OLDPWD, as cd does, to the directory it left (old, in
// the walker's terms): rm -rf "$OLDPWD" after cd /tmp deletes the tool's
// directory. That directory has no absolute name here; from elsewhere it
// is named as the workspace root it is (or lies in) for a tool with files.
func (w *walker) setOldPWD(old string) {
	switch {
	case old == "?" || w.cwd == "?":
		w.setVar("OLDPWD", nil, originOther)
	case old != "":
		w.setVar("OLDPWD", []string{old}, 0)
	case w.cwd == "":
		w.setVar("OLDPWD", []string{"."}, 0)
	case !strings.HasPrefix(w.cwd, "/") && !strings.HasPrefix(w.cwd, "~") && !strings.Contains(w.cwd, ".."):
		w.setVar("OLDPWD", []string{strings.TrimSuffix(strings.Repeat("../", strings.Count(w.cwd, "/")+1), "/")}, 0)
	default:
		w.setVar("OLDPWD", []string{"/workspace"}, 0)
	}
}
