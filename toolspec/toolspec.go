// Package toolspec holds the plain facts about a tool that the tool format
// (daemon/catalog) and the executor contract (executors) share: its kind and
// the limits of one call. It is a leaf, so the tool format does not link the
// executor's gRPC glue to know them.
package toolspec

import "time"

// Kind names one kind of tool, and of executor: one executor process serves
// one kind.
type Kind string

// The kinds.
const (
	JS    Kind = "js"
	Shell Kind = "shell"
	HTTP  Kind = "http"
)

// Valid reports whether k is a known kind.
func (k Kind) Valid() bool {
	switch k {
	case JS, Shell, HTTP:
		return true
	}
	return false
}

// Limits bound one call. A zero field means "use the executor's default".
type Limits struct {
	Timeout     time.Duration `json:"timeout"`
	MemoryBytes int64         `json:"memory_bytes"`
	OutputBytes int64         `json:"output_bytes"`
	Requests    int           `json:"requests"`
}
