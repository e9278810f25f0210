// Package repocode knows a repository's files and settings that make
// git, make, npm or editors run programs: they are code, whoever writes
// them and whenever they are read. File says which paths are such files
// (the exec toolset's rules ask a person before a command writes one);
// Env is the environment toolcage runs git with in a workspace, switching
// off every program a setting can switch off (one home for it: the exec
// toolset and shell tools holding filesystem use it); Scan reads a
// repository's configuration for programs no setting can switch off (an
// exec call is then held for a person).
package repocode

import (
	"path"
	"strings"
)

// codeNames are base names of files a tool runs programs from when it
// works in their directory: git's per-tree files, make's makefiles,
// npm's and yarn's manifests and settings, direnv, editors' local
// settings, hook managers.
var codeNames = map[string]bool{
	".gitattributes": true, ".gitmodules": true, ".gitconfig": true, ".lfsconfig": true,
	"makefile": true, "gnumakefile": true, "justfile": true,
	"package.json": true, ".npmrc": true, ".yarnrc": true, ".yarnrc.yml": true, ".pnpmfile.cjs": true,
	".envrc": true, ".exrc": true, ".vimrc": true, ".nvimrc": true, ".nvim.lua": true, ".dir-locals.el": true,
	".pre-commit-config.yaml": true, ".lefthook.yml": true, "lefthook.yml": true,
}

// codeDirs are directories whose every file is such a file: git's own
// directory (config, hooks, info/attributes), editors' project settings
// (tasks, launch configurations), hook managers'.
var codeDirs = map[string]bool{".git": true, ".vscode": true, ".idea": true, ".husky": true}

// File reports whether writing the file at p (a path as a command names
// it, relative or absolute) writes code: a file git, make, npm, an
// editor or a hook manager runs programs from.
func File(p string) bool {
	p = path.Clean(strings.ReplaceAll(p, "\\", "/"))
	base := strings.ToLower(path.Base(p))
	if codeNames[base] || strings.HasSuffix(base, ".mk") || strings.HasSuffix(base, ".mak") {
		return true
	}
	for _, part := range strings.Split(p, "/") {
		if codeDirs[strings.ToLower(part)] {
			return true
		}
	}
	return false
}
