package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/toolcage/toolcage/store"
)

// metrics is the daemon's Prometheus registry (one per daemon, never the
// global default) and the instruments dispatch reports to.
//
// Label cardinality is bounded: tool names by the catalog (dry runs of
// unsaved definitions are all counted as "test:"), kinds and outcomes by
// their fixed sets, executor keys by kinds × isolations × permission sets.
type metrics struct {
	reg        *prometheus.Registry
	calls      *prometheus.CounterVec
	duration   *prometheus.HistogramVec
	redactions *prometheus.CounterVec
	// auditPruned counts audit records retention deleted.
	auditPruned prometheus.Counter
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolcage_calls_total", Help: "Tool calls recorded, by tool, kind and outcome.",
		}, []string{"tool", "kind", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "toolcage_call_duration_seconds", Help: "Time from a call's arrival to its record, by kind and outcome.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"kind", "outcome"}),
		redactions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolcage_redactions_total", Help: "Redaction markers scrubbing put into call results, by tool.",
		}, []string{"tool"}),
		auditPruned: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "toolcage_audit_pruned_total", Help: "Audit records (calls and admin acts) deleted by audit.retention.",
		}),
	}
	m.reg.MustRegister(m.calls, m.duration, m.redactions, m.auditPruned,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// metricTool keeps dry runs ("test:<any name>") from adding a series each.
func metricTool(tool string) string {
	if strings.HasPrefix(tool, "test:") {
		return "test:"
	}
	return tool
}

// ObserveCall counts one recorded call (dispatch.Metrics).
func (m *metrics) ObserveCall(tool, kind, outcome string, d time.Duration) {
	if kind == "" {
		kind = "unknown"
	}
	m.calls.WithLabelValues(metricTool(tool), kind, outcome).Inc()
	m.duration.WithLabelValues(kind, outcome).Observe(d.Seconds())
}

// ObserveRedactions counts what scrubbing took out of one result
// (dispatch.Metrics).
func (m *metrics) ObserveRedactions(tool string, n int) {
	m.redactions.WithLabelValues(metricTool(tool)).Add(float64(n))
}

// stateCollector reads the pool, the sandbox runner and the store at
// scrape time, so nothing is kept twice.
type stateCollector struct {
	d *Daemon

	executors, started, retired, replaced, sandboxes, pending, uptime *prometheus.Desc
}

func newStateCollector(d *Daemon) *stateCollector {
	return &stateCollector{d: d,
		executors: prometheus.NewDesc("toolcage_executors", "Executor processes by key and state.", []string{"key", "state"}, nil),
		started:   prometheus.NewDesc("toolcage_executors_started_total", "Executor processes started.", nil, nil),
		retired:   prometheus.NewDesc("toolcage_executors_retired_total", "Executor processes stopped: idle, dead, unfit or at shutdown.", nil, nil),
		replaced:  prometheus.NewDesc("toolcage_executors_replaced_total", "Executors retired because a call left them unfit (crash, timeout, broken limit), each replaced by a fresh one.", nil, nil),
		sandboxes: prometheus.NewDesc("toolcage_sandboxes_started_total", "Executor sandboxes started (0 when the sandbox is disabled).", nil, nil),
		pending:   prometheus.NewDesc("toolcage_approvals_pending", "Approvals waiting for a decision.", nil, nil),
		uptime:    prometheus.NewDesc("toolcage_uptime_seconds", "Seconds since the daemon started.", nil, nil),
	}
}

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.executors, c.started, c.retired, c.replaced, c.sandboxes, c.pending, c.uptime} {
		ch <- d
	}
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	d := c.d
	groups, _, _ := d.pool.Stats()
	for _, g := range groups {
		ch <- prometheus.MustNewConstMetric(c.executors, prometheus.GaugeValue, float64(g.Idle), g.Key.String(), "idle")
		ch <- prometheus.MustNewConstMetric(c.executors, prometheus.GaugeValue, float64(g.Busy), g.Key.String(), "busy")
	}
	n := d.pool.Counts()
	ch <- prometheus.MustNewConstMetric(c.started, prometheus.CounterValue, float64(n.Started))
	ch <- prometheus.MustNewConstMetric(c.retired, prometheus.CounterValue, float64(n.Retired))
	ch <- prometheus.MustNewConstMetric(c.replaced, prometheus.CounterValue, float64(n.Replaced))
	var sb int64
	if d.sandbox != nil {
		sb = d.sandbox.Starts()
	}
	ch <- prometheus.MustNewConstMetric(c.sandboxes, prometheus.CounterValue, float64(sb))
	// Collect has no context; a scrape must not hang on a busy database.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if p, err := d.store.ListApprovals(ctx, store.ApprovalPending); err != nil {
		ch <- prometheus.NewInvalidMetric(c.pending, fmt.Errorf("listing approvals: %w", err))
	} else {
		ch <- prometheus.MustNewConstMetric(c.pending, prometheus.GaugeValue, float64(len(p)))
	}
	ch <- prometheus.MustNewConstMetric(c.uptime, prometheus.GaugeValue, time.Since(d.started).Seconds())
}

// metricsHTTP serves the registry in the Prometheus exposition format.
func (d *Daemon) metricsHTTP() http.Handler {
	return promhttp.HandlerFor(d.metrics.reg, promhttp.HandlerOpts{
		ErrorLog: slog.NewLogLogger(d.log.Handler(), slog.LevelWarn), ErrorHandling: promhttp.ContinueOnError,
	})
}

// metricsServer serves only GET /metrics, with timeouts, for Prometheus
// to scrape over loopback TCP.
func (d *Daemon) metricsServer() *http.Server {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", d.metricsHTTP())
	return &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       60 * time.Second,
		ErrorLog:          slog.NewLogLogger(d.log.Handler(), slog.LevelWarn),
	}
}
