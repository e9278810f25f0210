package main

import (
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"regexp"
	"strings"
	"testing"

	"github.com/toolcage/toolcage/daemon"
)

func TestUIOpen(t *testing.T) {
	off := startDaemon(t)
	r := tc(t, off, "ui", "open")
	if r.code != exitFailure || !strings.Contains(r.err, "ui.listen") {
		t.Errorf("ui open with the page off:\n%s", r)
	}
	on := launchDaemon(t, func(c *daemon.Config) { c.UI.Listen = "127.0.0.1:0" }).socket
	r = mustOK(t, on, "ui", "open")
	link := regexp.MustCompile(`http://127\.0\.0\.1:\d+/login\?token=[A-Za-z0-9_-]{43}`).FindString(r.out)
	if link == "" || !strings.Contains(r.out, "it works once") {
		t.Fatalf("ui open:\n%s", r)
	}
	// The link logs a browser in, once.
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar}
	resp, err := hc.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/approvals" {
		t.Fatalf("following the link: %d at %s", resp.StatusCode, resp.Request.URL)
	}
	if resp, err := http.Get(link); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the link a second time: %v %v", resp, err)
	}
	var out struct {
		URL       string `json:"url"`
		ExpiresAt string `json:"expires_at"`
	}
	r = mustOK(t, on, "ui", "open", "--json")
	if err := json.Unmarshal([]byte(r.out), &out); err != nil || !strings.Contains(out.URL, "/login?token=") || out.ExpiresAt == "" {
		t.Errorf("ui open --json: %v\n%s", err, r)
	}
	// An agent gets no link.
	if r := tc(t, on, "--caller-type", "llm", "ui", "open"); r.code != exitRefused || !strings.Contains(r.err, "only a person") {
		t.Errorf("ui open as llm:\n%s", r)
	}
}
