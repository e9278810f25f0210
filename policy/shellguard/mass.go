package shellguard

import (
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/toolcage/toolcage/policy/shellsyntax"
)

// This file judges deletions whose targets the command line does not
// spell: a listing piped to xargs, a traversal whose action deletes, git
// clean over a work tree named elsewhere, a path through a symlink this
// script made, and targets computed by command substitution. Each is
// turned into the plain command it amounts to (rm -rf ROOT...), which the
// rules then judge like any other.

// listing is what a listing command writes: the entries of roots, or every
// file below them.
type listing struct {
	items     []arg // what xargs would be handed, as patterns: ROOT or ROOT/*
	recursive bool  // every file below, not only the entries
	mass      bool  // items are the word that stands for every object: --all, -1
}

// words are the listing's items as text.
func (l *listing) words() []string {
	out := make([]string, len(l.items))
	for i, a := range l.items {
		out[i] = a.p
	}
	return out
}

// deleters are commands whose operands are removed or destroyed.
var deleters = shellsyntax.WordSet(`rm srm grm rmdir unlink shred wipe`)

// targetCommands are, with the deleters, the commands whose operands the
// rules judge as paths that are deleted, moved or re-owned: a computed or
// linked operand is resolved for them. True: an operand a command
// substitution computes could be "/" (so for every deleter but unlink).
var targetCommands = map[string]bool{"chmod": true, "chown": true, "chgrp": true, "mv": false, "gmv": false, "truncate": false}

// listFilters pass (a part of) a listing on: their output is still paths.
var listFilters = shellsyntax.WordSet(`grep egrep fgrep rg sort uniq head tail awk gawk mawk cut sed tr
	tee cat shuf tac`)

// findNarrowing are find tests that select some files, not all.
var findNarrowing = shellsyntax.WordSet(`-name -iname -path -ipath -wholename -iwholename -regex -iregex
	-lname -ilname -newer -anewer -cnewer -mtime -mmin -atime -amin -ctime -cmin -size -user -group
	-uid -gid -perm -inum -samefile -links -empty -used -nouser -nogroup -newermt -newerct -newerat`)

// matchAll are -name patterns that select every file.
var matchAll = regexp.MustCompile(`^(\*|\.\*|\*\.?\*?|\?\*|\*\*)$`)

// findShape reads a find command: its starting points, whether a test
// narrows what it selects, and its depth limits (-1 when unset).
func findShape(args []arg) (starts []arg, narrowed bool, minDepth, maxDepth int) {
	i := 1
	for i < len(args) && (args[i].e == "-H" || args[i].e == "-L" || args[i].e == "-P" || strings.HasPrefix(args[i].e, "-O") || args[i].e == "-D") {
		if args[i].e == "-D" {
			i++
		}
		i++
	}
	for i < len(args) && !strings.HasPrefix(args[i].e, "-") && args[i].e != "(" && args[i].e != "!" {
		starts = append(starts, args[i])
		i++
	}
	if len(starts) == 0 {
		starts = literalArgs([]string{"."})
	}
	minDepth, maxDepth = -1, -1
	negated := false
	for ; i < len(args); i++ {
		a := args[i].e
		switch {
		case a == "!" || a == "-not":
			negated = true
			continue
		case a == "-o" || a == "-or" || a == ",":
			// An alternative may select everything again.
			return starts, false, minDepth, maxDepth
		case a == "-mindepth" || a == "-maxdepth":
			if i+1 < len(args) {
				n := 0
				for _, c := range args[i+1].e {
					if c < '0' || c > '9' {
						n = -1
						break
					}
					n = n*10 + int(c-'0')
				}
				if a == "-mindepth" {
					minDepth = n
				} else {
					maxDepth = n
				}
				i++
			}
		case findNarrowing[a]:
			if !negated && !(i+1 < len(args) && (a == "-name" || a == "-iname" || a == "-path" || a == "-wholename") && matchAll.MatchString(args[i+1].e)) {
				narrowed = true
			}
			i++
		}
		negated = false
	}
	return starts, narrowed, minDepth, maxDepth
}

