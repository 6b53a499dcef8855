package api_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/go-chi/chi/v5"

	"github.com/secexec/secexec/internal/api"
)

var (
	docOnce   sync.Once
	docRouter routers.Router
	docErr    error
)

// loadDoc loads and validates openapi.json once.
func loadDoc(t testing.TB) (*openapi3.T, routers.Router) {
	t.Helper()
	docOnce.Do(func() {
		openapi3filter.RegisterBodyDecoder("application/x-tar", openapi3filter.FileBodyDecoder)
		openapi3filter.RegisterBodyDecoder("text/event-stream", openapi3filter.FileBodyDecoder)
		openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.FileBodyDecoder) // guest servers' pages through /ports
		doc, err := openapi3.NewLoader().LoadFromData(api.OpenAPI)
		if err != nil {
			docErr = err
			return
		}
		if docErr = doc.Validate(context.Background()); docErr != nil {
			return
		}
		// The test servers listen on ephemeral ports: routes are matched
		// on any host, not only on the servers the document names.
		hostless := *doc
		hostless.Servers = nil
		docRouter, docErr = legacy.NewRouter(&hostless)
	})
	if docErr != nil {
		t.Fatalf("openapi.json: %v", docErr)
	}
	doc, _ := openapi3.NewLoader().LoadFromData(api.OpenAPI)
	return doc, docRouter
}

// validateResponse checks an answer against openapi.json: its status
// must be documented for the route and its body must fit the schema.
// Multi-segment file and proxied paths, which the document's router
// cannot match, are skipped.
func validateResponse(t testing.TB, req *http.Request, resp *http.Response, body []byte) {
	t.Helper()
	_, router := loadDoc(t)
	route, params, err := router.FindRoute(req)
	if err != nil {
		if strings.Contains(req.URL.Path, "/files/") || strings.Contains(req.URL.Path, "/ports/") || strings.HasPrefix(req.URL.Path, "/p/") {
			return
		}
		if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed {
			return // probing an undocumented route or method on purpose
		}
		t.Fatalf("%s %s: not in openapi.json: %v", req.Method, req.URL.Path, err)
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}},
		Status:  resp.StatusCode,
		Header:  resp.Header,
		Body:    io.NopCloser(bytes.NewReader(body)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		t.Errorf("%s %s → %d: the answer does not fit openapi.json: %v", req.Method, req.URL.Path, resp.StatusCode, err)
	}
}

// TestOpenAPIMatchesRouter fails when the router has a route the document
// lacks, or the other way round.
func TestOpenAPIMatchesRouter(t *testing.T) {
	doc, _ := loadDoc(t)
	s, err := api.New(api.Config{Tokens: testTokens()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(context.Background())
	var inRouter []string
	err = chi.Walk(s.Router(), func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		route = strings.TrimSuffix(route, "/")
		route = strings.ReplaceAll(route, "/*", "/{path}")
		inRouter = append(inRouter, method+" "+route)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var inDoc []string
	for p, item := range doc.Paths.Map() {
		for m := range item.Operations() {
			inDoc = append(inDoc, m+" "+p)
		}
	}
	slices.Sort(inRouter)
	slices.Sort(inDoc)
	inRouter = slices.Compact(inRouter)
	for _, r := range inRouter {
		if !slices.Contains(inDoc, r) {
			t.Errorf("route %s is not in openapi.json", r)
		}
	}
	for _, r := range inDoc {
		if !slices.Contains(inRouter, r) {
			t.Errorf("openapi.json has %s, which the router lacks", r)
		}
	}
	if len(inRouter) < 20 {
		t.Fatalf("walked only %d routes", len(inRouter))
	}
}

// validateSSE checks server-sent events against the x-sse-events of the
// route's text/event-stream answer: each event's name is listed there and
// its data fits the schema listed for it.
func validateSSE(t testing.TB, req *http.Request, events []sseEvent) {
	t.Helper()
	doc, router := loadDoc(t)
	route, _, err := router.FindRoute(req)
	if err != nil {
		t.Fatalf("%s %s: not in openapi.json: %v", req.Method, req.URL.Path, err)
	}
	ok := route.Operation.Responses.Status(http.StatusOK)
	media := ok.Value.Content.Get("text/event-stream")
	if media == nil || media.Schema == nil || media.Schema.Value == nil {
		t.Fatalf("%s %s: openapi.json documents no event stream", req.Method, req.URL.Path)
	}
	listed, _ := media.Schema.Value.Extensions["x-sse-events"].(map[string]any)
	if len(listed) == 0 {
		t.Fatalf("%s %s: the event stream has no x-sse-events", req.Method, req.URL.Path)
	}
	for _, e := range events {
		ref, _ := listed[e.name].(map[string]any)
		name := strings.TrimPrefix(fmt.Sprint(ref["$ref"]), "#/components/schemas/")
		schema := doc.Components.Schemas[name]
		if schema == nil || schema.Value == nil {
			t.Errorf("%s %s: event %q is not in x-sse-events (or names no schema)", req.Method, req.URL.Path, e.name)
			continue
		}
		if err := schema.Value.VisitJSON(e.data); err != nil {
			t.Errorf("%s %s: event %q %v does not fit %s: %v", req.Method, req.URL.Path, e.name, e.data, name, err)
		}
	}
}
