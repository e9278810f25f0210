package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Tool status values.
const (
	StatusActive          = "active"
	StatusDisabled        = "disabled"
	StatusPendingApproval = "pending_approval"
	StatusRejected        = "rejected"
)

// Tool creators.
const (
	CreatorUser = "user"
	CreatorLLM  = "llm"
)

// Tool is a stored tool definition plus its bookkeeping. The store does not
// interpret the enumerated fields; the daemon and policy validate them.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Kind        string          `json:"kind"` // js | shell | http
	Category    string          `json:"category,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"` // JSON Schema
	Permissions []string        `json:"permissions,omitempty"`
	Secrets     []string        `json:"secrets,omitempty"`   // names of the secrets the tool may use
	Approval    string          `json:"approval,omitempty"`  // preApproved | ask | blocked
	Isolation   string          `json:"isolation,omitempty"` // process | docker
	Limits      json.RawMessage `json:"limits,omitempty"`    // JSON object, opaque to the store
	Spec        json.RawMessage `json:"spec,omitempty"`      // kind-specific block, opaque to the store
	Mounts      json.RawMessage `json:"mounts,omitempty"`    // JSON array, opaque to the store

	Status    string `json:"status"`     // active | disabled | pending_approval | rejected
	CreatedBy string `json:"created_by"` // user | llm
	Version   int    `json:"version"`
	// ApprovedVersion is the last version a person let run (the tool was
	// active at it); 0 if none. The caller sets it; ActivateTool sets it.
	ApprovedVersion int       `json:"approved_version,omitempty"`
	UsageCount      int64     `json:"usage_count"`
	LastUsedAt      time.Time `json:"last_used_at,omitzero"` // zero if never used
	CreatedAt       time.Time `json:"created_at"`
	UpdatedAt       time.Time `json:"updated_at"`
}

// ToolFilter selects tools for ListTools. Empty string fields match every
// tool; Limit 0 (or less) means no limit, a negative Offset counts as 0.
type ToolFilter struct {
	Status, Category, CreatedBy, Kind string
	Limit, Offset                     int
}

// ToolVersion is one kept version of a tool's definition.
type ToolVersion struct {
	Version int `json:"version"`
	// Tool holds Name, Version and the definition fields (Description through
	// Spec) as they were at this version; the bookkeeping fields are zero.
	Tool      *Tool     `json:"tool"`
	CreatedAt time.Time `json:"created_at"`
}

// ToolStats counts the stored tools.
type ToolStats struct {
	Total           int   `json:"total"`
	Active          int   `json:"active"`
	Disabled        int   `json:"disabled"`
	PendingApproval int   `json:"pending_approval"`
	Rejected        int   `json:"rejected"`
	CreatedByLLM    int   `json:"created_by_llm"`
	CreatedByUser   int   `json:"created_by_user"`
	TotalUsage      int64 `json:"total_usage"`
}

const selectTool = `SELECT name, description, kind, category, parameters, permissions, secrets,
	approval, isolation, limits, spec, status, created_by, version, approved_version, usage_count,
	last_used_at, created_at, updated_at, mounts FROM tools`

