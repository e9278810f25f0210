// Command table turns `go test -bench` output into the table `make bench`
// prints: each benchmark's headline metric next to its target.
package main

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// target describes how one metric of one benchmark is judged.
type target struct {
	bench string // the benchmark's name without "Benchmark"
	label string
	unit  string // the metric to show
	goal  string
	ok    func(v float64) bool
}

// targets are the rows of the table, in this order; a benchmark may give
// several. A benchmark not listed gets one row of its ns/op, at the end.
var targets = []target{
	{"JSCallLatency", "JS tool call, warm, socket API (p50)", "p50-µs", "≤ 1000 µs", func(v float64) bool { return v <= 1000 }},
	{"JSCallSandbox", "JS tool call, sandboxed (p50)", "p50-µs", "—", nil},
	{"JSCallSandbox", "JS tool call, sandbox off (p50)", "nosandbox-p50-µs", "—", nil},
	{"JSCallSandbox", "JS tool call: added by the sandbox", "sandbox-added-%", "≤ 10 %", func(v float64) bool { return v <= 10 }},
	{"JSCallThroughputC1", "JS tool calls/s, concurrency 1", "calls/s", "—", nil},
	{"JSCallThroughputC16", "JS tool calls/s, concurrency 16", "calls/s", "≥ 3000", func(v float64) bool { return v >= 3000 }},
	{"MCPCall", "JS tool call, MCP over stdio via toolcage mcp (p50)", "p50-µs", "—", nil},
	{"MCPCall", "JS tool call, socket API, same worker token (p50)", "socket-p50-µs", "—", nil},
	{"MCPCall", "MCP over stdio − socket API (p50)", "mcp-added-ms", "≤ 0.5 ms", func(v float64) bool { return v <= 0.5 }},
	{"ShellCall", "shell tool call, sandboxed (p50)", "p50-µs", "—", nil},
	{"ShellCall", "shell tool call, sandbox off (p50)", "nosandbox-p50-µs", "—", nil},
	{"ShellCall", "sh -c from Go, direct (p50)", "direct-p50-µs", "—", nil},
	{"ShellCall", "shell tool call − direct sh -c (p50)", "vs-direct-ms", "≤ 2 ms", func(v float64) bool { return v <= 2 }},
	{"ShellCall", "shell tool call: added by the sandbox (p50)", "sandbox-added-ms", "≤ 1.5 ms", func(v float64) bool { return v <= 1.5 }},
	{"HTTPCall", "HTTP tool call, local server (p50)", "p50-µs", "—", nil},
	{"HTTPCall", "http.Get from Go, direct (p50)", "direct-p50-µs", "—", nil},
	{"HTTPCall", "HTTP tool call − direct http.Get (p50)", "vs-direct-ms", "≤ 0.5 ms", func(v float64) bool { return v <= 0.5 }},
	{"HTTPCall", "HTTP tool call with a secret, via the egress proxy (p50)", "egress-p50-µs", "—", nil},
	{"HTTPCall", "HTTP tool call: added by the egress proxy (p50)", "egress-added-ms", "—", nil},
	{"ShellRuleCheck", "shell deny rules, 100-byte command", "µs/check", "≤ 20 µs", func(v float64) bool { return v <= 20 }},
	{"URLGuardCheck", "URL guard check", "µs/check", "≤ 20 µs", func(v float64) bool { return v <= 20 }},
	{"ScrubClean", "scrubber throughput, clean text", "MB/s", "≥ 200 MB/s", func(v float64) bool { return v >= 200 }},
	{"ScrubCleanKnown", "scrubber throughput, clean text, call with 3 secrets", "MB/s", "—", nil},
	{"ScrubSecretLaden", "scrubber throughput, secret-laden text", "MB/s", "—", nil},
	{"PolicyOverhead", "all policy checks of one call (p50)", "p50-µs", "≤ 50 µs", func(v float64) bool { return v <= 50 }},
	{"ExecutorColdStart", "executor cold start (p50)", "p50-ms", "≤ 15 ms", func(v float64) bool { return v <= 15 }},
	{"SandboxedExecutorColdStart", "sandboxed executor cold start (p50)", "p50-ms", "≤ 15 ms", func(v float64) bool { return v <= 15 }},
	{"SandboxedExecutorColdStartIdmap", "idmapped workspace, added to a sandboxed cold start (p50 of paired rounds)", "idmap-ms", "≤ 1 ms", func(v float64) bool { return v <= 1 }},
	{"DockerCall", "JS tool call, docker isolation, warm (p50)", "p50-µs", "—", nil},
	{"DockerCall", "JS tool call, process isolation, same run (p50)", "process-p50-µs", "—", nil},
	{"DockerCall", "docker vs process call (p50 ratio)", "x-process", "≤ 2x", func(v float64) bool { return v <= 2 }},
	{"DockerHTTPEgress", "HTTP tool call with a secret, docker isolation, egress socket (p50)", "p50-µs", "—", nil},
	{"DockerHTTPEgress", "HTTP tool call with a secret, process isolation, same run (p50)", "process-p50-µs", "—", nil},
	{"DockerHTTPEgress", "docker vs process HTTP call with a secret (p50 ratio)", "x-process", "—", nil},
	{"DockerColdStart", "executor container cold start (p50)", "p50-ms", "—", nil},
	{"DockerColdStart", "docker run --rm of the image, anchor (p50)", "docker-run-p50-ms", "—", nil},
	{"DockerImageBuild", "executor image build", "s", "—", nil},
	{"DaemonIdleRSS", "daemon idle RSS", "MiB", "≤ 40 MiB", func(v float64) bool { return v <= 40 }},
	{"SandboxedExecutorIdleRSS", "sandboxed executor idle RSS, whole sandbox", "MiB", "≤ 20 MiB", func(v float64) bool { return v <= 20 }},
	{"SandboxedExecutorIdleRSS", "sandboxed executor idle RSS, executor alone", "executor-MiB", "≤ 20 MiB", func(v float64) bool { return v <= 20 }},
	{"SandboxedExecutorIdleRSS", "sandboxed executor idle PSS, whole sandbox", "pss-MiB", "—", nil},
}

