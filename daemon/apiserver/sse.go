package apiserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// Server-sent events on the socket API: a stream stays open until the
// client goes, the daemon stops, or the client falls so far behind that
// its subscription is dropped (an overflow event says so). A comment line
// every keepAlive lets both ends notice a dead peer.

// keepAlive is how often an idle stream sends a comment line.
const keepAlive = 15 * time.Second

// sseWriter writes events to one client and flushes each.
type sseWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

// startSSE sends the stream's headers.
func startSSE(w http.ResponseWriter) (*sseWriter, error) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	s := &sseWriter{w: w, rc: http.NewResponseController(w)}
	return s, s.rc.Flush()
}

// event sends one event whose data is v as one line of JSON.
func (s *sseWriter) event(name, id string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if id != "" {
		_, err = fmt.Fprintf(s.w, "event: %s\nid: %s\ndata: %s\n\n", name, id, b)
	} else {
		_, err = fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", name, b)
	}
	if err != nil {
		return err
	}
	return s.rc.Flush()
}

// ping sends a comment line.
func (s *sseWriter) ping() error {
	if _, err := fmt.Fprint(s.w, ": keep-alive\n\n"); err != nil {
		return err
	}
	return s.rc.Flush()
}
