package apiserver

import (
	"net/http"
	"testing"

	"github.com/toolcage/toolcage/errdefs"
)

// The HTTP status of every stable code, as docs/operations.md documents them; a code
// added to errdefs without a status here fails.
func TestStatusOfEveryCode(t *testing.T) {
	want := map[errdefs.Code]int{
		errdefs.ToolNotFound:      http.StatusNotFound,
		errdefs.NotFound:          http.StatusNotFound,
		errdefs.InvalidArguments:  http.StatusBadRequest,
		errdefs.InvalidDefinition: http.StatusBadRequest,
		errdefs.InvalidRequest:    http.StatusBadRequest,
		errdefs.Conflict:          http.StatusConflict,
		errdefs.ToolNotActive:     http.StatusConflict,
		errdefs.Forbidden:         http.StatusForbidden,
		errdefs.PolicyDenied:      http.StatusForbidden,
		errdefs.ApprovalRequired:  http.StatusForbidden,
		errdefs.ApprovalDenied:    http.StatusForbidden,
		errdefs.RateLimited:       http.StatusTooManyRequests,
		errdefs.Timeout:           http.StatusGatewayTimeout,
		errdefs.LimitExceeded:     http.StatusUnprocessableEntity,
		errdefs.ExecutorFailed:    http.StatusBadGateway,
		errdefs.Unavailable:       http.StatusServiceUnavailable,
		errdefs.Internal:          http.StatusInternalServerError,
		errdefs.Unauthorized:      http.StatusUnauthorized,
	}
	for _, code := range errdefs.Codes {
		status, ok := want[code]
		if !ok {
			t.Errorf("code %q has no documented status", code)
			continue
		}
		if got := StatusOf(code); got != status {
			t.Errorf("StatusOf(%q) = %d, want %d", code, got, status)
		}
	}
	if got := StatusOf("no_such_code"); got != http.StatusInternalServerError {
		t.Errorf("unknown code: %d, want 500", got)
	}
}
