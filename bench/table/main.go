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
)

// target describes how one benchmark is judged.
type target struct {
	label string
	unit  string // the metric to show
	goal  string
	ok    func(v float64) bool
}

var targets = map[string]target{
	"JSCallLatency":       {"JS tool call, warm, socket API (p50)", "p50-µs", "≤ 1000 µs", func(v float64) bool { return v <= 1000 }},
	"JSCallThroughputC1":  {"JS tool calls/s, concurrency 1", "calls/s", "—", nil},
	"JSCallThroughputC16": {"JS tool calls/s, concurrency 16", "calls/s", "≥ 3000", func(v float64) bool { return v >= 3000 }},
	"ExecutorColdStart":   {"executor cold start (p50)", "p50-ms", "≤ 15 ms", func(v float64) bool { return v <= 15 }},
	"DaemonIdleRSS":       {"daemon idle RSS", "MiB", "≤ 40 MiB", func(v float64) bool { return v <= 40 }},
}

var line = regexp.MustCompile(`^Benchmark(\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)

func main() {
	type row struct{ name, label, value, goal, verdict string }
	var rows []row
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
		t, known := targets[name]
		if !known {
			t = target{label: name, unit: "ns/op", goal: "—"}
		}
		v, ok := metrics[t.unit]
		if !ok {
			continue
		}
		verdict := ""
		if t.ok != nil {
			verdict = "met"
			if !t.ok(v) {
				verdict = "MISSED"
			}
		}
		rows = append(rows, row{name, t.label, fmt.Sprintf("%.4g %s", v, t.unit), t.goal, verdict})
	}
	fmt.Println()
	fmt.Printf("| %-44s | %-18s | %-12s | %-6s |\n", "benchmark", "measured", "target", "")
	fmt.Printf("|%s|%s|%s|%s|\n", strings.Repeat("-", 46), strings.Repeat("-", 20), strings.Repeat("-", 14), strings.Repeat("-", 8))
	for _, r := range rows {
		fmt.Printf("| %-44s | %-18s | %-12s | %-6s |\n", r.label, r.value, r.goal, r.verdict)
	}
}