// listingOf is what a listing command (ls, find, du -a, tree, a container
// engine's or ps' list of everything) lists, or nil when its output is not
// a plain list of paths or it is no listing command.
func listingOf(name string, args []arg) *listing {
	var l listing
	switch name {
	case "ls", "exa", "eza", "lsd", "dir", "vdir", "du", "tree":
		// ls lists entries (or, with -d, its operands); du -a and tree
		// every file below their operands.
		ls := name != "du" && name != "tree"
		dirOnly, all := false, name == "tree"
		var ops []arg
		for _, a := range args[1:] {
			switch {
			case ls && (a.e == "--recursive" || inCluster(a.e, "R")):
				l.recursive = true
			case ls && (a.e == "--directory" || inCluster(a.e, "d")):
				dirOnly = true
			case !ls && (a.e == "-a" || a.e == "--all" || (name == "tree" && a.e == "-fi")):
				all = true
			case !strings.HasPrefix(a.e, "-"):
				ops = append(ops, a)
			}
		}
		if !ls && !all {
			return nil
		}
		if len(ops) == 0 {
			ops = literalArgs([]string{"."})
		}
		for _, o := range ops {
			switch {
			case o.dyn || (o.glob && !dirOnly):
				return nil // the entries of unknown or matched paths
			case ls && !dirOnly:
				// ls prints the entries' names, not their paths.
				l.items = append(l.items, arg{e: "*", p: "*", glob: true})
			default:
				l.items = append(l.items, o)
			}
		}
		l.recursive = l.recursive || !ls
	case "find", "gfind", "bfs":
		starts, narrowed, minDepth, maxDepth := findShape(args)
		if narrowed {
			return nil
		}
		for _, s := range starts {
			if s.dyn {
				return nil
			}
			if minDepth >= 1 {
				l.items = append(l.items, entriesOf(s))
			} else {
				l.items = append(l.items, s)
			}
		}
		l.recursive = maxDepth < 0 || maxDepth > 1
	case "docker", "podman", "nerdctl", "crictl", "ctr", "kubectl", "oc", "helm":
		if !listsEverything(name, args) {
			return nil
		}
		return &listing{items: literalArgs([]string{"--all"}), mass: true}
	case "ps", "pgrep":
		if !listsEveryProcess(name, args) {
			return nil
		}
		return &listing{items: literalArgs([]string{"-1"}), mass: true}
	default:
		return nil
	}
	if len(l.items) == 0 || len(l.items) > 8 {
		return nil
	}
	return &listing{items: l.items, recursive: l.recursive} // (l itself stays on the stack)
}

