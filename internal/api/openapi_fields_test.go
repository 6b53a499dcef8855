package api_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/secexec/secexec"
	"github.com/secexec/secexec/internal/api"
	"github.com/secexec/secexec/kernel/policy"
)

// schemaBindings pairs each component schema of openapi.json with the Go
// type its handler decodes or encodes. response says the type is sent by
// the server, so its fields without omitempty are always present and
// must be required in the schema.
var schemaBindings = []struct {
	schema   string
	value    any
	response bool
}{
	{"CreateVM", api.CreateVMRequest{}, false},
	{"PatchVM", api.PatchVMRequest{}, false},
	{"PauseRequest", api.PauseRequest{}, false},
	{"Limits", api.LimitsJSON{}, false},
	{"Mount", api.MountJSON{}, false},
	{"Tool", api.ToolJSON{}, false},
	{"VM", api.VMJSON{}, true},
	{"ExecRequest", api.ExecRequest{}, false},
	{"ExecResult", api.ExecResult{}, true},
	{"SpawnRequest", api.SpawnRequest{}, false},
	{"Terminal", api.TerminalJSON{}, false},
	{"Process", api.ProcessJSON{}, true},
	{"Stat", api.StatJSON{}, true},
	{"JSRequest", api.JSRequest{}, false},
	{"EvalResult", api.EvalResult{}, true},
	{"CreateContext", api.CreateContextRequest{}, false},
	{"EvaluateRequest", api.EvaluateRequest{}, false},
	{"CreatePreviewRequest", api.CreatePreviewRequest{}, false},
	{"Preview", api.PreviewJSON{}, true},
	{"SnapshotRequest", api.SnapshotRequest{}, false},
	{"Snapshot", api.SnapshotJSON{}, true},
	{"WatchEvent", secexec.WatchEvent{}, true},
	{"Permissions", policy.Policy{}, false},
	{"FSRule", policy.FSRule{}, false},
	{"NetRule", policy.NetRule{}, false},
	{"ExecRule", policy.ExecRule{}, false},
	{"EnvRule", policy.EnvRule{}, false},
	{"ToolRule", policy.ToolRule{}, false},
}

// TestOpenAPISchemasMatchGoTypes checks every bound schema field by field
// against its Go type: each json field of the struct is a property of a
// compatible type and each property is a field, nested structs included,
// so that the document and the handlers cannot drift apart.
func TestOpenAPISchemasMatchGoTypes(t *testing.T) {
	doc, _ := loadDoc(t)
	for _, b := range schemaBindings {
		ref := doc.Components.Schemas[b.schema]
		if ref == nil || ref.Value == nil {
			t.Errorf("openapi.json has no schema %s (for %T)", b.schema, b.value)
			continue
		}
		for _, d := range compareSchema(b.schema, ref.Value, reflect.TypeOf(b.value), b.response) {
			t.Error(d)
		}
	}
}

// TestOpenAPISchemaDriftIsCaught shows that the comparison notices a
// field the schema lacks, a property the type lacks, a wrong type and a
// response field that is not required.
func TestOpenAPISchemaDriftIsCaught(t *testing.T) {
	type extra struct {
		ID    string `json:"id"`
		Added int    `json:"added,omitempty"`
	}
	type wrong struct {
		ID int `json:"id"`
	}
	type fewer struct {
		Other string `json:"other,omitempty"`
	}
	schema := openapi3.NewObjectSchema().WithProperty("id", openapi3.NewStringSchema()).WithRequired([]string{"id"})
	loose := openapi3.NewObjectSchema().WithProperty("id", openapi3.NewStringSchema())
	for _, c := range []struct {
		name   string
		schema *openapi3.Schema
		typ    reflect.Type
		resp   bool
		want   string
	}{
		{"field missing from the schema", schema, reflect.TypeOf(extra{}), false, `T.added: field of the Go type is not in the schema`},
		{"wrong type", schema, reflect.TypeOf(wrong{}), false, `T.id: Go int, schema "string"`},
		{"property missing from the type", schema, reflect.TypeOf(fewer{}), false, `T.id: property not in Go type`},
		{"response field not required", loose, reflect.TypeOf(wrong{}), true, `T.id: always sent (no omitempty) but not required`},
	} {
		diffs := compareSchema("T", c.schema, c.typ, c.resp)
		if !slices.ContainsFunc(diffs, func(d string) bool { return strings.Contains(d, c.want) }) {
			t.Errorf("%s: got %q, want one containing %q", c.name, diffs, c.want)
		}
	}
}

