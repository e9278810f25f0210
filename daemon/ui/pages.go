package ui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/internal/termsafe"
	"github.com/toolcage/toolcage/principal"
)

// The pages. Each is the layout plus one file defining "title" and
// "live" (the part the poller refreshes) and, for the audit log,
// "filters". A page is rendered whole, or only its "live" part when the
// poller asks (fragmentHeader).

// pageNames are the templates/ files, each a page.
var pageNames = []string{"approvals", "tools", "audit", "workers", "login", "message"}

var funcs = template.FuncMap{
	"when": func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.Local().Format("2006-01-02 15:04:05")
	},
	"whenp": func(t *time.Time) string {
		if t == nil || t.IsZero() {
			return "-"
		}
		return t.Local().Format("2006-01-02 15:04:05")
	},
	"what":   parseWhat,
	"change": fileChange,
	"args":   prettyJSON,
	"yaml":   definitionYAML,
	"ms": func(f float64) string {
		if f < 10 {
			return strconv.FormatFloat(f, 'f', 1, 64)
		}
		return strconv.FormatFloat(f, 'f', 0, 64)
	},
	"describe": describe,
}

func parsePages() (map[string]*template.Template, error) {
	layout, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html")
	if err != nil {
		return nil, fmt.Errorf("ui: templates: %w", err)
	}
	pages := make(map[string]*template.Template, len(pageNames))
	for _, name := range pageNames {
		t, err := template.Must(layout.Clone()).ParseFS(templateFS, "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("ui: templates: %w", err)
		}
		pages[name] = t
	}
	return pages, nil
}

// toolSummary is what the tools page shows above a definition.
type toolSummary struct{ Kind, Description, Approval, Isolation string }

func describe(def json.RawMessage) toolSummary {
	var d toolSummary
	_ = json.Unmarshal(def, &d)
	return d
}

// prettyJSON indents a call's (already scrubbed) arguments, within the
// bounds of what a page shows (shown.go).
func prettyJSON(v json.RawMessage) string {
	if len(v) == 0 {
		return "{}"
	}
	return indented(v, maxShownArgs)
}

// view is what every page template gets.
type view struct {
	Page     string // approvals, tools, audit, workers, login, message
	Nonce    string
	CSRF     string
	Person   string
	Session  string
	Flash    string
	FlashErr bool
	PollMS   int64
	Data     any
}

