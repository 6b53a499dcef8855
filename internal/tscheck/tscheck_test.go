package tscheck

import (
	"errors"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	r, err := Parse([]byte(`{"diagnostics":[{"file":"a.ts","line":1,"column":7,"code":2322,"category":"error","message":"Type 'string' is not assignable to type 'number'."},{"file":"","line":0,"column":0,"code":6053,"category":"error","message":"File 'x.ts' not found."}],"more":3}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Diagnostics) != 2 || r.More != 3 {
		t.Fatalf("%+v", r)
	}
	if s := r.Diagnostics[0].String(); s != "a.ts:1:7 - error TS2322: Type 'string' is not assignable to type 'number'." {
		t.Fatal(s)
	}
	if s := r.Diagnostics[1].String(); s != "error TS6053: File 'x.ts' not found." {
		t.Fatal(s)
	}
	if s := (Diagnostic{File: "a.ts", Code: 1, Category: "warning", Message: "m"}).String(); s != "a.ts - warning TS1: m" {
		t.Fatal(s)
	}
	for _, bad := range []string{``, `[]`, `{"diagnostics":[{"line":-1,"category":"error"}]}`,
		`{"diagnostics":[{"category":"fatal"}]}`, `{"diagnostics":"x"}`, `{"diagnostics":[]}` + strings.Repeat(" ", MaxReport)} {
		if _, err := Parse([]byte(bad)); !errors.Is(err, ErrBadReport) {
			t.Errorf("%.40q: %v, want ErrBadReport", bad, err)
		}
	}
}

// FuzzParse: any output of a guest's node decodes or fails with
// ErrBadReport, never a panic.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"diagnostics":[{"file":"a.ts","line":1,"column":7,"code":2322,"category":"error","message":"m"}],"more":0}`))
	f.Add([]byte(`{"diagnostics":null}`))
	f.Add([]byte(`{"diagnostics":[{"line":1e400}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := Parse(b)
		if err != nil {
			if !errors.Is(err, ErrBadReport) {
				t.Fatal(err)
			}
			return
		}
		for _, d := range r.Diagnostics {
			_ = d.String()
		}
	})
}
