package shellguard

import (
	"path"
	"slices"
	"strings"

	"github.com/toolcage/toolcage/policy/shellsyntax"
)

// This file follows commands that run other commands: wrappers (env, sudo,
// nice, timeout, busybox...), shells (-c text, script files, standard
// input), eval, source, trap, su, xargs and find -exec. runCommand is the
// entry point for every command the walk meets.

// Command families the data-flow checks care about.
var (
	fetchers = shellsyntax.WordSet(`
		curl wget fetch aria2c axel lwp-request lwp-download get http https xh xhs httpie lynx links
		w3m elinks ftp tftp wget2 curlie scp sftp rsync git svn`)
	sockets = shellsyntax.WordSet(`
		nc ncat netcat nc.openbsd nc.traditional telnet socat cryptcat sbd pwncat gnutls-cli openssl`)
	// Decoders and text generators: what they feed a shell is not what the
	// command line shows.
	decoders = shellsyntax.WordSet(`
		base64 base32 basenc base58 xxd uudecode openssl gzip gunzip zcat bzip2 bunzip2 bzcat xz
		unxz xzcat lzma unlzma zstd unzstd zstdcat brotli lz4 lz4cat rev tr od sed awk gawk mawk
		nawk perl python python2 python3 ruby node php iconv recode printf jq yq cut fold tac gpg
		age uncompress unzip 7z bsdtar tar hexdump dd xargs lua tclsh envsubst`)
	// Commands whose output is their input, possibly cut down.
	passThrough = shellsyntax.WordSet(`
		cat tee head tail sort uniq grep egrep fgrep less more dd pv buffer mbuffer cut fold fmt
		expand unexpand nl col colrm column paste shuf stdbuf rg`)
)

