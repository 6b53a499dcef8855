package wasm

import (
	"strings"
	"testing"
)

func TestParseShebang(t *testing.T) {
	for _, tc := range []struct {
		in          string
		interp, arg string
		ok          bool
	}{
		{"#!/bin/sh\necho", "/bin/sh", "", true},
		{"#! /bin/sh -e \nx", "/bin/sh", "-e", true},
		{"#!/usr/bin/env  node  --flag  x\n", "/usr/bin/env", "node  --flag  x", true},
		{"#!/bin/sh\r\n", "/bin/sh", "", true},
		{"#!\t/bin/sh\t-x\n", "/bin/sh", "-x", true},
		{"#!/bin/sh", "", "", false},
		{"#!\n", "", "", false},
		{"#!   \n", "", "", false},
		{"#!/bin/s\x00h\n", "", "", false},
		{"\x00asm", "", "", false},
	} {
		interp, arg, ok := parseShebang([]byte(tc.in))
		if interp != tc.interp || arg != tc.arg || ok != tc.ok {
			t.Errorf("parseShebang(%q) = %q, %q, %v", tc.in, interp, arg, ok)
		}
	}
}

// FuzzShebang parses arbitrary executable headers: the interpreter is
// never empty and has no blanks, and nothing spans the first line.
func FuzzShebang(f *testing.F) {
	f.Add([]byte("#!/bin/sh\n"))
	f.Add([]byte("#! /usr/bin/env python3 -u\n"))
	f.Add([]byte("#!\t\r\n"))
	f.Fuzz(func(t *testing.T, header []byte) {
		interp, arg, ok := parseShebang(header)
		if !ok {
			return
		}
		line, _, _ := strings.Cut(string(header), "\n")
		if interp == "" || strings.ContainsAny(interp, " \t\n\x00") || strings.Contains(arg, "\n") ||
			!strings.Contains(line, interp) || !strings.Contains(line, arg) {
			t.Fatalf("parseShebang(%q) = %q, %q", header, interp, arg)
		}
	})
}
