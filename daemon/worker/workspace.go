package worker

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	yaml "go.yaml.in/yaml/v3"

	"github.com/toolcage/toolcage/policy/mounts"
)

// maxMountGrants bounds a worker's mounts: list.
const maxMountGrants = 32

// workspace decodes workspace: a directory, relative to the worker file's
// directory or absolute, that must exist; it is kept absolute with its
// symlinks resolved, so what was checked is what gets mounted.
func (p *parser) workspace(n *yaml.Node) string {
	s := p.str(n, "workspace")
	if n.ShortTag() != "!!str" {
		return ""
	}
	dir, err := p.directory(s)
	if err != nil {
		p.errorAt(n, "workspace: %v", err)
		return ""
	}
	return dir
}

// directory resolves a directory named in the worker file.
func (p *parser) directory(s string) (string, error) {
	if s == "" {
		return "", errors.New("is empty")
	}
	if !filepath.IsAbs(s) {
		s = filepath.Join(filepath.Dir(p.file), s)
	}
	real, err := mounts.Resolve(s)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory", real)
	}
	return real, nil
}

// mountGrants decodes mounts: a list of {path, readonly}, readonly true
// unless written false.
func (p *parser) mountGrants(n *yaml.Node) []MountGrant {
	if n.Kind != yaml.SequenceNode {
		p.errorAt(n, "mounts: want a list of {path, readonly}, got %s", kindName(n))
		return nil
	}
	if len(n.Content) > maxMountGrants {
		p.errorAt(n, "mounts: more than %d", maxMountGrants)
		return nil
	}
	var out []MountGrant
	for i, c := range n.Content {
		field := fmt.Sprintf("mounts[%d]", i)
		g := MountGrant{ReadOnly: true}
		var pathNode *yaml.Node
		p.mapping(c, field, map[string]func(*yaml.Node){
			"path": func(n *yaml.Node) {
				pathNode = n
				s := p.str(n, field+".path")
				if n.ShortTag() != "!!str" {
					return
				}
				dir, err := p.directory(s)
				if err != nil {
					p.errorAt(n, "%s.path: %v", field, err)
					return
				}
				g.Path = dir
			},
			"readonly": func(n *yaml.Node) { g.ReadOnly = p.boolean(n, field+".readonly") },
		})
		if pathNode == nil && c.Kind == yaml.MappingNode {
			p.errorAt(c, "%s.path: is required", field)
		}
		if g.Path != "" {
			out = append(out, g)
		}
	}
	return out
}

// checkWorkspace runs CheckMounts with what a worker file alone knows (no
// daemon paths): "/" and a writable mount holding the worker's own files
// are refused here already.
func (p *parser) checkWorkspace(w *Worker, at *yaml.Node) {
	if err := w.CheckMounts(mounts.Guard{}); err != nil {
		p.errorAt(at, "%v", err)
	}
}

// OwnFiles are the worker file and its tool files: what a writable mount
// of the worker may not hold.
func (w *Worker) OwnFiles() []string {
	out := []string{w.Path}
	for _, lt := range w.LocalTools {
		if filepath.IsAbs(lt.File) {
			out = append(out, lt.File)
		}
	}
	return out
}

// ToolFileDirs are the directories the worker's tool_files patterns
// match in: each pattern's leading directories up to its first one with
// glob syntax. A file that appears there may become one of its tools.
func (w *Worker) ToolFileDirs() []string {
	var out []string
	for _, p := range w.ToolFiles {
		dir := filepath.Dir(filepath.Join(filepath.Dir(w.Path), p))
		for hasMeta(dir) {
			dir = filepath.Dir(dir)
		}
		if filepath.IsAbs(dir) {
			out = append(out, dir)
		}
	}
	return out
}

// Guard is g with what the worker's tools may not make writable: its own
// files, and the directories its tool files are read from.
func (w *Worker) Guard(g mounts.Guard) mounts.Guard {
	return g.With(w.OwnFiles()...).WithDirs(w.ToolFileDirs()...)
}

// HostPath is one host path a worker's tools may see: what names it in
// the worker's files, the path (resolved) and whether it is writable.
type HostPath struct {
	What     string
	Path     string
	Writable bool
}

// HostPaths lists the host paths the worker's tools may see: its
// workspace, its mount grants and its tool files' own mounts (resolved
// now; one that cannot be resolved is left out, CheckMounts reports it).
func (w *Worker) HostPaths() []HostPath {
	var out []HostPath
	if w.Workspace != "" {
		out = append(out, HostPath{"workspace", w.Workspace, !w.ReadOnly})
	}
	for i, m := range w.Mounts {
		out = append(out, HostPath{fmt.Sprintf("mounts[%d]", i), m.Path, !m.ReadOnly})
	}
	for _, lt := range w.LocalTools {
		for i, m := range lt.Def.Mounts {
			if src, err := mounts.Resolve(m.Path); err == nil {
				out = append(out, HostPath{fmt.Sprintf("tool %q (%s): mounts[%d]", lt.Def.Name, lt.File, i), src, !m.ReadOnly})
			}
		}
	}
	return out
}

// CheckMounts checks every host path the worker's tools may see against
// g, with what the worker's own files add (Guard): its workspace, its
// mount grants, and its tool files' own mounts (resolved now; each call
// resolves and checks them again). The daemon calls it with its own paths
// when the worker is registered or reloaded.
func (w *Worker) CheckMounts(g mounts.Guard) error {
	g = w.Guard(g)
	var errs []error
	if w.Workspace != "" {
		if err := g.Check(w.Workspace, !w.ReadOnly); err != nil {
			errs = append(errs, fmt.Errorf("workspace: %w", err))
		}
	}
	for i, m := range w.Mounts {
		if err := g.Check(m.Path, !m.ReadOnly); err != nil {
			errs = append(errs, fmt.Errorf("mounts[%d]: %w", i, err))
		}
	}
	for _, lt := range w.LocalTools {
		for i, m := range lt.Def.Mounts {
			src, err := mounts.Resolve(m.Path)
			if err == nil {
				err = g.Check(src, !m.ReadOnly)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("tool %q (%s): mounts[%d]: %w", lt.Def.Name, lt.File, i, err))
			}
		}
	}
	return errors.Join(errs...)
}