// CreateTool inserts t and the row of its first version (t.Version; 0 is
// taken as 1) in one transaction. On success it sets t.CreatedAt and
// t.UpdatedAt, and leaves t as GetTool will return it (JSON compacted, empty
// lists nil). A tool of the same name gives ErrConflict.
func (s *Store) CreateTool(ctx context.Context, t *Tool) error {
	n, row, err := prepareTool(t)
	if err != nil {
		return fmt.Errorf("store: create tool: %w", err)
	}
	if n.Version == 0 {
		n.Version = 1
	}
	lastUsed, err := nanos("last_used_at", n.LastUsedAt)
	if err != nil {
		return fmt.Errorf("store: create tool %q: %w", n.Name, err)
	}
	snap, err := encodeSnapshot(n)
	if err != nil {
		return fmt.Errorf("store: create tool %q: %w", n.Name, err)
	}
	now := s.now()

	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: create tool %q: %w", n.Name, err)
	}
	defer rollback(tx)
	_, err = tx.ExecContext(ctx, `INSERT INTO tools (name, description, kind, category,
		parameters, permissions, secrets, approval, isolation, limits, spec, status, created_by,
		version, approved_version, usage_count, last_used_at, created_at, updated_at, mounts)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		n.Name, n.Description, n.Kind, n.Category,
		row.parameters, row.permissions, row.secrets, n.Approval, n.Isolation, row.limits, row.spec,
		n.Status, n.CreatedBy, n.Version, n.ApprovedVersion, n.UsageCount, lastUsed, now.UnixNano(), now.UnixNano(), row.mounts)
	if isConstraint(err) {
		return fmt.Errorf("store: create tool %q: %w", n.Name, ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("store: create tool %q: %w", n.Name, err)
	}
	if err := insertVersion(ctx, tx, n.Name, n.Version, snap, now); err != nil {
		return fmt.Errorf("store: create tool %q: %w", n.Name, err)
	}
	if err := retireGrants(ctx, tx, n.Name, now); err != nil {
		return fmt.Errorf("store: create tool %q: %w", n.Name, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: create tool %q: %w", n.Name, err)
	}
	n.CreatedAt, n.UpdatedAt = now, now
	*t = *n
	return nil
}

// GetTool returns the tool called name, or ErrNotFound.
func (s *Store) GetTool(ctx context.Context, name string) (*Tool, error) {
	t, err := scanTool(s.getTool.QueryRowContext(ctx, name))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: tool %q: %w", name, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: get tool %q: %w", name, err)
	}
	return t, nil
}

// ListTools returns the tools f selects, ordered by name, and how many tools
// match f regardless of f.Limit and f.Offset. Both come from one snapshot of
// the database.
func (s *Store) ListTools(ctx context.Context, f ToolFilter) ([]*Tool, int, error) {
	where, args := f.where()
	tx, err := s.rdb.BeginTx(ctx, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("store: list tools: %w", err)
	}
	defer rollback(tx)

	var total int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM tools`+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("store: list tools: %w", err)
	}
	tools := []*Tool{}
	if total == 0 {
		return tools, 0, nil
	}
	limit := f.Limit
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	rows, err := tx.QueryContext(ctx, selectTool+where+` ORDER BY name LIMIT ? OFFSET ?`,
		append(args, limit, max(f.Offset, 0))...)
	if err != nil {
		return nil, 0, fmt.Errorf("store: list tools: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		t, err := scanTool(rows)
		if err != nil {
			return nil, 0, fmt.Errorf("store: list tools: %w", err)
		}
		tools = append(tools, t)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("store: list tools: %w", err)
	}
	return tools, total, nil
}

