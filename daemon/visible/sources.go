package visible

import (
	"context"
	"slices"

	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/errdefs"
)

// Source says where one of a worker's tools comes from.
type Source string

// The sources of a worker's tools.
const (
	// FromCatalog is a person's catalog tool the worker's file lists (and
	// every catalog tool, for a caller through no worker).
	FromCatalog Source = "catalog"
	// FromAgent is a catalog tool the worker's agent made.
	FromAgent Source = "agent"
	// FromFile is a tool of the worker's tool files or of a built-in
	// toolset it turns on.
	FromFile Source = "file"
	// FromMeta is a meta-tool the worker offers (meta.go).
	FromMeta Source = "meta"
)

// A source is one place a worker's tools come from. Each func answers for
// the View's worker (never nil here): get and resolve return a nil tool
// for a name the source does not give it.
type source struct {
	get     func(ctx context.Context, v *View, name string) (*catalog.Tool, Source, error)
	resolve func(ctx context.Context, v *View, name string) (*catalog.Resolved, Source, error)
	list    func(ctx context.Context, v *View) ([]*catalog.Tool, error)
}

// sources are every place a worker's tools come from, in the order a
// listing shows them. A name two sources give is the later one's: a
// person's tool file over a catalog tool an agent made under the same
// name (a worker file may not list a catalog tool its tool files define,
// and the meta-tools' names are reserved).
//
// A new source of tools (MCP servers are next) is one more entry here,
// and nowhere else: every entry point reaches a worker's tools through a
// View.
var sources = []source{catalogSource, fileSource, metaSource}

// catalogSource: the catalog tools the worker's file lists that a person
// made, and the ones its agent made while it may make tools. An agent's
// tool is its maker's worker's only, even under a name another worker's
// file lists: a name no tool holds yet is not a grant to whoever makes a
// tool of it first (its code would run with that worker's grants).
var catalogSource = source{
	get: func(ctx context.Context, v *View, name string) (*catalog.Tool, Source, error) {
		return catalogTool(ctx, v, name, v.vs.cfg.Catalog.Get, func(t *catalog.Tool) *catalog.Tool { return t })
	},
	resolve: func(ctx context.Context, v *View, name string) (*catalog.Resolved, Source, error) {
		return catalogTool(ctx, v, name, v.vs.cfg.Catalog.Resolve, func(r *catalog.Resolved) *catalog.Tool { return r.Tool })
	},
	list: func(ctx context.Context, v *View) ([]*catalog.Tool, error) {
		made, err := v.vs.Made(ctx, v.w)
		if err != nil {
			return nil, err
		}
		names := slices.Clone(v.w.Tools)
		for _, m := range made {
			if !slices.Contains(names, m) {
				names = append(names, m)
			}
		}
		var out []*catalog.Tool
		for _, name := range names {
			t, err := v.vs.cfg.Catalog.Get(ctx, name)
			if errdefs.Is(err, errdefs.ToolNotFound) {
				continue
			}
			if err != nil {
				return nil, err
			}
			if !listedGrant(t) && !slices.Contains(made, name) {
				continue // another worker's agent's tool under a name the file lists
			}
			out = append(out, t)
		}
		return out, nil
	},
}

// catalogTool finds name in the catalog with find (Get or Resolve) when
// the View's worker has it: listed and a person's, or made by its agent.
func catalogTool[T any](ctx context.Context, v *View, name string, find func(context.Context, string) (T, error), tool func(T) *catalog.Tool) (T, Source, error) {
	var none T
	if slices.Contains(v.w.Tools, name) {
		found, err := find(ctx, name)
		switch {
		case errdefs.Is(err, errdefs.ToolNotFound):
			return none, "", nil // no tool by that name: nor one its agent made
		case err != nil:
			return none, "", err
		case listedGrant(tool(found)):
			return found, FromCatalog, nil
		}
	}
	made, err := v.vs.Made(ctx, v.w)
	if err != nil || !slices.Contains(made, name) {
		return none, "", err
	}
	found, err := find(ctx, name)
	if errdefs.Is(err, errdefs.ToolNotFound) {
		return none, "", nil // deleted since
	}
	return found, FromAgent, err
}

// listedGrant reports whether a worker file naming t grants it: t is a
// person's (an agent's tool is granted by its maker's worker_tools row,
// never by a name).
func listedGrant(t *catalog.Tool) bool { return t.CreatedBy == catalog.CreatedByUser }

// fileSource: the tools of the worker's tool files and of the built-in
// toolsets it turns on, written by the person who registered it.
var fileSource = source{
	get: func(_ context.Context, v *View, name string) (*catalog.Tool, Source, error) {
		if lt := v.w.LocalTool(name); lt != nil {
			return catalog.PersonTool(lt.Def), FromFile, nil
		}
		return nil, "", nil
	},
	resolve: func(_ context.Context, v *View, name string) (*catalog.Resolved, Source, error) {
		if lt := v.w.LocalTool(name); lt != nil {
			res, err := catalog.Compile(catalog.PersonTool(lt.Def))
			return res, FromFile, err
		}
		return nil, "", nil
	},
	list: func(_ context.Context, v *View) ([]*catalog.Tool, error) {
		out := make([]*catalog.Tool, 0, len(v.w.LocalTools))
		for _, lt := range v.w.LocalTools {
			out = append(out, catalog.PersonTool(lt.Def))
		}
		return out, nil
	},
}

// metaSource: the meta-tools the worker offers (meta.go).
var metaSource = source{
	get: func(_ context.Context, v *View, name string) (*catalog.Tool, Source, error) {
		if m := metaFor(v.w, name); m != nil {
			return metaTool(m), FromMeta, nil
		}
		return nil, "", nil
	},
	resolve: func(_ context.Context, v *View, name string) (*catalog.Resolved, Source, error) {
		if m := metaFor(v.w, name); m != nil {
			res, err := catalog.Compile(metaTool(m))
			return res, FromMeta, err
		}
		return nil, "", nil
	},
	list: func(_ context.Context, v *View) ([]*catalog.Tool, error) {
		var out []*catalog.Tool
		for _, m := range metaToolsFor(v.w) {
			out = append(out, metaTool(&m))
		}
		return out, nil
	},
}