// runCommand records a command and follows what it runs in turn.
func (w *walker) runCommand(seg *segment, sc *scope, stdin *data, pc pipeCtx) stageResult {
	if !w.spend(1) {
		return stageResult{}
	}
	seg.finish()
	sendsLiteralStdin(seg, stdin)
	seg.cwd = w.cwd
	w.addSeg(seg)
	if w.defWalk == 0 && slices.ContainsFunc(seg.args, func(a arg) bool { return a.susp }) {
		w.finding("obfuscated_expansion", "string operations on an unknown variable build text the command does not show", seg.text)
	}
	if len(seg.args) > 0 && w.defWalk == 0 {
		a0 := seg.args[0]
		switch {
		case a0.dynBase:
			w.finding("dynamic_command", "the command name is only known when the command runs", firstP(seg.args))
		case a0.glob && hasGlob(baseName(a0.e)):
			w.finding("dynamic_command", "the command name is a pathname pattern", firstP(seg.args))
		}
	}
	if seg.name == "" {
		return stageResult{out: &data{texts: []string{""}}}
	}
	name, args := seg.name, nonDropped(seg.args)
	if !w.sawCommand(name) {
		w.seen = append(w.seen, name)
	}
	if w.curFunc != "" {
		if _, isFunc := w.funcs[name]; isFunc || name == w.curFunc {
			if w.calls[w.curFunc] == nil {
				put(&w.calls, w.curFunc, map[string]bool{})
			}
			w.calls[w.curFunc][name] = w.calls[w.curFunc][name] || pc.piped || pc.bg
		}
	}
	// A copy or link of a command made earlier runs that command.
	for _, key := range [...]string{w.fileKey(seg.argv[0]), name} {
		if target, ok := w.pathCmds[key]; ok && target != name {
			w.runCommand(seg.derive(append([]arg{{e: target, p: target}}, args[1:]...), nil), sc, stdin, pc)
			break
		}
	}
	if fn, ok := w.funcs[name]; ok {
		inner := &scope{pos: args[1:], posKnown: true, pos0: sc.pos0, depth: sc.depth + 1}
		return w.callFunction(name, fn, inner, stdin, pc)
	}
	if val, ok := w.aliases[name]; ok {
		text := val
		for _, a := range args[1:] {
			text += " " + quote(a.p)
		}
		delete(w.aliases, name) // an alias does not expand inside itself
		w.runShellData(&data{texts: []string{text}}, sc.deeper(), seg)
		w.aliases[name] = val
		return stageResult{out: &data{origins: originOther}}
	}
	// A file this script wrote, run by path.
	if strings.Contains(seg.argv[0], "/") {
		if d := w.fileData(arg{e: seg.argv[0]}, nil); d != nil {
			w.runShellData(d, w.childScope(args, sc), seg)
		}
	} else if d := w.onPath(name); d != nil {
		w.runShellData(d, w.childScope(args, sc), seg)
	}
	w.track(seg, sc, stdin)
	w.runEscapes(seg, sc, stdin)
	w.resolveTargets(seg, sc, pc)
	w.outputToNetwork(seg)
	switch name {
	case "parallel":
		// parallel CMD with a listing on stdin runs CMD over it.
		if stdin != nil && stdin.list != nil && !slices.ContainsFunc(args, func(a arg) bool { return a.e == ":::" || a.e == "::::" }) && len(args) > 1 {
			w.runCommand(seg.derive(listedCommand(args[1:], stdin.list), nil), sc, nil, pc)
		}
	case "git":
		w.gitClean(seg, sc, pc)
	case "ln":
		w.trackLink(args)
	}
	g := shellsyntax.GrammarOf(name)
	if g != nil && g.Subs != nil {
		g = shellsyntax.Read(seg).G // the verb's: docker exec runs a command
	}
	role := shellsyntax.RolePlain
	if g != nil && (g.Role != shellsyntax.RoleInterp || g.Lang != "") {
		role = g.Role
	}
	var res stageResult
	switch role {
	case shellsyntax.RoleWrapper:
		return w.runWrapper(seg, sc, stdin, pc)
	case shellsyntax.RoleShell, shellsyntax.RoleInterp:
		if role == shellsyntax.RoleShell {
			w.runShell(seg, sc, stdin)
		} else {
			w.runInterp(seg, g.Lang, sc, stdin)
		}
		res.kinds = ksShell
		res.out = &data{origins: originDecode | originsOf(stdin), shell: true}
		if role == shellsyntax.RoleInterp && stdin != nil && stdin.list != nil && listFilters[name] {
			res.out.list = stdin.list // awk '{print $2}' of a listing
		}
		return res
	case shellsyntax.RoleEval:
		r := shellsyntax.Read(seg)
		if r.Code >= 0 { // trap CODE SIGNAL...
			w.runShellData(argData(args[r.Code]), sc.deeper(), seg)
		}
		if r.Line < 0 {
			break
		}
		// eval $(curl ...): an unquoted substitution disappears from the
		// words but not from what eval runs.
		var subOrigins originSet
		for _, a := range seg.args[1:] {
			if a.drop {
				subOrigins |= a.origins
			}
		}
		if subOrigins&(originFetch|originSocket|originDecode) != 0 {
			w.detected("shell_input", subOrigins, seg.text)
		}
		if !shellInitOnly(args[r.Line:]) {
			w.runShellData(joinData(args[r.Line:], " "), sc.deeper(), seg)
		}
		return stageResult{out: &data{origins: originOther}}
	case shellsyntax.RoleSource:
		if r := shellsyntax.Read(seg); r.Script >= 0 {
			scope := sc.deeper()
			if r.Args < len(args) {
				scope.pos, scope.posKnown = args[r.Args:], true
			}
			w.runShellData(w.fileData(args[r.Script], stdin), scope, seg)
		}
		return stageResult{out: &data{origins: originOther}}
	case shellsyntax.RoleXargs:
		return w.runXargs(seg, sc, stdin, pc)
	case shellsyntax.RoleFind:
		w.runFind(seg, sc, pc)
	case shellsyntax.RoleSu:
		w.runSu(seg, sc, stdin)
		res.kinds = ksShell
	}
	if sockets[name] && (name != "openssl" || opensslNet(args)) {
		res.kinds |= ksSocket
	}
	res.out = w.outputOf(seg, stdin)
	if res.out != nil && !res.out.known() {
		if l := listingOf(name, args); l != nil {
			res.out = &data{origins: res.out.origins, list: l}
		} else if stdin != nil && stdin.list != nil && listFilters[name] {
			res.out = &data{origins: res.out.origins, list: stdin.list}
		}
	}
	return res
}