// UpdateTool overwrites the definition fields, Status and Version of the
// stored tool t.Name; CreatedBy, UsageCount, LastUsedAt and CreatedAt are
// kept. With newVersion it also keeps a snapshot of the definition as version
// t.Version (ErrConflict if that version exists). One transaction. On success
// t is left as GetTool will return it. A missing tool gives ErrNotFound.
func (s *Store) UpdateTool(ctx context.Context, t *Tool, newVersion bool) error {
	n, row, err := prepareTool(t)
	if err != nil {
		return fmt.Errorf("store: update tool: %w", err)
	}
	var snap string
	if newVersion {
		if snap, err = encodeSnapshot(n); err != nil {
			return fmt.Errorf("store: update tool %q: %w", n.Name, err)
		}
	}
	now := s.now()

	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: update tool %q: %w", n.Name, err)
	}
	defer rollback(tx)
	var lastUsed, created sql.NullInt64
	err = tx.QueryRowContext(ctx, `UPDATE tools SET description = ?, kind = ?, category = ?,
		parameters = ?, permissions = ?, secrets = ?, approval = ?, isolation = ?, limits = ?,
		spec = ?, status = ?, version = ?, approved_version = ?, updated_at = ?, mounts = ?
		WHERE name = ? RETURNING created_by, usage_count, last_used_at, created_at`,
		n.Description, n.Kind, n.Category,
		row.parameters, row.permissions, row.secrets, n.Approval, n.Isolation, row.limits,
		row.spec, n.Status, n.Version, n.ApprovedVersion, now.UnixNano(), row.mounts, n.Name,
	).Scan(&n.CreatedBy, &n.UsageCount, &lastUsed, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("store: tool %q: %w", n.Name, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("store: update tool %q: %w", n.Name, err)
	}
	if newVersion {
		if err := insertVersion(ctx, tx, n.Name, n.Version, snap, now); err != nil {
			return fmt.Errorf("store: update tool %q: %w", n.Name, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: update tool %q: %w", n.Name, err)
	}
	n.LastUsedAt, n.CreatedAt, n.UpdatedAt = fromNanos(lastUsed), fromNanos(created), now
	*t = *n
	return nil
}

// ActivateTool makes the tool called name active and its current version
// the approved one, in one statement, or returns ErrNotFound.
func (s *Store) ActivateTool(ctx context.Context, name string) error {
	res, err := s.wdb.ExecContext(ctx, `UPDATE tools SET status = ?, approved_version = version,
		updated_at = ? WHERE name = ?`, StatusActive, s.now().UnixNano(), name)
	if err := affectedOne(res, err); err != nil {
		return fmt.Errorf("store: activate tool %q: %w", name, err)
	}
	return nil
}

// SetToolStatus sets the status of the tool called name, or returns
// ErrNotFound.
func (s *Store) SetToolStatus(ctx context.Context, name, status string) error {
	res, err := s.wdb.ExecContext(ctx, `UPDATE tools SET status = ?, updated_at = ? WHERE name = ?`,
		status, s.now().UnixNano(), name)
	if err := affectedOne(res, err); err != nil {
		return fmt.Errorf("store: set status of tool %q: %w", name, err)
	}
	return nil
}

// DisableTool sets the tool called name disabled, recording who did it
// (by: CreatorLLM for an agent, CreatorUser for a person), or returns
// ErrNotFound.
func (s *Store) DisableTool(ctx context.Context, name, by string) error {
	res, err := s.wdb.ExecContext(ctx, `UPDATE tools SET status = ?, disabled_by = ?, updated_at = ? WHERE name = ?`,
		StatusDisabled, by, s.now().UnixNano(), name)
	if err := affectedOne(res, err); err != nil {
		return fmt.Errorf("store: disable tool %q: %w", name, err)
	}
	return nil
}

// ToolDisabledBy is who last disabled the tool called name (see
// DisableTool; "" when no one did since the column came), or ErrNotFound.
func (s *Store) ToolDisabledBy(ctx context.Context, name string) (string, error) {
	var by string
	err := s.rdb.QueryRowContext(ctx, `SELECT disabled_by FROM tools WHERE name = ?`, name).Scan(&by)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("store: tool %q: %w", name, ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("store: tool %q: %w", name, err)
	}
	return by, nil
}

// DeleteTool deletes the tool called name and all its versions, or returns
// ErrNotFound. Its executions stay in the audit log.
func (s *Store) DeleteTool(ctx context.Context, name string) error {
	res, err := s.wdb.ExecContext(ctx, `DELETE FROM tools WHERE name = ?`, name)
	if err := affectedOne(res, err); err != nil {
		return fmt.Errorf("store: delete tool %q: %w", name, err)
	}
	return nil
}

// ToolVersions returns every kept version of the tool called name, oldest
// first, or ErrNotFound if there is no such tool.
func (s *Store) ToolVersions(ctx context.Context, name string) ([]*ToolVersion, error) {
	tx, err := s.rdb.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("store: versions of tool %q: %w", name, err)
	}
	defer rollback(tx)
	rows, err := tx.QueryContext(ctx, `SELECT version, snapshot, created_at FROM tool_versions
		WHERE tool = ? ORDER BY version`, name)
	if err != nil {
		return nil, fmt.Errorf("store: versions of tool %q: %w", name, err)
	}
	defer rows.Close()
	var versions []*ToolVersion
	for rows.Next() {
		v, err := scanVersion(rows, name)
		if err != nil {
			return nil, fmt.Errorf("store: versions of tool %q: %w", name, err)
		}
		versions = append(versions, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: versions of tool %q: %w", name, err)
	}
	if len(versions) > 0 {
		return versions, nil
	}
	// Every tool has a version; make sure, in the same snapshot, there is
	// no tool rather than an empty history.
	var one int
	err = tx.QueryRowContext(ctx, `SELECT 1 FROM tools WHERE name = ?`, name).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: tool %q: %w", name, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: versions of tool %q: %w", name, err)
	}
	return []*ToolVersion{}, nil
}

