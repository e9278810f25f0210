// Package sql is the built-in sql toolset: db_sql and db_schema on the
// worker's own SQLite database (kind sql, store/workerdb), with the
// query timeout and size cap its settings give.
package sql

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/kind"
	ksql "github.com/toolcage/toolcage/daemon/kind/sql"
	"github.com/toolcage/toolcage/daemon/toolset"
	"github.com/toolcage/toolcage/store/workerdb"
)

// Settings are what a worker file may write under toolsets: sql:.
type Settings struct {
	// QueryTimeout bounds one call's statements (5s by default).
	QueryTimeout kind.Duration `json:"query_timeout,omitempty"`
	// MaxBytes caps the database file with its temporary tables (100MB
	// by default).
	MaxBytes kind.ByteSize `json:"max_bytes,omitempty"`
	// MaxResultBytes caps one read's rows (the daemon's
	// worker_limits.sql_result_bytes by default, 4MiB).
	MaxResultBytes kind.ByteSize `json:"max_result_bytes,omitempty"`
}

const (
	ceilTimeout = 5 * time.Minute
	floorBytes  = 64 << 10
	ceilBytes   = 10 << 30
	// A result is held in the daemon's memory, then scrubbed and sent.
	floorResult = 1 << 10
	ceilResult  = 256 << 20
)

func decode(raw json.RawMessage) (Settings, error) {
	var s Settings
	if err := kind.DecodeStrict(raw, &s); err != nil {
		return s, err
	}
	if s.QueryTimeout < 0 || time.Duration(s.QueryTimeout) > ceilTimeout {
		return s, fmt.Errorf("query_timeout: want up to %v", ceilTimeout)
	}
	if s.MaxBytes != 0 && (s.MaxBytes < floorBytes || s.MaxBytes > ceilBytes) {
		return s, fmt.Errorf("max_bytes: want %d to %d bytes", floorBytes, int64(ceilBytes))
	}
	if s.MaxResultBytes != 0 && (s.MaxResultBytes < floorResult || s.MaxResultBytes > ceilResult) {
		return s, fmt.Errorf("max_result_bytes: want %d to %d bytes", floorResult, int64(ceilResult))
	}
	return s, nil
}

// Toolset is the sql toolset.
func Toolset() toolset.Toolset {
	return toolset.New("sql", "a SQLite database of the worker's own", decode, tools)
}

func tools(_ toolset.Worker, s Settings) ([]*catalog.Definition, error) {
	spec := func(op string) ksql.Spec {
		return ksql.Spec{Op: op, QueryTimeout: s.QueryTimeout, MaxBytes: s.MaxBytes, MaxResultBytes: s.MaxResultBytes}
	}
	timeout := time.Duration(s.QueryTimeout)
	if timeout == 0 {
		timeout = workerdb.DefaultQueryTimeout
	}
	defs := []map[string]any{
		{"name": "db_sql", "kind": ksql.Name, "category": "Database", "permissions": []string{"database"},
			"description": fmt.Sprintf("Run SQL on this worker's own SQLite database. A read returns {columns, rows} (at most %d rows, truncated when more; "+
				"a read of more than a few MiB is refused with limit_exceeded: select fewer rows or columns); "+
				"a write returns {changes, last_insert_id}. params: an array for ? or an object for :name. Statements stop after %v; "+
				"ATTACH, extensions and file-touching pragmas are refused.", workerdb.MaxRows, timeout),
			"parameters": map[string]any{"type": "object", "additionalProperties": false, "required": []string{"sql"},
				"properties": map[string]any{
					"sql":    map[string]any{"type": "string", "minLength": 1, "description": "SQLite SQL"},
					"params": map[string]any{"type": []string{"array", "object"}, "description": "values for ? or :name placeholders"},
				}},
			"sql": spec(ksql.OpQuery)},
		{"name": "db_schema", "kind": ksql.Name, "category": "Database", "permissions": []string{"database"},
			"description": "List the tables, views, indexes and triggers of this worker's own SQLite database, with each table's columns.",
			"parameters":  map[string]any{"type": "object", "additionalProperties": false, "properties": map[string]any{}},
			"sql":         spec(ksql.OpSchema)},
	}
	out := make([]*catalog.Definition, 0, len(defs))
	for _, d := range defs {
		def, err := toolset.Define(d)
		if err != nil {
			return nil, err
		}
		out = append(out, def)
	}
	return out, nil
}
