package dispatch

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
	"github.com/toolcage/toolcage/policy/scrub"
)

// scrubJSON scrubs credentials out of a JSON document. Scrubbing the text
// whole lets rules see a key beside its value ("password": "…"); if that
// ever left the JSON invalid, each string is scrubbed on its own instead.
func scrubJSON(s *scrub.Scrubber, raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return raw
	}
	out := s.ScrubBytes(raw)
	if bytes.Equal(out, raw) || json.Valid(out) {
		return out
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return json.RawMessage(`"[REDACTED:unparseable]"`)
	}
	b, err := json.Marshal(scrubValue(s, v))
	if err != nil {
		return json.RawMessage(`"[REDACTED:unparseable]"`)
	}
	if again := s.ScrubBytes(b); !bytes.Equal(again, b) {
		// What was found spans the document's structure, not one string
		// (a secret as an array of its bytes' values): the value becomes
		// its scrubbed text, as a string.
		q, _ := json.Marshal(string(out))
		return q
	}
	return b
}

func scrubValue(s *scrub.Scrubber, v any) any {
	switch t := v.(type) {
	case string:
		return s.Scrub(t)
	case []any:
		for i := range t {
			t[i] = scrubValue(s, t[i])
		}
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[s.Scrub(k)] = scrubValue(s, e)
		}
		return m
	}
	return v
}

// scrubResult scrubs everything a call returns: value, logs, error text.
// It returns how many redaction markers scrubbing added.
func scrubResult(s *scrub.Scrubber, r *executors.Result) int {
	n := -markers(r)
	r.Value = scrubJSON(s, r.Value)
	r.Error = s.Scrub(r.Error)
	for i := range r.Logs {
		r.Logs[i].Message = s.Scrub(r.Logs[i].Message)
	}
	scrubAcross(s, r)
	return n + markers(r)
}

// scrubAcross redacts a known value split across the parts of a result
// a reader sees one after the other: the log lines in order, then the
// value's strings (a shell tool's stdout and stderr), then the error.
func scrubAcross(s *scrub.Scrubber, r *executors.Result) {
	parts := make([]scrub.Part, 0, len(r.Logs)+2)
	for _, l := range r.Logs {
		parts = append(parts, scrub.Part{Text: l.Message})
	}
	parts = append(parts, scrub.Part{Text: string(r.Value), JSON: true}, scrub.Part{Text: r.Error})
	out := s.ScrubAcross(parts)
	for i := range r.Logs {
		r.Logs[i].Message = out[i]
	}
	if v := out[len(r.Logs)]; v != string(r.Value) {
		r.Value = json.RawMessage(v)
		if !json.Valid(r.Value) {
			r.Value = json.RawMessage(`"[REDACTED:unparseable]"`)
		}
	}
	r.Error = out[len(r.Logs)+1]
}

// redactedPrefix starts every marker package scrub writes.
const redactedPrefix = "[REDACTED:"

// markers counts the redaction markers in a result. Counting them before
// and after scrubbing keeps markers a tool printed itself out of the count.
func markers(r *executors.Result) int {
	n := bytes.Count(r.Value, []byte(redactedPrefix)) + strings.Count(r.Error, redactedPrefix)
	for _, l := range r.Logs {
		n += strings.Count(l.Message, redactedPrefix)
	}
	return n
}

// scrubError keeps err's code and limit and scrubs its message.
func scrubError(s *scrub.Scrubber, err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean := s.Scrub(msg)
	if clean == msg {
		return err
	}
	return &errdefs.Error{Code: errdefs.CodeOf(err), Limit: errdefs.LimitOf(err), Err: errors.New(clean)}
}