// opensslNet reports whether openssl talks to the network (s_client,
// s_server) rather than transforms data.
func opensslNet(args []arg) bool {
	return slices.ContainsFunc(args[1:], func(a arg) bool {
		return a.e == "s_client" || a.e == "s_server" || a.e == "s_time"
	})
}

// firstP is the arguments as written, joined with spaces.
func firstP(args []arg) string { return joinData(args, " ").texts[0] }

// nonDropped is args less those that disappear in the empty view (args
// itself when none does).
func nonDropped(args []arg) []arg {
	dropped := func(a arg) bool { return a.drop }
	if !slices.ContainsFunc(args, dropped) {
		return args
	}
	return slices.DeleteFunc(slices.Clone(args), dropped)
}

func originsOf(d *data) originSet {
	if d == nil {
		return 0
	}
	return d.origins
}

// quote single-quotes s for re-parsing.
func quote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%") == "" {
		return s
	}
	return shellsyntax.Quote(s)
}

// argData is an argument taken as shell text or code.
func argData(a arg) *data {
	return &data{texts: []string{a.p}, origins: a.origins}
}

// joinData is arguments joined with sep: spaces, as eval and ssh do, or
// newlines, as perl does its -e options.
func joinData(args []arg, sep string) *data {
	var parts []string
	var origins originSet
	for _, a := range args {
		parts = append(parts, a.p)
		origins |= a.origins
	}
	return &data{texts: []string{strings.Join(parts, sep)}, origins: origins}
}

// fileData is what reading a file argument gives: a process substitution,
// standard input, or a file written earlier in the script.
func (w *walker) fileData(a arg, stdin *data) *data {
	if a.data == nil {
		switch a.e {
		case "-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0":
			return stdin
		}
		for _, dir := range []string{"/dev/fd/", "/proc/self/fd/"} {
			if fd, ok := strings.CutPrefix(a.e, dir); ok && w.fds[fd] != nil {
				return w.fds[fd]
			}
		}
	}
	if d := w.readPath(a); d != nil {
		return d
	}
	if w.fetchedBase[path.Base(a.e)] || len(w.files) > 0 && w.unpackedFetch(a.e) {
		// Saved by a download under a directory option (wget -P,
		// curl --output-dir).
		return &data{origins: originFetch}
	}
	return nil
}

func (w *walker) childScope(args []arg, sc *scope) *scope {
	s := &scope{depth: sc.depth + 1, posKnown: true}
	if len(args) > 0 {
		s.pos0 = args[0]
		s.pos = args[1:]
	}
	return s
}

// runShellData analyses text a shell runs.
func (w *walker) runShellData(d *data, sc *scope, seg *segment) {
	if d == nil || w.err != nil {
		return
	}
	if sc.depth > maxDepth {
		w.tooDeep()
		return
	}
	w.runData(d, seg, func(t string) { w.walkScript(t, sc, nil) })
}

// runData analyses each text a shell or an interpreter runs with read.
// Text that came from a download, a socket or a decoder is reported as
// such even when it could be read: downloaded or socket-fed text whatever
// it holds, decoded text after it is read, so that what it does is named.
func (w *walker) runData(d *data, seg *segment, read func(text string)) {
	if d.origins&(originFetch|originSocket) != 0 {
		w.detected("shell_input", d.origins, seg.text)
	}
	for _, t := range d.texts[:min(len(d.texts), 4)] {
		read(t)
	}
	if d.origins&(originFetch|originSocket) == 0 && d.origins&originDecode != 0 {
		w.detected("shell_input", d.origins, seg.text)
	}
}

