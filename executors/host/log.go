package host

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
)

// hclogAdapter carries go-plugin's hclog output, including every line the
// executor writes to stderr, into the daemon's slog logger.
type hclogAdapter struct {
	log *slog.Logger
}

func (a *hclogAdapter) logger() hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{
		Name:       "executor",
		Output:     a,
		Level:      hclog.Warn,
		JSONFormat: true,
	})
}

// Write takes one hclog JSON line and logs it at its level.
func (a *hclogAdapter) Write(b []byte) (int, error) {
	n := len(b)
	var m map[string]any
	if err := json.Unmarshal(bytes.TrimSpace(b), &m); err != nil {
		a.log.Info(strings.TrimSpace(string(b)))
		return n, nil
	}
	msg, _ := m["@message"].(string)
	lvl, _ := m["@level"].(string)
	attrs := make([]any, 0, 2*len(m))
	for k, v := range m {
		if !strings.HasPrefix(k, "@") {
			attrs = append(attrs, k, v)
		}
	}
	a.log.Log(context.Background(), slogLevel(lvl), msg, attrs...)
	return n, nil
}

// stderrWriter logs each line an executor writes to its stderr. go-plugin
// hands it the raw bytes, line and newline in separate writes, so it keeps
// the partial line until the newline arrives. One per executor process.
type stderrWriter struct {
	log *slog.Logger
	mu  sync.Mutex
	buf []byte
}

func (w *stderrWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, b...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.logLine(w.buf[:i])
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) > 64<<10 {
		w.logLine(w.buf)
		w.buf = w.buf[:0]
	}
	return len(b), nil
}

// logLine logs one line: hclog JSON (go-plugin's own output in the
// executor) at its level, anything else at info.
func (w *stderrWriter) logLine(b []byte) {
	line := bytes.TrimSpace(b)
	if len(line) == 0 {
		return
	}
	if line[0] == '{' {
		var m map[string]any
		if json.Unmarshal(line, &m) == nil {
			if msg, ok := m["@message"].(string); ok {
				lvl, _ := m["@level"].(string)
				w.log.Log(context.Background(), slogLevel(lvl), msg)
				return
			}
		}
	}
	w.log.Info("executor stderr", "line", string(line))
}

func slogLevel(hclogLevel string) slog.Level {
	switch hclogLevel {
	case "trace", "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	}
	return slog.LevelInfo
}