// ToolVersion returns one kept version of the tool called name, or
// ErrNotFound if the tool or that version does not exist.
func (s *Store) ToolVersion(ctx context.Context, name string, version int) (*ToolVersion, error) {
	row := s.rdb.QueryRowContext(ctx, `SELECT version, snapshot, created_at FROM tool_versions
		WHERE tool = ? AND version = ?`, name, version)
	v, err := scanVersion(row, name)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: tool %q version %d: %w", name, version, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: tool %q version %d: %w", name, version, err)
	}
	return v, nil
}

// ToolStats counts the stored tools by status and creator, and sums their
// usage.
func (s *Store) ToolStats(ctx context.Context) (ToolStats, error) {
	var st ToolStats
	err := s.rdb.QueryRowContext(ctx, `SELECT COUNT(*),
		COALESCE(SUM(status = ?), 0), COALESCE(SUM(status = ?), 0),
		COALESCE(SUM(status = ?), 0), COALESCE(SUM(status = ?), 0),
		COALESCE(SUM(created_by = ?), 0), COALESCE(SUM(created_by = ?), 0),
		COALESCE(SUM(usage_count), 0)
		FROM tools`,
		StatusActive, StatusDisabled, StatusPendingApproval, StatusRejected, CreatorLLM, CreatorUser,
	).Scan(&st.Total, &st.Active, &st.Disabled, &st.PendingApproval, &st.Rejected,
		&st.CreatedByLLM, &st.CreatedByUser, &st.TotalUsage)
	if err != nil {
		return ToolStats{}, fmt.Errorf("store: tool stats: %w", err)
	}
	return st, nil
}