// runWrapper follows a wrapper to the command it runs.
func (w *walker) runWrapper(seg *segment, sc *scope, stdin *data, pc pipeCtx) stageResult {
	lists := [][]arg{nonDropped(seg.args)}
	if len(lists[0]) != len(seg.args) {
		lists = append(lists, seg.args)
	}
	remote := false
	if g := shellsyntax.GrammarOf(seg.name); g != nil && g.Subs != nil {
		remote = true
	}
	var res stageResult
	for li, args := range lists {
		if remote {
			args = namedObjects(args)
		}
		u := unwrap(args)
		if li == 0 && (len(u.inner) > 0 || u.payload != nil) {
			seg.unwrapped = true
		}
		if u.payload != nil {
			w.runShellData(u.payload, &scope{depth: sc.depth + 1, pos0: arg{e: "sh", p: "sh"}}, seg)
			res.kinds |= ksShell
		}
		for _, as := range u.assigns {
			w.runEnv(as.name, as.value, sc)
		}
		if len(u.inner) == 0 {
			if len(u.assigns) > 0 {
				w.addSeg(w.assignSeg(slices.Concat(seg.assigns, u.assigns), seg.redirs))
			}
			if li == 0 {
				res.out = w.outputOf(seg, stdin)
			}
			continue
		}
		r := w.runCommand(seg.derive(u.inner, u.assigns), sc, stdin, pc)
		res.kinds |= r.kinds
		if li == 0 {
			res.out = r.out
		}
	}
	if res.out == nil {
		res.out = &data{origins: originsOf(stdin) | originOther}
	}
	return res
}

type unwrapped struct {
	inner   []arg
	assigns []assign
	payload *data
}

// unwrap returns what a wrapper runs, as the reader finds it.
func unwrap(args []arg) unwrapped {
	var u unwrapped
	r := shellsyntax.Read(argWords(args))
	var prefix []arg // words env -S splits off, or the program to run
	for _, o := range r.Opts {
		switch o.Kind {
		case shellsyntax.OptProg:
			// docker run --entrypoint PROGRAM IMAGE ARGS...: PROGRAM runs
			// with ARGS.
			if v, ok := optArg(args, o); ok {
				prefix = append(prefix, v)
			}
		case shellsyntax.OptAssign:
			name, val, _ := strings.Cut(args[o.Word].e, "=")
			u.assigns = append(u.assigns, assign{name: name, value: val})
		case shellsyntax.OptCode:
			// script -c TEXT, flock FILE -c TEXT: nothing else runs.
			if v, ok := optArg(args, o); ok {
				u.payload = argData(v)
			}
			return u
		case shellsyntax.OptSplit:
			// The value attached, as matched; the next word, as written.
			v, _ := optArg(args, o)
			if o.ValueWord >= 0 {
				v.e = v.p
			}
			prefix = append(prefix, literalArgs(strings.Fields(v.e))...)
		}
	}
	switch {
	case r.NoExec:
	case r.Line >= 0:
		u.payload = joinData(append(prefix, args[r.Line:]...), " ")
	case r.Cmd >= 0:
		u.inner = append(prefix, args[r.Cmd:]...)
	default:
		u.inner = prefix
	}
	return u
}

// argWords are a command's arguments as the reader sees them; so is a
// segment's argv (its arguments less the dropped ones).
type argWords []arg

func (a argWords) Len() int                  { return len(a) }
func (a argWords) Text(i int) (string, bool) { return a[i].e, true }
func (a argWords) IsAssign(i int) bool       { return isAssignText(a[i].e) }

func (s *segment) Len() int                  { return len(s.argv) }
func (s *segment) Text(i int) (string, bool) { return s.argv[i], true }
func (s *segment) IsAssign(i int) bool       { return isAssignText(s.argv[i]) }

// optArg is an option's value: attached to it (after "=" or its letter)
// or the next word; false when the line ends first.
func optArg(args []arg, o shellsyntax.Opt) (arg, bool) {
	a := args[o.Word]
	switch {
	case o.Attached && o.Long:
		_, p, _ := strings.Cut(a.p, "=")
		return arg{e: o.Value, p: p, origins: a.origins, data: a.data}, true
	case o.Attached:
		return arg{e: o.Value, p: a.p[strings.IndexByte(a.p, o.Name[0])+1:], origins: a.origins, data: a.data}, true
	case o.ValueWord >= 0:
		return args[o.ValueWord], true
	}
	return arg{}, false
}

func isAssignText(s string) bool {
	eq := strings.IndexByte(s, '=')
	return eq > 0 && shellsyntax.IsName(s[:eq])
}

