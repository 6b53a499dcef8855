package main

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseDate(t *testing.T) {
	cases := map[string]string{
		"@1704164645 +0100":              "2024-01-02T04:04:05+01:00",
		"1704164645 -0230":               "2024-01-02T00:34:05-02:30",
		"@0":                             "1970-01-01T00:00:00Z",
		"2024-01-02T03:04:05+01:00":      "2024-01-02T03:04:05+01:00",
		"2024-01-02T03:04:05Z":           "2024-01-02T03:04:05Z",
		"2024-01-02 03:04:05 +0100":      "2024-01-02T03:04:05+01:00",
		"2024-01-02T03:04:05":            "2024-01-02T03:04:05Z",
		"Tue, 2 Jan 2024 03:04:05 +0100": "2024-01-02T03:04:05+01:00",
		"Tue Jan 2 03:04:05 2024 +0100":  "2024-01-02T03:04:05+01:00",
	}
	for in, want := range cases {
		got, err := parseDate(in)
		if err != nil || got.Format(time.RFC3339) != want {
			t.Errorf("parseDate(%q) = %v, %v; want %s", in, got.Format(time.RFC3339), err, want)
		}
	}
	for _, bad := range []string{"", "yesterday", "@-5", "@99999999999999999999", "1704164645", "1704164645 +2500", "1704164645 0100", strings.Repeat("1", 200)} {
		if _, err := parseDate(bad); err == nil {
			t.Errorf("parseDate(%q) accepted", bad)
		}
	}
}

func FuzzParseDate(f *testing.F) {
	for _, s := range []string{"@1704164645 +0100", "2024-01-02T03:04:05+01:00", "Tue, 2 Jan 2024 03:04:05 +0100", "1 +9999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := parseDate(s)
		if err == nil && d.Unix() < 0 && !strings.Contains(s, "-") && !strings.Contains(s, "Jan") {
			t.Fatalf("%q: negative time %v", s, d)
		}
	})
}

func TestCleanMessage(t *testing.T) {
	cases := []struct {
		in   []string
		want string
	}{
		{[]string{"subject"}, "subject\n"},
		{[]string{"subject", "body"}, "subject\n\nbody\n"},
		{[]string{"\n\nsubject  \n\n\n\nbody\t\n\n"}, "subject\n\nbody\n"},
		{[]string{"  \n \n"}, ""},
	}
	for _, c := range cases {
		if got := cleanMessage(c.in); got != c.want {
			t.Errorf("cleanMessage(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestExpandShort(t *testing.T) {
	got := expandShort([]string{"-qam", "msg", "-mx", "-n5", "-3", "--", "-qa"}, "mn")
	want := []string{"-q", "-a", "-m", "msg", "-m", "x", "-n", "5", "-3", "--", "-qa"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// applyPatch applies the hunks writeHunks produced for old and returns
// the new text: a diff is correct when it turns old into new.
func applyPatch(t *testing.T, old, patch string) string {
	t.Helper()
	oldLines := splitLines(old)
	var out []string
	pos := 0
	lines := strings.SplitAfter(patch, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if l == "" {
			continue
		}
		if strings.HasPrefix(l, "@@ -") {
			start, count, _ := strings.Cut(strings.Fields(l)[1][1:], ",")
			n, err := strconv.Atoi(start)
			if err != nil {
				t.Fatalf("bad hunk header %q", l)
			}
			// An empty old range ("N,0") names the line it follows.
			if count != "0" {
				n--
			}
			for pos < n {
				out = append(out, oldLines[pos])
				pos++
			}
			continue
		}
		body := l[1:]
		if i+1 < len(lines) && strings.HasPrefix(lines[i+1], "\\ No newline") {
			body = strings.TrimSuffix(body, "\n")
			i++
		}
		switch l[0] {
		case ' ':
			if pos >= len(oldLines) || oldLines[pos] != body {
				t.Fatalf("context %q does not match old line %d", body, pos+1)
			}
			out = append(out, body)
			pos++
		case '-':
			if pos >= len(oldLines) || oldLines[pos] != body {
				t.Fatalf("deleted %q does not match old line %d", body, pos+1)
			}
			pos++
		case '+':
			out = append(out, body)
		default:
			t.Fatalf("unexpected patch line %q", l)
		}
	}
	out = append(out, oldLines[pos:]...)
	return strings.Join(out, "")
}

func TestHunksApply(t *testing.T) {
	old := "package main\n\nfunc a() {\n\t1\n\t2\n\t3\n\t4\n\t5\n\t6\n\t7\n\t8\n\t9\n}\n\nfunc b() {\n\tx\n}"
	neu := "package main\n\nfunc a() {\n\t1\n\t2\n\t3 changed\n\t4\n\t5\n\t6\n\t7\n\t8\n\t9\n}\n\nfunc b() {\n\ty\n}\n"
	var buf bytes.Buffer
	writeHunks(&buf, lineOps(old, neu), splitLines(old))
	want := "@@ -3,7 +3,7 @@ package main\n func a() {\n \t1\n \t2\n-\t3\n+\t3 changed\n \t4\n \t5\n \t6\n" +
		"@@ -13,5 +13,5 @@ func a() {\n }\n \n func b() {\n-\tx\n-}\n\\ No newline at end of file\n+\ty\n+}\n"
	if buf.String() != want {
		t.Fatalf("hunks:\n%s\nwant:\n%s", buf.String(), want)
	}
	if got := applyPatch(t, old, buf.String()); got != neu {
		t.Fatalf("patch does not apply: %q", got)
	}
}

func FuzzHunksApply(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nc\nd\n")
	f.Add("", "x")
	f.Add("x\ny", "")
	f.Add("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n", "1\n2\nX\n4\n5\n6\n7\n8\nY\n10\n")
	f.Fuzz(func(t *testing.T, old, neu string) {
		if len(old) > 4096 || len(neu) > 4096 {
			return
		}
		var buf bytes.Buffer
		writeHunks(&buf, lineOps(old, neu), splitLines(old))
		if got := applyPatch(t, old, buf.String()); got != neu {
			t.Fatalf("patch %q turns %q into %q, not %q", buf.String(), old, got, neu)
		}
		if old == neu && buf.Len() != 0 {
			t.Fatalf("hunks for equal texts: %q", buf.String())
		}
	})
}