// render writes page name with data: the whole page, or its live part
// for the poller.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, name string, data any) {
	v := view{Page: name, Nonce: nonceOf(r.Context()), PollMS: s.cfg.Poll.Milliseconds(), Data: data}
	if rs, ok := sessionOf(r.Context()); ok && name != "login" {
		v.CSRF, v.Person, v.Session = rs.csrf, rs.person, rs.label
		if !isFragment(r) {
			v.Flash, v.FlashErr = s.sess.takeFlash(rs.cookie)
		}
	}
	tmpl := "layout.html"
	if isFragment(r) && name != "login" && name != "message" {
		tmpl = "live"
	}
	var b bytes.Buffer
	if err := s.pages[name].ExecuteTemplate(&b, tmpl, v); err != nil {
		s.log.Error("review page: rendering", "page", name, "err", err)
		http.Error(w, "internal error rendering the page", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	// html/template escapes markup, not what a browser obeys in text:
	// bidirectional overrides that show a command in another order than
	// it runs, zero-width and control characters. Every one on the page
	// is agent text (our templates hold none), shown as an escape.
	_, _ = io.WriteString(w, termsafe.Text(b.String()))
}

// message shows a page with a title and a sentence.
func (s *Server) message(w http.ResponseWriter, r *http.Request, status int, title, text string) {
	s.render(w, r, status, "message", struct{ Title, Text string }{title, text})
}

// loginPage tells how to log in (after note, if any).
func (s *Server) loginPage(w http.ResponseWriter, r *http.Request, status int, note string) {
	s.render(w, r, status, "login", struct{ Note string }{note})
}

// failed shows err from the backend: what the socket API would have said.
func (s *Server) failed(w http.ResponseWriter, r *http.Request, err error) {
	s.log.Error("review page: reading the daemon's state", "path", r.URL.Path, "err", err)
	s.message(w, r, http.StatusInternalServerError, "Something went wrong", err.Error())
}

// person is the caller an action of the session is recorded as.
func person(rs reqSession) principal.Caller {
	return principal.Caller{Type: principal.TypeUser, ID: rs.person, Session: rs.label}
}

// approvalsData is the approvals page.
type approvalsData struct {
	Pending []api.Approval
	// Recent are the latest decided approvals, newest first.
	Recent []api.Approval
}

// recentApprovals bounds the decided approvals shown under the pending.
const recentApprovals = 10

func (s *Server) approvals(w http.ResponseWriter, r *http.Request) {
	var d approvalsData
	var err error
	if d.Pending, err = s.be.PendingApprovals(r.Context()); err == nil {
		d.Recent, err = s.be.RecentApprovals(r.Context(), recentApprovals)
	}
	if err != nil {
		s.failed(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "approvals", d)
}

func (s *Server) decideApproval(allow bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rs, _ := sessionOf(r.Context())
		always := allow && r.PostForm.Get("always") == "1"
		a, err := s.be.DecideApproval(r.Context(), r.PathValue("id"), allow, always, person(rs))
		switch {
		case err != nil:
			s.sess.setFlash(rs.cookie, "Approval "+r.PathValue("id")+": "+err.Error(), true)
		case always:
			s.sess.setFlash(rs.cookie, fmt.Sprintf("Allowed %s (%s v%d), and the same call from now on.", a.ID, a.Tool, a.Version), false)
		case allow:
			s.sess.setFlash(rs.cookie, fmt.Sprintf("Allowed %s (%s v%d).", a.ID, a.Tool, a.Version), false)
		default:
			s.sess.setFlash(rs.cookie, fmt.Sprintf("Denied %s (%s v%d).", a.ID, a.Tool, a.Version), false)
		}
		http.Redirect(w, r, "/approvals", http.StatusSeeOther)
	}
}

// pendingTool is one tool on the tools page.
type pendingTool struct {
	PendingTool
	Name       string
	Definition string // YAML
	Diff       []DiffLine
	// Change says what the diff is against.
	Change string
}

func (s *Server) tools(w http.ResponseWriter, r *http.Request) {
	list, err := s.be.PendingTools(r.Context())
	if err != nil {
		s.failed(w, r, err)
		return
	}
	out := make([]pendingTool, 0, len(list))
	for _, p := range list {
		var def struct{ Name string }
		_ = json.Unmarshal(p.Tool.Definition, &def)
		pt := pendingTool{PendingTool: p, Name: def.Name, Definition: definitionYAML(p.Tool.Definition)}
		switch {
		case p.Approved != nil:
			pt.Diff = definitionDiff(p.Approved, p.Tool.Definition,
				fmt.Sprintf("version %d (approved)", p.Tool.ApprovedVersion), fmt.Sprintf("version %d (pending)", p.Tool.Version))
			pt.Change = fmt.Sprintf("Changes since version %d, the last one a person approved:", p.Tool.ApprovedVersion)
			if pt.Diff == nil {
				pt.Change = fmt.Sprintf("The definition is the same as version %d, the last one approved.", p.Tool.ApprovedVersion)
			}
		case p.Tool.ApprovedVersion > 0:
			pt.Change = fmt.Sprintf("Version %d, the last one approved, is no longer kept: read the whole definition.", p.Tool.ApprovedVersion)
		default:
			pt.Change = "No version of this tool was approved yet: the whole definition is what approving lets run."
		}
		out = append(out, pt)
	}
	s.render(w, r, http.StatusOK, "tools", out)
}

func (s *Server) decideTool(approve bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rs, _ := sessionOf(r.Context())
		name := r.PathValue("name")
		t, err := s.be.DecideTool(r.Context(), name, approve, person(rs))
		switch {
		case err != nil:
			s.sess.setFlash(rs.cookie, "Tool "+name+": "+err.Error(), true)
		case approve:
			s.sess.setFlash(rs.cookie, fmt.Sprintf("Approved %s version %d: it is %s.", name, t.Version, t.Status), false)
		default:
			s.sess.setFlash(rs.cookie, fmt.Sprintf("Rejected %s version %d.", name, t.Version), false)
		}
		http.Redirect(w, r, "/tools", http.StatusSeeOther)
	}
}