// runShell follows sh/bash/...: -c text, a script file or standard input.
func (w *walker) runShell(seg *segment, sc *scope, stdin *data) {
	args := nonDropped(seg.args)
	r := shellsyntax.Read(seg)
	// X=.. sh -c 'rm -rf "$X"', env X=.. sh -c ...: the shell reads the
	// variables it was given (kept after it too, as a value X may hold).
	for _, a := range seg.assigns {
		if shellsyntax.IsName(a.name) {
			w.setVar(a.name, []string{a.value}, 0)
		}
	}
	for _, o := range r.Opts {
		switch {
		case o.Kind == shellsyntax.OptValue && o.Long && o.ValueWord >= 0:
			// --rcfile FILE, --init-file FILE
			w.runShellData(w.fileData(args[o.ValueWord], stdin), &scope{depth: sc.depth + 1}, seg)
		case o.Kind == shellsyntax.OptCode:
			// fish --command=TEXT
			if v, ok := optArg(args, o); ok {
				w.runShellData(argData(v), &scope{depth: sc.depth + 1}, seg)
			}
		}
	}
	switch {
	case r.Code >= 0:
		scope := w.childScope(args[r.Args:], sc) // sh -c TEXT NAME ARGS...: $0 is NAME
		if r.Args == len(args) {
			scope.pos0 = args[0]
		}
		seg.unwrapped = !args[r.Code].dyn
		w.runShellData(argData(args[r.Code]), scope, seg)
	case r.Stdin:
		w.runShellData(stdin, &scope{depth: sc.depth + 1, posKnown: true, pos: args[r.Args:], pos0: args[0]}, seg)
	case r.Script >= 0:
		w.runShellData(w.fileData(args[r.Script], stdin), w.childScope(args[r.Script:], sc), seg)
	}
}

// runSu follows su -c TEXT, runuser -u USER COMMAND and sg GROUP TEXT.
func (w *walker) runSu(seg *segment, sc *scope, stdin *data) {
	args := nonDropped(seg.args)
	r := shellsyntax.Read(seg)
	for _, o := range r.Opts {
		if v, ok := optArg(args, o); ok && o.Kind == shellsyntax.OptCode {
			w.runShellData(argData(v), &scope{depth: sc.depth + 1}, seg)
			return
		}
	}
	switch {
	case r.Cmd >= 0:
		w.runCommand(seg.derive(args[r.Cmd:], nil), sc, stdin, pipeCtx{})
	case r.Line >= 0:
		w.runShellData(joinData(args[r.Line:], " "), &scope{depth: sc.depth + 1}, seg)
	}
}

