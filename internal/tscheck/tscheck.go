// Package tscheck is the TypeScript checker that runs inside a VM: a
// script for the guest's node that type-checks files with the pinned
// typescript package's compiler API, and the decoder of its report. The
// checking is guest computation (bounded by the VM's limits); the host
// only decodes a bounded JSON document.
package tscheck

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
)

// Script is the checker, for `node -e Script -- MODE ROOT FILE...`: MODE
// "dir" checks ROOT's files (ROOT/tsconfig.json, if there, gives the
// options and the file list), MODE "files" checks the given paths (the
// nearest tsconfig.json above the first gives the options). Without a
// tsconfig.json the options are strict, ES2022, bundler resolution, with
// node's types.
//
//go:embed check.js
var Script string

// MaxReport bounds the report the host decodes (the script itself
// reports at most 1,000 diagnostics).
const MaxReport = 8 << 20

// Diagnostic is one compiler message.
type Diagnostic struct {
	// File is the file's path in the VM; empty for a global message.
	File string `json:"file"`
	// Line and Column are 1-based; 0 when the message has no position.
	Line   int `json:"line"`
	Column int `json:"column"`
	// Code is the TS error number (2322 for TS2322).
	Code int `json:"code"`
	// Category is "error", "warning", "suggestion" or "message".
	Category string `json:"category"`
	// Message is the text, nested messages joined with newlines.
	Message string `json:"message"`
}

var categories = map[string]bool{"error": true, "warning": true, "suggestion": true, "message": true}

// String formats d as tsc does without --pretty colours:
// "a.ts:1:7 - error TS2322: Type 'string' is not assignable to type 'number'."
func (d Diagnostic) String() string {
	msg := fmt.Sprintf("%s TS%d: %s", d.Category, d.Code, d.Message)
	switch {
	case d.File == "":
		return msg
	case d.Line == 0:
		return d.File + " - " + msg
	}
	return fmt.Sprintf("%s:%d:%d - %s", d.File, d.Line, d.Column, msg)
}

// Report is what the script prints.
type Report struct {
	Diagnostics []Diagnostic `json:"diagnostics"`
	// More counts diagnostics left out beyond the script's limit.
	More int `json:"more"`
}

// ErrBadReport is returned for output that is not a checker report.
var ErrBadReport = errors.New("tscheck: bad checker report")

// Parse decodes the checker's output.
func Parse(out []byte) (Report, error) {
	var r Report
	if len(out) > MaxReport {
		return r, fmt.Errorf("%w: %d bytes, limit %d", ErrBadReport, len(out), MaxReport)
	}
	if err := json.Unmarshal(out, &r); err != nil {
		return Report{}, fmt.Errorf("%w: %v", ErrBadReport, err)
	}
	for _, d := range r.Diagnostics {
		if d.Line < 0 || d.Column < 0 || !categories[d.Category] {
			return Report{}, fmt.Errorf("%w: diagnostic %+v", ErrBadReport, d)
		}
	}
	return r, nil
}