// where renders f as a WHERE clause over constant column names.
func (f ToolFilter) where() (string, []any) {
	var conds []string
	var args []any
	for _, c := range []struct{ col, val string }{
		{"status", f.Status}, {"category", f.Category}, {"created_by", f.CreatedBy}, {"kind", f.Kind},
	} {
		if c.val != "" {
			conds = append(conds, c.col+" = ?")
			args = append(args, c.val)
		}
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// toolRow holds the encoded forms of a tool's JSON columns: nil (NULL) or a
// compacted JSON string. Strings, not []byte: STRICT TEXT columns refuse blobs.
type toolRow struct {
	parameters, limits, spec, mounts any
	permissions, secrets             string
}

// prepareTool checks t and returns a normalized copy of it (JSON compacted,
// empty lists nil) with its encoded columns. t itself is not changed.
func prepareTool(t *Tool) (*Tool, toolRow, error) {
	if t == nil {
		return nil, toolRow{}, fmt.Errorf("%w: nil tool", ErrInvalid)
	}
	if t.Name == "" {
		return nil, toolRow{}, fmt.Errorf("%w: tool has no name", ErrInvalid)
	}
	n := *t
	var row toolRow
	var err error
	for _, f := range []struct {
		name string
		raw  *json.RawMessage
		col  *any
	}{
		{"parameters", &n.Parameters, &row.parameters},
		{"limits", &n.Limits, &row.limits},
		{"spec", &n.Spec, &row.spec},
		{"mounts", &n.Mounts, &row.mounts},
	} {
		if *f.raw, err = compactJSON(*f.raw); err != nil {
			return nil, toolRow{}, fmt.Errorf("%w: tool %q: %s: %w", ErrInvalid, t.Name, f.name, err)
		}
		if *f.raw != nil {
			*f.col = string(*f.raw)
		}
	}
	n.Permissions, row.permissions = encodeList(n.Permissions)
	n.Secrets, row.secrets = encodeList(n.Secrets)
	return &n, row, nil
}

// compactJSON returns raw compacted, or nil for an empty raw.
func compactJSON(raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// encodeList returns list (nil if empty) and its JSON array.
func encodeList(list []string) ([]string, string) {
	if len(list) == 0 {
		return nil, "[]"
	}
	b, _ := json.Marshal(list) // a []string always marshals
	return list, string(b)
}

func decodeList(s string) ([]string, error) {
	var list []string
	if err := json.Unmarshal([]byte(s), &list); err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, nil
	}
	return list, nil
}

func scanTool(sc rowScanner) (*Tool, error) {
	var t Tool
	var params, limits, spec, mounts []byte
	var perms, secrets string
	var lastUsed, created, updated sql.NullInt64
	err := sc.Scan(&t.Name, &t.Description, &t.Kind, &t.Category, &params, &perms, &secrets,
		&t.Approval, &t.Isolation, &limits, &spec, &t.Status, &t.CreatedBy, &t.Version,
		&t.ApprovedVersion, &t.UsageCount, &lastUsed, &created, &updated, &mounts)
	if err != nil {
		return nil, err
	}
	t.Parameters, t.Limits, t.Spec, t.Mounts = params, limits, spec, mounts
	if t.Permissions, err = decodeList(perms); err != nil {
		return nil, fmt.Errorf("tool %q: permissions: %w", t.Name, err)
	}
	if t.Secrets, err = decodeList(secrets); err != nil {
		return nil, fmt.Errorf("tool %q: secrets: %w", t.Name, err)
	}
	t.LastUsedAt, t.CreatedAt, t.UpdatedAt = fromNanos(lastUsed), fromNanos(created), fromNanos(updated)
	return &t, nil
}

// snapshot is the JSON form of a tool's definition kept in tool_versions.
// Fields may be added; old snapshots then decode with them zero.
type snapshot struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Kind        string          `json:"kind,omitempty"`
	Category    string          `json:"category,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Permissions []string        `json:"permissions,omitempty"`
	Secrets     []string        `json:"secrets,omitempty"`
	Approval    string          `json:"approval,omitempty"`
	Isolation   string          `json:"isolation,omitempty"`
	Limits      json.RawMessage `json:"limits,omitempty"`
	Spec        json.RawMessage `json:"spec,omitempty"`
	Mounts      json.RawMessage `json:"mounts,omitempty"`
}

// encodeSnapshot renders the definition of the normalized tool n. HTML
// escaping is off so the kept JSON fields are byte for byte those of tools.
func encodeSnapshot(n *Tool) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(snapshot{
		Name: n.Name, Description: n.Description, Kind: n.Kind, Category: n.Category,
		Parameters: n.Parameters, Permissions: n.Permissions, Secrets: n.Secrets,
		Approval: n.Approval, Isolation: n.Isolation, Limits: n.Limits, Spec: n.Spec, Mounts: n.Mounts,
	})
	if err != nil {
		return "", fmt.Errorf("snapshot: %w", err)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

func insertVersion(ctx context.Context, tx *sql.Tx, name string, version int, snap string, now time.Time) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO tool_versions (tool, version, snapshot, created_at)
		VALUES (?, ?, ?, ?)`, name, version, snap, now.UnixNano())
	if isConstraint(err) {
		return fmt.Errorf("version %d: %w", version, ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("version %d: %w", version, err)
	}
	return nil
}

func scanVersion(sc rowScanner, name string) (*ToolVersion, error) {
	var v ToolVersion
	var snap []byte
	var created sql.NullInt64
	if err := sc.Scan(&v.Version, &snap, &created); err != nil {
		return nil, err
	}
	var d snapshot
	if err := json.Unmarshal(snap, &d); err != nil {
		return nil, fmt.Errorf("version %d: snapshot: %w", v.Version, err)
	}
	v.CreatedAt = fromNanos(created)
	v.Tool = &Tool{
		Name: name, Description: d.Description, Kind: d.Kind, Category: d.Category,
		Parameters: d.Parameters, Permissions: d.Permissions, Secrets: d.Secrets,
		Approval: d.Approval, Isolation: d.Isolation, Limits: d.Limits, Spec: d.Spec, Mounts: d.Mounts,
		Version: v.Version,
	}
	return &v, nil
}

// affectedOne turns an Exec result that touched no row into ErrNotFound.
func affectedOne(res sql.Result, err error) error {
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}
