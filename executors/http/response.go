package httpexec

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"unicode/utf8"
)

// responseValue is the JSON shape of a response; see the package comment.
type responseValue struct {
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers"`
	Body    json.RawMessage   `json:"body"`
	// Truncated says the body was cut at the call's cap (TruncateBody).
	Truncated bool `json:"truncated,omitempty"`
}

var utf8BOM = []byte("\xef\xbb\xbf")

// encodeResponse builds the result value of a response with body data.
func encodeResponse(resp *http.Response, data []byte, truncated bool) (json.RawMessage, error) {
	v := responseValue{
		Truncated: truncated,
		Status:    resp.StatusCode,
		Headers:   make(map[string]string, len(resp.Header)),
	}
	for k, vs := range resp.Header {
		v.Headers[strings.ToLower(k)] = strings.Join(vs, ", ")
	}
	body, err := bodyValue(data)
	if err != nil {
		return nil, err
	}
	v.Body = body
	return marshal(v)
}

// bodyValue is the "body" member: the JSON itself, {"data": text} or
// {"data_base64": ...}.
func bodyValue(data []byte) (json.RawMessage, error) {
	if j := bytes.TrimPrefix(data, utf8BOM); jsonValid(j) {
		return json.RawMessage(j), nil
	}
	if utf8.Valid(data) && bytes.IndexByte(data, 0) < 0 {
		return marshal(struct {
			Data string `json:"data"`
		}{string(data)})
	}
	return marshal(struct {
		Data string `json:"data_base64"`
	}{base64.StdEncoding.EncodeToString(data)})
}

// jsonValid reports whether b is one JSON value (and not just whitespace).
func jsonValid(b []byte) bool {
	return len(bytes.TrimSpace(b)) > 0 && json.Valid(b)
}

// marshal encodes v without HTML escaping (the value is data, not markup)
// and without the encoder's trailing newline.
func marshal(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