// Audit log limits.
const (
	defaultAuditLimit = 100
	maxAuditLimit     = 1000
	// maxFilterField bounds a text filter.
	maxFilterField = 256
)

// outcomes are the audit log's outcomes, as the filter offers them.
var outcomes = []string{"ok", "error", "failed", "refused"}

// auditData is the audit page: the filter as typed and the entries.
type auditData struct {
	Q        url.Values
	Outcomes []string
	Error    string
	Entries  []api.Execution
	Limit    int
}

// dateLayouts are the forms since and until take besides a duration: a
// browser's datetime-local (the daemon's local time) and RFC 3339.
var dateLayouts = []string{"2006-01-02T15:04", "2006-01-02T15:04:05", "2006-01-02"}

// parseWhen reads a time filter: what the CLI's audit filters take
// (api.ParseTime: a duration before now, or RFC 3339), or a local date and
// time as a browser's datetime-local input sends it.
func parseWhen(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := api.ParseTime(s, now); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d < 0 {
		return time.Time{}, fmt.Errorf("%q: a duration counts back from now; give it without a sign", s)
	}
	for _, l := range dateLayouts {
		if t, err := time.ParseInLocation(l, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a time: give a duration like 1h (that long ago), 2006-01-02T15:04 or RFC 3339", s)
}

// parseAuditFilter reads the audit page's query.
func parseAuditFilter(q url.Values, now time.Time) (AuditFilter, error) {
	f := AuditFilter{Tool: strings.TrimSpace(q.Get("tool")), Caller: strings.TrimSpace(q.Get("caller")),
		Worker: strings.TrimSpace(q.Get("worker")), Outcome: q.Get("outcome"), Limit: defaultAuditLimit}
	for name, v := range map[string]string{"tool": f.Tool, "caller": f.Caller, "worker": f.Worker} {
		if len(v) > maxFilterField {
			return f, fmt.Errorf("%s: at most %d characters", name, maxFilterField)
		}
	}
	if f.Outcome != "" && !slices.Contains(outcomes, f.Outcome) {
		return f, fmt.Errorf("outcome must be one of %s, not %q", strings.Join(outcomes, ", "), f.Outcome)
	}
	var err error
	if f.Since, err = parseWhen(q.Get("since"), now); err != nil {
		return f, fmt.Errorf("since: %w", err)
	}
	if f.Until, err = parseWhen(q.Get("until"), now); err != nil {
		return f, fmt.Errorf("until: %w", err)
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Since.Before(f.Until) {
		return f, errors.New("since must be before until")
	}
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > maxAuditLimit {
			return f, fmt.Errorf("limit must be a number from 1 to %d, not %q", maxAuditLimit, l)
		}
		f.Limit = n
	}
	return f, nil
}

func (s *Server) audit(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	d := auditData{Q: q, Outcomes: outcomes}
	f, err := parseAuditFilter(q, s.cfg.Now())
	if err != nil {
		d.Error = err.Error()
		s.render(w, r, http.StatusBadRequest, "audit", d)
		return
	}
	d.Limit = f.Limit
	if d.Entries, err = s.be.Executions(r.Context(), f); err != nil {
		if errdefs.CodeOf(err) == errdefs.InvalidRequest {
			d.Error = err.Error()
			s.render(w, r, http.StatusBadRequest, "audit", d)
			return
		}
		s.failed(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "audit", d)
}

func (s *Server) workers(w http.ResponseWriter, r *http.Request) {
	list, err := s.be.Workers(r.Context())
	if err != nil {
		s.failed(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "workers", list)
}