// absOrHome reports whether p names a place by itself (/x, ~x), not
// relative to the working directory.
func absOrHome(p string) bool { return strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") }

// inCluster reports whether word is a cluster of short options (-rf)
// holding one of letters.
func inCluster(word, letters string) bool {
	return strings.HasPrefix(word, "-") && !strings.HasPrefix(word, "--") && strings.ContainsAny(word[1:], letters)
}

// entriesOf is the pattern naming the entries of directory a.
func entriesOf(a arg) arg {
	e := strings.TrimSuffix(a.e, "/")
	p := strings.TrimSuffix(a.p, "/")
	return arg{e: e + "/*", p: p + "/*", glob: true}
}

// listedCommand is what xargs running cmd over a listing amounts to: cmd
// with the listed patterns as operands, recursive where the listing is.
func listedCommand(cmd []arg, l *listing) []arg {
	out := append([]arg{}, cmd...)
	if l.recursive && len(cmd) > 0 && deleters[baseName(cmd[0].e)] {
		out = append(out[:1], append(literalArgs([]string{"-r"}), out[1:]...)...)
	}
	return append(out, l.items...)
}

// rootish matches what is left of an operand whose leading part a command
// substitution computes when that leaves the path to the substitution:
// "$(x)", "$(x)/", "$(x)/..", "$(x)/*".
var rootish = regexp.MustCompile(`^(/*(\.\.?/*)*)(\*|\.\*)?$`)

// resolveTargets checks a deleting command again with its computed and
// linked operands resolved: a command substitution that makes the whole
// path could be "/", and a path through a symlink this script made names
// the link's target.
func (w *walker) resolveTargets(seg *segment, sc *scope, pc pipeCtx) {
	computes, ok := targetCommands[seg.name]
	if !ok && !deleters[seg.name] {
		return
	}
	computes = computes || deleters[seg.name] && seg.name != "unlink"
	args := nonDropped(seg.args)
	if deleters[seg.name] || seg.name == "truncate" {
		// A computed operand disappears when it is unquoted and unknown;
		// put it back.
		args = seg.args
	}
	var out []arg
	changed := false
	for i, a := range args {
		if i > 0 && computes && a.dyn && a.origins != 0 && (strings.HasPrefix(a.p, "$(") || strings.HasPrefix(a.p, "`")) && rootish.MatchString(a.e) {
			out = append(out, arg{e: "/", p: "/"})
			changed = true
			continue
		}
		if i > 0 && len(w.links) > 0 && !a.dyn && !strings.HasPrefix(a.e, "-") {
			if r, ok := w.throughLink(a.e); ok {
				out = append(out, arg{e: r, p: r, glob: a.glob})
				changed = true
				continue
			}
		}
		out = append(out, a)
	}
	if changed {
		w.runCommand(seg.derive(out, nil), sc, nil, pc)
	}
}

// throughLink resolves p through a symlink this script made. Of two links
// on p's path (/a and /a/b), a lookup meets the shorter first; taking it
// also keeps the answer from depending on the map's order.
func (w *walker) throughLink(p string) (string, bool) {
	key := w.fileKey(p)
	best, resolved := "", ""
	for link, target := range w.links {
		rest, ok := strings.CutPrefix(key, link)
		if !ok || rest != "" && rest[0] != '/' || best != "" && len(link) >= len(best) {
			continue
		}
		best, resolved = link, path.Join(target, rest)
	}
	return resolved, best != ""
}

// trackLink records ln -s TARGET LINK.
func (w *walker) trackLink(args []arg) {
	symbolic := slices.ContainsFunc(args[1:], func(a arg) bool { return a.e == "--symbolic" || inCluster(a.e, "s") })
	ops := operands(args, false)
	if !symbolic || len(ops) != 2 || ops[0].dyn || ops[1].dyn {
		return
	}
	if target := path.Clean(ops[0].e); absOrHome(target) && len(w.links) < 16 {
		put(&w.links, w.fileKey(ops[1].e), target)
	}
}

// gitClean checks git clean over a work tree named by -C, --work-tree,
// GIT_WORK_TREE or a cd as removing that tree.
func (w *walker) gitClean(seg *segment, sc *scope, pc pipeCtx) {
	args := nonDropped(seg.args)
	tree, set := "", false
	for _, as := range seg.assigns {
		if as.name == "GIT_WORK_TREE" {
			tree, set = as.value, true
		}
	}
	i := 1
	for i < len(args) && strings.HasPrefix(args[i].e, "-") {
		a := args[i].e
		switch {
		case a == "-C" && i+1 < len(args):
			i++
			tree, set = joinTree(tree, args[i].e), true
		case a == "--work-tree" && i+1 < len(args):
			i++
			tree, set = args[i].e, true
		case strings.HasPrefix(a, "--work-tree="):
			tree, set = strings.TrimPrefix(a, "--work-tree="), true
		case a == "-c" || a == "--git-dir" || a == "--namespace":
			i++
		}
		i++
	}
	if i >= len(args) || args[i].e != "clean" || !slices.ContainsFunc(args[i+1:], func(a arg) bool { return a.e == "--force" || inCluster(a.e, "f") }) {
		return // no git clean -f
	}
	if !set && w.cwd != "?" {
		tree = w.cwd // where a cd went ("" is the tool's own directory: no tree)
	}
	if tree == "" {
		return
	}
	w.runCommand(seg.derive(literalArgs([]string{"rm", "-rf", tree}), nil), sc, nil, pc)
}

// joinTree applies git -C dir to the tree so far.
func joinTree(tree, dir string) string {
	if tree == "" || strings.HasPrefix(dir, "/") || strings.HasPrefix(dir, "~") {
		return dir
	}
	return tree + "/" + dir
}

// listsEverything reports whether a container engine, cluster or Helm
// command lists every object of a kind (docker ps -aq, docker volume ls -q,
// kubectl get ns -o name, helm ls -q): no filter, selector or name.
func listsEverything(name string, args []arg) bool {
	var ops []string
	for i := 1; i < len(args); i++ {
		a := args[i].e
		switch {
		case a == "-f" || a == "--filter" || strings.HasPrefix(a, "--filter=") || a == "-l" || a == "--selector" ||
			strings.HasPrefix(a, "--selector=") || strings.HasPrefix(a, "--field-selector") || strings.HasPrefix(a, "-l="):
			return false
		case a == "-n" || a == "--namespace" || a == "--context" || a == "-H" || a == "--host" || a == "-o" || a == "--output" || a == "--format":
			i++ // an option's value
		case !strings.HasPrefix(a, "-"):
			ops = append(ops, a)
		}
	}
	if len(ops) == 0 {
		return false
	}
	switch name {
	case "kubectl", "oc":
		// get KIND, with no object named.
		return len(ops) == 2 && ops[0] == "get"
	case "helm":
		return len(ops) == 1 && (ops[0] == "ls" || ops[0] == "list")
	}
	switch ops[0] {
	case "ps":
		return len(ops) == 1
	case "images", "pods":
		return len(ops) == 1 || ops[1] == "ls" || ops[1] == "list" || ops[1] == "ps"
	case "container", "containers", "image", "volume", "volumes", "pod", "network", "networks", "c", "i", "v":
		return len(ops) == 2 && (ops[1] == "ls" || ops[1] == "list" || ops[1] == "ps")
	}
	return false
}

// listsEveryProcess reports whether ps or pgrep lists every process: ps -e,
// -A, ax, aux; pgrep with a pattern that matches any name.
func listsEveryProcess(name string, args []arg) bool {
	if name == "pgrep" {
		pats := 0
		for i := 1; i < len(args); i++ {
			a := args[i].e
			switch {
			case a == "-u" || a == "-U" || a == "-P" || a == "-g" || a == "-G" || a == "-s" || a == "-t" || a == "-F" || a == "--pidfile":
				return false
			case strings.HasPrefix(a, "-"):
			default:
				pats++
				if !matchAll.MatchString(a) && a != "." && a != ".*" && a != "^" && a != "" {
					return false
				}
			}
		}
		return pats > 0
	}
	for _, a := range args[1:] {
		v := a.e
		switch {
		case v == "--everyone" || v == "-ax" || v == "-aux" || inCluster(v, "eA"): // -e, -A, -ef, -eo...
			return true
		case !strings.HasPrefix(v, "-") && strings.Contains(v, "a") && strings.Contains(v, "x"):
			return true // BSD-style ax, aux
		}
	}
	return false
}
