package daemon

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// metrics keeps the counters behind GET /v1/metrics (Prometheus text).
type metrics struct {
	mu    sync.Mutex
	calls map[[2]string]*callStat // (tool, outcome)
}

type callStat struct {
	count uint64
	sum   time.Duration
}

func newMetrics() *metrics {
	return &metrics{calls: map[[2]string]*callStat{}}
}

// ObserveCall counts one recorded call.
func (m *metrics) ObserveCall(tool, outcome string, d time.Duration) {
	m.mu.Lock()
	s := m.calls[[2]string{tool, outcome}]
	if s == nil {
		s = &callStat{}
		m.calls[[2]string{tool, outcome}] = s
	}
	s.count++
	s.sum += d
	m.mu.Unlock()
}

func promLabel(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}

func (d *Daemon) metricsHandler(w http.ResponseWriter, r *http.Request) error {
	var b strings.Builder
	d.metrics.mu.Lock()
	keys := make([][2]string, 0, len(d.metrics.calls))
	for k := range d.metrics.calls {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i][0]+keys[i][1] < keys[j][0]+keys[j][1] })
	b.WriteString("# HELP toolcage_calls_total Tool calls by tool and outcome.\n# TYPE toolcage_calls_total counter\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "toolcage_calls_total{tool=\"%s\",outcome=\"%s\"} %d\n", promLabel(k[0]), promLabel(k[1]), d.metrics.calls[k].count)
	}
	b.WriteString("# HELP toolcage_call_duration_seconds_sum Total time spent in calls.\n# TYPE toolcage_call_duration_seconds_sum counter\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "toolcage_call_duration_seconds_sum{tool=\"%s\",outcome=\"%s\"} %g\n", promLabel(k[0]), promLabel(k[1]), d.metrics.calls[k].sum.Seconds())
	}
	d.metrics.mu.Unlock()
	groups, started, retired := d.pool.Stats()
	sort.Slice(groups, func(i, j int) bool { return groups[i].Key.String() < groups[j].Key.String() })
	b.WriteString("# HELP toolcage_executors Executor processes by key and state.\n# TYPE toolcage_executors gauge\n")
	for _, g := range groups {
		fmt.Fprintf(&b, "toolcage_executors{key=\"%s\",state=\"idle\"} %d\n", promLabel(g.Key.String()), g.Idle)
		fmt.Fprintf(&b, "toolcage_executors{key=\"%s\",state=\"busy\"} %d\n", promLabel(g.Key.String()), g.Busy)
	}
	fmt.Fprintf(&b, "# HELP toolcage_executors_started_total Executor processes started.\n# TYPE toolcage_executors_started_total counter\ntoolcage_executors_started_total %d\n", started)
	fmt.Fprintf(&b, "# HELP toolcage_executors_retired_total Executor processes stopped or replaced.\n# TYPE toolcage_executors_retired_total counter\ntoolcage_executors_retired_total %d\n", retired)
	fmt.Fprintf(&b, "# HELP toolcage_uptime_seconds Seconds since the daemon started.\n# TYPE toolcage_uptime_seconds gauge\ntoolcage_uptime_seconds %g\n", time.Since(d.started).Seconds())
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	_, err := w.Write([]byte(b.String()))
	return err
}