var line = regexp.MustCompile(`^Benchmark(\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)

func main() {
	type row struct{ label, value, goal, verdict string }
	results := map[string]map[string]float64{} // benchmark → unit → value
	var order []string                         // benchmarks as they ran
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		fmt.Fprintln(os.Stderr, sc.Text())
		m := line.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		name := m[1]
		fields := strings.Fields(m[2])
		metrics := map[string]float64{}
		for i := 0; i+1 < len(fields); i += 2 {
			if v, err := strconv.ParseFloat(fields[i], 64); err == nil {
				metrics[fields[i+1]] = v
			}
		}
		if _, seen := results[name]; !seen {
			order = append(order, name)
		}
		results[name] = metrics
	}
	var rows []row
	add := func(t target) {
		v, ok := results[t.bench][t.unit]
		if !ok {
			return
		}
		verdict := ""
		if t.ok != nil {
			verdict = "met"
			if !t.ok(v) {
				verdict = "MISSED"
			}
		}
		rows = append(rows, row{t.label, fmt.Sprintf("%.4g %s", v, t.unit), t.goal, verdict})
	}
	known := map[string]bool{}
	for _, t := range targets {
		known[t.bench] = true
		add(t)
	}
	for _, name := range order {
		if !known[name] {
			add(target{bench: name, label: name, unit: "ns/op", goal: "—"})
		}
	}
	w := [4]int{len("benchmark"), len("measured"), len("target"), len("MISSED")}
	for _, r := range rows {
		for i, c := range []string{r.label, r.value, r.goal, r.verdict} {
			w[i] = max(w[i], utf8.RuneCountInString(c))
		}
	}
	cell := func(s string, n int) string { return s + strings.Repeat(" ", n-utf8.RuneCountInString(s)) }
	printRow := func(c ...string) {
		fmt.Printf("| %s | %s | %s | %s |\n", cell(c[0], w[0]), cell(c[1], w[1]), cell(c[2], w[2]), cell(c[3], w[3]))
	}
	fmt.Println()
	printRow("benchmark", "measured", "target", "")
	fmt.Printf("|%s|%s|%s|%s|\n", strings.Repeat("-", w[0]+2), strings.Repeat("-", w[1]+2), strings.Repeat("-", w[2]+2), strings.Repeat("-", w[3]+2))
	for _, r := range rows {
		printRow(r.label, r.value, r.goal, r.verdict)
	}
}