// runXargs follows xargs to its command, with the items it reads from a
// known input appended (or substituted for -I's replacement string).
func (w *walker) runXargs(seg *segment, sc *scope, stdin *data, pc pipeCtx) stageResult {
	args := nonDropped(seg.args)
	r := shellsyntax.Read(seg)
	replace, nul, delim := r.Replace, false, ""
	for _, o := range r.Opts {
		switch o.Name {
		case "0", "null":
			nul = true
		case "d", "delimiter":
			v, _ := optArg(args, o)
			delim = v.e
		case "a", "arg-file":
			// Items from a file: its contents, not standard input.
			if v, ok := optArg(args, o); ok {
				if stdin = w.fileData(v, stdin); stdin == nil {
					stdin = &data{origins: originOther, file: true}
				}
			}
		}
	}
	inner := literalArgs([]string{"echo"})
	if r.Cmd >= 0 {
		inner = args[r.Cmd:]
	}
	var items [][]arg
	if stdin.known() {
		for _, t := range stdin.texts[:min(len(stdin.texts), 4)] {
			var words []string
			switch {
			case nul:
				words = strings.Split(strings.TrimRight(t, "\x00\n"), "\x00")
			case delim != "":
				words = strings.Split(t, echoEscapes(delim))
			default:
				// xargs reads quotes and backslashes: '"rm -rf /"' is one
				// item; with -I an item is a line.
				words = xargsItems(t, replace != "")
			}
			items = append(items, literalArgs(words[:min(len(words), 64)]))
		}
	} else if stdin != nil && stdin.list != nil {
		// A listing: judged as the command run over what it lists.
		if replace == "" {
			r := w.runCommand(seg.derive(listedCommand(inner, stdin.list), nil), sc, stdin, pc)
			return stageResult{kinds: r.kinds, out: &data{origins: originsOf(stdin) | originOther}}
		}
		for _, it := range stdin.list.items {
			items = append(items, []arg{{e: it.e, p: it.p, glob: it.glob}})
		}
	} else if stdin != nil && stdin.file {
		// A file's unknown lines are computed operands, as $(cat FILE)
		// is: rm -rf could be handed /.
		items = [][]arg{{{p: "$(cat FILE)", dyn: true, drop: true, origins: originOther}}}
	} else {
		items = [][]arg{{{p: "${XARGS_INPUT}", dyn: true, drop: true, origins: originsOf(stdin)}}}
	}
	var res stageResult
	for _, its := range items {
		if replace != "" {
			for _, it := range its[:min(len(its), 8)] {
				cmd := make([]arg, len(inner))
				for j, a := range inner {
					cmd[j] = a
					if strings.Contains(a.p, replace) {
						p := strings.ReplaceAll(a.p, replace, it.p)
						cmd[j] = arg{e: normalise(strings.ReplaceAll(a.e, replace, it.e)), p: p, dyn: it.dyn, origins: it.origins | a.origins}
					}
				}
				r := w.runCommand(seg.derive(cmd, nil), sc, stdin, pc)
				res.kinds |= r.kinds
			}
			continue
		}
		cmd := append(append([]arg{}, inner...), its...)
		r := w.runCommand(seg.derive(cmd, nil), sc, stdin, pc)
		res.kinds |= r.kinds
		if codeFromItems(inner) && len(its) > 1 {
			// xargs sh -c <<< 'rm -rf /': the first item is the code and
			// the rest its $0, $1...; judged as the line the items spell
			// too, which is what the input means and what -0, -d or -L1
			// would make it.
			w.runShellData(joinData(its, " "), sc.deeper(), seg)
		}
	}
	res.out = &data{origins: originsOf(stdin) | originOther}
	return res
}

// runFind follows find -exec/-execdir/-ok/-okdir, with {} replaced by the
// starting points.
func (w *walker) runFind(seg *segment, sc *scope, pc pipeCtx) {
	args := nonDropped(seg.args)
	// A traversal that selects every file acts on the whole tree: -delete
	// is rm -rf of each root, -exec rm {} is rm -r, whatever the root (find
	// . -delete wipes the working directory as rm -rf . does). One that
	// selects some hands {} paths below the roots, never a root itself.
	starts, narrowed, minDepth, _ := findShape(args)
	namePat := "_"
	for k := 1; k+1 < len(args); k++ {
		if args[k].e == "-name" || args[k].e == "-iname" {
			namePat = args[k+1].e
			break
		}
	}
	for k, st := range starts {
		if k >= 4 || narrowed || !slices.ContainsFunc(args, func(a arg) bool { return a.e == "-delete" }) {
			continue
		}
		root := st
		if minDepth >= 1 {
			root = entriesOf(st)
		}
		w.runCommand(seg.derive([]arg{{e: "rm", p: "rm"}, {e: "-rf", p: "-rf"}, root}, nil), sc, nil, pc)
	}
	if narrowed {
		for k, st := range starts {
			e := strings.TrimSuffix(st.e, "/") + "/" + namePat
			starts[k] = arg{e: e, p: e, glob: hasGlob(namePat)}
		}
	}
	for _, ex := range shellsyntax.Read(seg).Exec {
		cmd := args[ex[0]:ex[1]]
		for _, st := range starts[:min(len(starts), 4)] {
			inner := make([]arg, len(cmd))
			for n, a := range cmd {
				inner[n] = a
				if strings.Contains(a.p, "{}") {
					inner[n] = arg{e: normalise(strings.ReplaceAll(a.e, "{}", st.e)), p: strings.ReplaceAll(a.p, "{}", st.p), glob: st.glob}
				}
			}
			if !narrowed && deleters[baseName(inner[0].e)] {
				inner = append(inner[:1:1], append(literalArgs([]string{"-r"}), inner[1:]...)...)
			}
			w.runCommand(seg.derive(inner, nil), sc, nil, pc)
		}
	}
}

