package daemon

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/policy"
)

func TestRateLimitsUnderConcurrentLoad(t *testing.T) {
	td := startDaemon(t, "", func(c *Config) {
		c.RateLimits.PerTool = policy.RateLimit{Rate: 0.001, Burst: 20}
		c.RateLimits.ToolConcurrency = map[string]int{"slow": 1}
	})
	c := td.client
	create(t, c, jsTool)
	var ok, limited, other atomic.Int32
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				_, err := callTool(c, "adder", map[string]any{"a": 1, "b": 2})
				switch codeOf(err) {
				case "":
					ok.Add(1)
				case errdefs.RateLimited:
					limited.Add(1)
					if ae := apiErr(t, err); ae.RetryAfterSeconds <= 0 {
						t.Errorf("no retry hint: %+v", ae)
					}
				default:
					other.Add(1)
					t.Errorf("unexpected: %v", err)
				}
			}
		}()
	}
	wg.Wait()
	if ok.Load() != 20 || limited.Load() != 60 || other.Load() != 0 {
		t.Fatalf("ok %d, rate limited %d, other %d; want 20, 60, 0", ok.Load(), limited.Load(), other.Load())
	}
	// Refusals are recorded, and ran nothing (not counted as uses).
	var ex api.ExecutionList
	if err := c.Do(context.Background(), "GET", "/v1/executions?tool=adder&limit=200", nil, &ex); err != nil {
		t.Fatal(err)
	}
	refused := 0
	for _, e := range ex.Executions {
		if e.Outcome == "refused" && e.ErrorCode == "rate_limited" {
			refused++
		}
	}
	var tool api.Tool
	if err := c.Do(context.Background(), "GET", "/v1/tools/adder", nil, &tool); err != nil {
		t.Fatal(err)
	}
	if refused != 60 || tool.UsageCount != 20 {
		t.Fatalf("audit: %d refused records, usage %d; want 60, 20", refused, tool.UsageCount)
	}

	// A concurrency cap of one: a second call while one runs is refused.
	create(t, c, "name: slow\ndescription: slow\nkind: js\njs: {code: 'const e = Date.now() + 600; while (Date.now() < e) {} return 1'}")
	errs := make(chan error, 2)
	for range 2 {
		go func() { _, err := callTool(c, "slow", nil); errs <- err }()
	}
	first, second := <-errs, <-errs
	if codeOf(first) == errdefs.RateLimited {
		first, second = second, first
	}
	if first != nil || codeOf(second) != errdefs.RateLimited {
		t.Fatalf("two concurrent calls under a cap of one: %v and %v", first, second)
	}
}