var (
	timeType = reflect.TypeOf(time.Time{})
	rawType  = reflect.TypeOf(json.RawMessage{})
)

// compareSchema lists the differences between schema s and Go type typ
// at path at.
func compareSchema(at string, s *openapi3.Schema, typ reflect.Type, response bool) []string {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	is := func(want string) []string {
		if s.Type == nil || !s.Type.Is(want) {
			return []string{fmt.Sprintf("%s: Go %s, schema %q (want %q)", at, typ, typeOf(s), want)}
		}
		return nil
	}
	switch {
	case typ == rawType:
		return nil // any JSON value; a named schema may narrow it
	case typ == timeType:
		if d := is("string"); d != nil {
			return d
		}
		if s.Format != "date-time" {
			return []string{fmt.Sprintf("%s: a time, but format %q (want date-time)", at, s.Format)}
		}
		return nil
	}
	switch typ.Kind() {
	case reflect.String:
		return is("string")
	case reflect.Bool:
		return is("boolean")
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return is("integer")
	case reflect.Float32, reflect.Float64:
		return is("number")
	case reflect.Slice, reflect.Array:
		if d := is("array"); d != nil {
			return d
		}
		if s.Items == nil || s.Items.Value == nil {
			return []string{at + ": array without items"}
		}
		return compareSchema(at+"[]", s.Items.Value, typ.Elem(), response)
	case reflect.Map:
		if d := is("object"); d != nil {
			return d
		}
		ap := s.AdditionalProperties.Schema
		if ap == nil || ap.Value == nil {
			return []string{at + ": a map, but no additionalProperties schema"}
		}
		return compareSchema(at+"{}", ap.Value, typ.Elem(), response)
	case reflect.Struct:
		if d := is("object"); d != nil {
			return d
		}
		return compareFields(at, s, typ, response)
	}
	return []string{fmt.Sprintf("%s: Go type %s has no JSON schema mapping in this test", at, typ)}
}

// compareFields compares a struct's json fields with an object schema's
// properties, both ways.
func compareFields(at string, s *openapi3.Schema, typ reflect.Type, response bool) []string {
	var diffs []string
	seen := map[string]bool{}
	for i := range typ.NumField() {
		f := typ.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		seen[name] = true
		p := s.Properties[name]
		if p == nil || p.Value == nil {
			diffs = append(diffs, fmt.Sprintf("%s.%s: field of the Go type is not in the schema", at, name))
			continue
		}
		if response && !strings.Contains(","+opts+",", ",omitempty,") && !slices.Contains(s.Required, name) {
			diffs = append(diffs, fmt.Sprintf("%s.%s: always sent (no omitempty) but not required", at, name))
		}
		diffs = append(diffs, compareSchema(at+"."+name, p.Value, f.Type, response)...)
	}
	for name := range s.Properties {
		if !seen[name] {
			diffs = append(diffs, fmt.Sprintf("%s.%s: property not in Go type %s", at, name, typ))
		}
	}
	for _, name := range s.Required {
		if !seen[name] {
			diffs = append(diffs, fmt.Sprintf("%s: requires %q, which Go type %s lacks", at, name, typ))
		}
	}
	slices.Sort(diffs)
	return diffs
}

func typeOf(s *openapi3.Schema) string {
	if s.Type == nil {
		return ""
	}
	return strings.Join(s.Type.Slice(), ",")
}

// TestOpenAPIWebSocketFrames checks the attach route's x-websocket-frames
// against the Tag constants the server speaks: every tag, its number and
// its direction.
func TestOpenAPIWebSocketFrames(t *testing.T) {
	var doc struct {
		Paths map[string]struct {
			Get struct {
				Frames []struct {
					Tag  byte   `json:"tag"`
					From string `json:"from"`
					Name string `json:"name"`
				} `json:"x-websocket-frames"`
			} `json:"get"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(api.OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	type frame struct {
		tag  byte
		from string
	}
	want := map[string]frame{
		"stdin": {api.TagStdin, "client"}, "stdin_eof": {api.TagStdinEOF, "client"},
		"signal": {api.TagSignal, "client"}, "resize": {api.TagResize, "client"},
		"stdout": {api.TagStdout, "server"}, "stderr": {api.TagStderr, "server"}, "exit": {api.TagExit, "server"},
	}
	got := map[string]frame{}
	for _, f := range doc.Paths["/v1/vms/{id}/processes/{pid}/ws"].Get.Frames {
		got[f.Name] = frame{f.Tag, f.From}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("x-websocket-frames: %v, the server's tags %v", got, want)
	}
}