// xargsItems splits xargs' input as xargs does without -0 or -d: blanks
// and newlines separate items (newlines only, when lines), single and
// double quotes group, a backslash escapes the next character. An
// unmatched quote (which xargs refuses) ends the item there.
func xargsItems(t string, lines bool) []string {
	var items []string
	var b strings.Builder
	in := false // an item has begun (a quoted empty one counts)
	var quote byte
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			b.WriteByte(c)
		case c == '\\' && i+1 < len(t):
			i++
			b.WriteByte(t[i])
			in = true
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == '\n' || !lines && (c == ' ' || c == '\t'):
			if in || b.Len() > 0 {
				items = append(items, b.String())
			}
			b.Reset()
			in = false
		case lines && b.Len() == 0 && !in && (c == ' ' || c == '\t'):
			// -I strips leading blanks.
		default:
			b.WriteByte(c)
			in = true
		}
	}
	if in || b.Len() > 0 {
		items = append(items, b.String())
	}
	return items
}

// codeFromItems reports whether the items xargs appends to cmd become the
// code of a shell: cmd is a shell (or su) with -c and no code of its own.
func codeFromItems(cmd []arg) bool {
	if len(cmd) == 0 {
		return false
	}
	r := shellsyntax.Read(argWords(cmd))
	return r.G != nil && r.ShellFlag && r.Code < 0 && r.Line < 0 && (r.G.Role == shellsyntax.RoleShell || r.G.Role == shellsyntax.RoleSu)
}

// shellInits are programs that print shell code of their own making for a
// shell to eval (eval "$(ssh-agent -s)"), with the arguments that make them
// do so: the text is fixed by the program, not by what it reads.
var shellInits = map[string][]string{
	"ssh-agent": {"", "-s", "-c"}, "dircolors": {"", "-b"}, "brew": {"shellenv"},
	"pyenv": {"init -", "init - bash", "init - zsh", "virtualenv-init -"}, "rbenv": {"init -", "init - bash", "init - zsh"},
	"nodenv": {"init -"}, "goenv": {"init -"}, "jenv": {"init -"}, "starship": {"init bash", "init zsh"},
	"zoxide": {"init bash", "init zsh"}, "fnm": {"env", "env --use-on-cd"}, "minikube": {"docker-env"},
	"keychain": {"--eval", "--eval --quiet"},
}

// shellInitOnly reports whether eval's words are only substitutions of
// shellInits ("$(ssh-agent -s)", `brew shellenv`).
func shellInitOnly(args []arg) bool {
	for _, a := range args {
		p := strings.TrimSuffix(strings.TrimPrefix(a.p, `"`), `"`)
		inner, ok := strings.CutPrefix(p, "$(")
		if ok {
			inner, ok = strings.CutSuffix(inner, ")")
		} else if inner, ok = strings.CutPrefix(p, "`"); ok {
			inner, ok = strings.CutSuffix(inner, "`")
		}
		f := strings.Fields(inner)
		if !ok || len(f) == 0 || !slices.Contains(shellInits[path.Base(f[0])], strings.Join(f[1:], " ")) {
			return false
		}
	}
	return len(args) > 0
}

// onPath is what this script wrote into a bin directory under the name a
// command runs by (curl -o ~/.local/bin/x URL && chmod +x ... && x), when
// it is a download: PATH finds it there.
func (w *walker) onPath(name string) *data {
	if len(w.files) == 0 {
		return nil
	}
	for k, d := range w.files {
		if d.origins&originFetch != 0 && path.Base(k) == name && strings.Contains(k, "/bin/") {
			return d
		}
	}
	return nil
}

// namedObjects reads, for a verb that runs a command in a container or a
// pod (docker exec "$c" CMD), a word only known when the command runs, or
// the word standing for every object a listing named ("--all", from
// $(docker ps -q)), as the object it names: an operand, not an option.
func namedObjects(args []arg) []arg {
	var out []arg
	for i, a := range args {
		if i > 0 && (a.dyn && !strings.HasPrefix(a.p, "-") || a.e == "--all") {
			if out == nil {
				out = slices.Clone(args)
			}
			out[i].e = "_"
		}
	}
	if out == nil {
		return args
	}
	return out
}
