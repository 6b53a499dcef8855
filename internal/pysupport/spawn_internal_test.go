package pysupport

import (
	"errors"
	"strings"
	"testing"

	"github.com/secexec/secexec/kernel/errno"
)

func TestParseRequestRejectsHostileInput(t *testing.T) {
	big := `{"argv":["x"],"stdin":"` + strings.Repeat("A", MaxRequest) + `"}`
	manyArgs := `{"argv":[` + strings.Repeat(`"a",`, maxArgs) + `"a"]}`
	cases := []struct {
		name, req string
		want      errno.Errno
	}{
		{"empty", ``, errno.EINVAL},
		{"not json", `argv=ls`, errno.EINVAL},
		{"array", `["ls"]`, errno.EINVAL},
		{"no argv", `{"env":["A=1"]}`, errno.EINVAL},
		{"empty argv", `{"argv":[]}`, errno.EINVAL},
		{"empty program", `{"argv":[""]}`, errno.EINVAL},
		{"argv not strings", `{"argv":[1,2]}`, errno.EINVAL},
		{"unknown field", `{"argv":["ls"],"uid":0}`, errno.EINVAL},
		{"two objects", `{"argv":["ls"]}{"argv":["rm"]}`, errno.EINVAL},
		{"NUL in argv", `{"argv":["ls\u0000rm"]}`, errno.EINVAL},
		{"NUL in cwd", `{"argv":["ls"],"cwd":"/\u0000"}`, errno.EINVAL},
		{"negative timeout", `{"argv":["ls"],"timeout_ms":-1}`, errno.EINVAL},
		{"stdin not base64", `{"argv":["ls"],"stdin":"!!"}`, errno.EINVAL},
		{"too large", big, errno.E2BIG},
		{"too many args", manyArgs, errno.E2BIG},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := parseRequest([]byte(tc.req)); !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
	req, err := parseRequest([]byte(`{"argv":["sh","-c","echo hi"],"env":["A=1"],"cwd":"/tmp","stdin":"aGk=","merge_stderr":true,"timeout_ms":5}`))
	if err != nil || len(req.Argv) != 3 || string(req.Stdin) != "hi" || !req.MergeStderr || req.TimeoutMS != 5 || req.Cwd != "/tmp" {
		t.Fatalf("valid request: %+v, %v", req, err)
	}
}

func FuzzParseRequest(f *testing.F) {
	f.Add([]byte(`{"argv":["sh","-c","echo hi | wc -c"],"env":["PATH=/usr/bin"],"cwd":"/workspace","stdin":"","merge_stderr":false,"timeout_ms":0}`))
	f.Add([]byte(`{"argv":[]}`))
	f.Add([]byte(`{"argv":["a\u0000"]}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		req, err := parseRequest(b)
		if err != nil {
			if !errors.Is(err, errno.EINVAL) && !errors.Is(err, errno.E2BIG) {
				t.Fatalf("error %v is neither EINVAL nor E2BIG", err)
			}
			return
		}
		if len(req.Argv) == 0 || req.Argv[0] == "" || len(req.Argv) > maxArgs || req.TimeoutMS < 0 {
			t.Fatalf("accepted an invalid request: %+v", req)
		}
	})
}
