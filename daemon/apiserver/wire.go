package apiserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/dispatch"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/policy"
)

// maxBody bounds every request body.
const maxBody = 4 << 20

// StatusOf maps a stable code to its HTTP status.
func StatusOf(code errdefs.Code) int {
	switch code {
	case errdefs.ToolNotFound, errdefs.NotFound:
		return http.StatusNotFound
	case errdefs.InvalidArguments, errdefs.InvalidDefinition, errdefs.InvalidRequest:
		return http.StatusBadRequest
	case errdefs.Conflict, errdefs.ToolNotActive:
		return http.StatusConflict
	case errdefs.Forbidden, errdefs.PolicyDenied, errdefs.ApprovalDenied, errdefs.ApprovalRequired:
		return http.StatusForbidden
	case errdefs.Unauthorized:
		return http.StatusUnauthorized
	case errdefs.RateLimited:
		return http.StatusTooManyRequests
	case errdefs.Timeout:
		return http.StatusGatewayTimeout
	case errdefs.LimitExceeded:
		return http.StatusUnprocessableEntity
	case errdefs.ExecutorFailed:
		return http.StatusBadGateway
	case errdefs.Unavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// WriteError answers err as the socket API does: its stable code's
// status and {"error": {...}}.
func WriteError(w http.ResponseWriter, err error) { writeError(w, err) }

func writeError(w http.ResponseWriter, err error) {
	code := errdefs.CodeOf(err)
	detail := api.ErrorDetail{Code: code, Message: err.Error(), Limit: errdefs.LimitOf(err)}
	var ce *dispatch.CallError
	if errors.As(err, &ce) {
		detail.CallID = ce.CallID
	}
	var ae *dispatch.ApprovalError
	if errors.As(err, &ae) {
		detail.ApprovalID = ae.ID
	}
	var ve *catalog.ValidationError
	if errors.As(err, &ve) {
		for _, p := range ve.Problems {
			detail.Problems = append(detail.Problems, api.Problem{Field: p.Field, Message: p.Message})
		}
	}
	var ee *errdefs.Error
	if code == errdefs.Internal && !errors.As(err, &ee) {
		// Unexpected errors keep their detail in the log, not on the wire.
		detail.Message = "internal error: " + err.Error()
	}
	if code == errdefs.RateLimited {
		retry := time.Second
		var rle *policy.RateLimitedError
		if errors.As(err, &rle) && rle.RetryAfter > 0 {
			retry = rle.RetryAfter
		}
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(retry.Seconds()))))
		detail.RetryAfterSeconds = retry.Seconds()
	}
	writeJSON(w, StatusOf(code), api.ErrorBody{Error: detail})
}

func writeJSON(w http.ResponseWriter, status int, v any) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	// Commands and code travel in answers; "&&" stays "&&".
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func badRequest(format string, args ...any) error {
	return errdefs.Errorf(errdefs.InvalidRequest, format, args...)
}

// readBody reads a bounded body.
func readBody(r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, badRequest("request body is larger than %d bytes", maxBody)
		}
		return nil, badRequest("reading body: %v", err)
	}
	return b, nil
}

// decodeJSON strictly decodes a JSON body into v.
func decodeJSON(r *http.Request, v any) error {
	b, err := readBody(r)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return badRequest("request body is empty; want a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return badRequest("bad JSON body: %v", strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

// readDefinition reads a definition body, YAML or JSON.
func readDefinition(r *http.Request) (*catalog.Definition, error) {
	b, err := readBody(r)
	if err != nil {
		return nil, err
	}
	def, err := catalog.Parse(b)
	if err != nil {
		return nil, &errdefs.Error{Code: errdefs.InvalidDefinition, Err: err}
	}
	return def, nil
}

func intParam(r *http.Request, name string, def int) (int, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, badRequest("query parameter %s must be a non-negative integer, not %q", name, s)
	}
	return n, nil
}
