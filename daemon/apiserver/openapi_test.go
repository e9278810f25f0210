package apiserver

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/toolcage/toolcage/errdefs"
)

// openAPIMethods are the operation keys of an OpenAPI path item.
var openAPIMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// wildcardRE matches a path parameter: {name} in both the document and
// ServeMux patterns ({name...} in the latter).
var wildcardRE = regexp.MustCompile(`\{[^}]*\}`)

// normalRoute turns "GET /v1/tools/{name}" into "GET /v1/tools/{}".
func normalRoute(method, path string) string {
	return strings.ToUpper(method) + " " + wildcardRE.ReplaceAllString(path, "{}")
}

func loadOpenAPI(t *testing.T) map[string]any {
	t.Helper()
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(openAPIDoc))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("openapi.json is not valid JSON: %v", err)
	}
	return doc
}

// documentedRoutes lists every operation of doc as a normalised route.
func documentedRoutes(t *testing.T, doc map[string]any) []string {
	t.Helper()
	paths, ok := doc["paths"].(map[string]any)
	if !ok {
		t.Fatal("openapi.json has no paths object")
	}
	var out []string
	for p, item := range paths {
		ops, ok := item.(map[string]any)
		if !ok {
			t.Fatalf("path %s is not an object", p)
		}
		for m := range ops {
			if slices.Contains(openAPIMethods, m) {
				out = append(out, normalRoute(m, p))
			}
		}
	}
	slices.Sort(out)
	return out
}

func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	var served []string
	for _, rt := range (&Server{}).routeTable() {
		method, path, ok := strings.Cut(rt.pattern, " ")
		if !ok {
			t.Fatalf("route %q has no method", rt.pattern)
		}
		served = append(served, normalRoute(method, path))
	}
	slices.Sort(served)
	documented := documentedRoutes(t, loadOpenAPI(t))
	for _, r := range served {
		if _, found := slices.BinarySearch(documented, r); !found {
			t.Errorf("route %s is served but not in openapi.json", r)
		}
	}
	for _, r := range documented {
		if _, found := slices.BinarySearch(served, r); !found {
			t.Errorf("openapi.json documents %s, which no route serves", r)
		}
	}
	if len(served) != len(slices.Compact(slices.Clone(served))) {
		t.Errorf("the route table repeats a route: %v", served)
	}
}

func TestOpenAPIDocument(t *testing.T) {
	doc := loadOpenAPI(t)
	if v, _ := doc["openapi"].(string); !regexp.MustCompile(`^3\.1\.\d+$`).MatchString(v) {
		t.Errorf("openapi = %q, want 3.1.x", v)
	}

	// Every $ref points at something in the document.
	var refs []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if r, ok := v["$ref"].(string); ok {
				refs = append(refs, r)
			}
			for _, c := range v {
				walk(c)
			}
		case []any:
			for _, c := range v {
				walk(c)
			}
		}
	}
	walk(doc)
	if len(refs) == 0 {
		t.Fatal("openapi.json has no $ref at all")
	}
	for _, r := range refs {
		if !strings.HasPrefix(r, "#/") {
			t.Errorf("$ref %q is not local", r)
			continue
		}
		var cur any = doc
		for _, part := range strings.Split(r[2:], "/") {
			part = strings.NewReplacer("~1", "/", "~0", "~").Replace(part)
			m, ok := cur.(map[string]any)
			if !ok {
				cur = nil
				break
			}
			cur = m[part]
		}
		if cur == nil {
			t.Errorf("$ref %q does not resolve", r)
		}
	}

	// The ErrorCode enum is exactly errdefs' stable codes.
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	var enum []string
	for _, c := range schemas["ErrorCode"].(map[string]any)["enum"].([]any) {
		enum = append(enum, c.(string))
	}
	for _, c := range errdefs.Codes {
		if !slices.Contains(enum, string(c)) {
			t.Errorf("errdefs code %s is not in the ErrorCode enum", c)
		}
	}
	for _, c := range enum {
		if !slices.Contains(errdefs.Codes, errdefs.Code(c)) {
			t.Errorf("ErrorCode enum has %s, which errdefs does not define", c)
		}
	}
	// Each shared error response names its codes, and they map to its status.
	responses := doc["components"].(map[string]any)["responses"].(map[string]any)
	for status, name := range map[int]string{400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound",
		409: "Conflict", 422: "LimitExceeded", 429: "RateLimited", 500: "Internal", 502: "ExecutorFailed",
		503: "Unavailable", 504: "Timeout"} {
		resp, ok := responses[name].(map[string]any)
		if !ok {
			t.Errorf("components.responses has no %s", name)
			continue
		}
		desc, _ := resp["description"].(string)
		for _, c := range errdefs.Codes {
			if StatusOf(c) == status && !strings.Contains(desc, string(c)) {
				t.Errorf("response %s (%d) does not name code %s", name, status, c)
			}
		}
	}
}

// TestOpenAPISchema validates the document against the OpenAPI 3.1 schema
// (testdata/openapi-3.1-schema.json, from OAI/OpenAPI-Specification
// src/schemas/validation/schema.yaml on branch v3.1-dev, as JSON).
func TestOpenAPISchema(t *testing.T) {
	f, err := os.Open("testdata/openapi-3.1-schema.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	meta, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	const url = "https://spec.openapis.org/oas/3.1/schema/WORK-IN-PROGRESS"
	if err := c.AddResource(url, meta); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(openAPIDoc))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("openapi.json is not a valid OpenAPI 3.1 document: %v", err)
	}
	// The validator must catch a broken document, or this test proves nothing.
	var broken map[string]any
	if err := json.Unmarshal(openAPIDoc, &broken); err != nil {
		t.Fatal(err)
	}
	broken["paths"].(map[string]any)["/v1/health"].(map[string]any)["get"].(map[string]any)["responses"] = "none"
	if err := sch.Validate(broken); err == nil {
		t.Error("a document whose responses is a string passed the schema")
	}
}
