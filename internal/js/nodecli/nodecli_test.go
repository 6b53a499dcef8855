package nodecli

import (
	"errors"
	"reflect"
	"slices"
	"testing"
)

func TestParse(t *testing.T) {
	cases := []struct {
		argv []string
		want Invocation
	}{
		{[]string{"node"}, Invocation{Mode: ModeStdin, Args: []string{}}},
		{[]string{"node", "-e", "1", "a", "b"}, Invocation{Mode: ModeEval, Code: "1", Args: []string{"a", "b"}, ExecArgv: []string{"-e", "1"}}},
		{[]string{"node", "--eval=x"}, Invocation{Mode: ModeEval, Code: "x", Args: []string{}, ExecArgv: []string{"--eval=x"}}},
		{[]string{"node", "-p", "1+1"}, Invocation{Mode: ModePrint, Code: "1+1", Args: []string{}, ExecArgv: []string{"-p", "1+1"}}},
		{[]string{"node", "--no-warnings", "f.js", "--x", "-e"}, Invocation{Mode: ModeFile, File: "f.js", Args: []string{"--x", "-e"}, ExecArgv: []string{"--no-warnings"}, NoWarnings: true}},
		{[]string{"node", "-r", "m", "--input-type=module", "-"}, Invocation{Mode: ModeStdin, Args: []string{}, Require: []string{"m"}, InputType: "module", ExecArgv: []string{"-r", "m", "--input-type=module"}, Dash: true}},
		{[]string{"node", "-", "a"}, Invocation{Mode: ModeStdin, Args: []string{"a"}, Dash: true}},
		{[]string{"node", "--", "-f.js", "z"}, Invocation{Mode: ModeFile, File: "-f.js", Args: []string{"z"}}},
		{[]string{"node", "-v"}, Invocation{Mode: ModeVersion}},
		{[]string{"node", "-i"}, Invocation{Mode: ModeStdin, Args: []string{}, ExecArgv: []string{"-i"}, Interactive: true}},
		{[]string{"node", "--test"}, Invocation{Mode: ModeTest, Args: []string{}, ExecArgv: []string{"--test"}}},
		{[]string{"node", "--test", "--test-reporter=spec", "--test-name-pattern", "x", "a.js", "test/**/*.mjs"}, Invocation{Mode: ModeTest, Args: []string{"a.js", "test/**/*.mjs"},
			ExecArgv: []string{"--test", "--test-reporter=spec", "--test-name-pattern", "x"}}},
		{[]string{"node", "--abort_on_uncaught_exception", "--stack_trace_limit=5", "f.js"}, Invocation{Mode: ModeFile, File: "f.js", Args: []string{},
			ExecArgv: []string{"--abort_on_uncaught_exception", "--stack_trace_limit=5"}}},
		{[]string{"node", "--gc-interval=100", "--stress-compaction", "f.js"}, Invocation{Mode: ModeFile, File: "f.js", Args: []string{}, ExecArgv: []string{"--gc-interval=100", "--stress-compaction"}}},
		{[]string{"node", "--test-only", "f.js"}, Invocation{Mode: ModeFile, File: "f.js", Args: []string{}, ExecArgv: []string{"--test-only"}}},
	}
	for _, c := range cases {
		got, err := Parse(c.argv)
		if err != nil {
			t.Errorf("%q: %v", c.argv, err)
			continue
		}
		norm := func(i *Invocation) {
			for _, s := range []*[]string{&i.Args, &i.ExecArgv, &i.Require} {
				if len(*s) == 0 {
					*s = nil
				}
			}
		}
		norm(got)
		norm(&c.want)
		if !reflect.DeepEqual(*got, c.want) {
			t.Errorf("%q:\n got %+v\nwant %+v", c.argv, *got, c.want)
		}
	}
	for _, bad := range [][]string{{"node", "--bogus"}, {"node", "-e"}, {"node", "--input-type=x", "-e", "1"}, {"node", "-i", "-e", "1"}, {"node", "--inspect"},
		{"node", "--test", "--experimental-test-coverage"}, {"node", "--test-reporter"}} {
		_, err := Parse(bad)
		var be *BadOptionError
		if !errors.As(err, &be) {
			t.Errorf("%q: err %v, want BadOptionError", bad, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add("node\x00-e\x00code\x00a")
	f.Add("node\x00--input-type=module\x00-p\x00x")
	f.Add("node\x00--\x00file")
	f.Add("node\x00-r\x00")
	f.Fuzz(func(t *testing.T, s string) {
		var argv []string
		start := 0
		for i := 0; i <= len(s); i++ {
			if i == len(s) || s[i] == 0 {
				argv = append(argv, s[start:i])
				start = i + 1
			}
		}
		inv, err := Parse(argv)
		if err != nil {
			var be *BadOptionError
			if !errors.As(err, &be) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if inv.Mode == ModeFile && inv.File == "" && len(argv) > 1 && argv[len(argv)-1] != "" {
			// an empty file name can only come from an empty argument
			for _, a := range argv {
				if a == "" {
					return
				}
			}
			t.Fatalf("file mode without file: %q", argv)
		}
	})
}

// --check with -e/-p is node's own conflict, named whatever their order;
// alone it is refused as unsupported.
func TestParseCheck(t *testing.T) {
	for _, c := range []struct {
		argv []string
		want string
	}{
		{[]string{"/usr/bin/node", "-c", "-e", "x"}, "/usr/bin/node: either --check or --eval can be used, not both"},
		{[]string{"node", "--eval", "x", "--check"}, "node: either --check or --eval can be used, not both"},
		{[]string{"node", "-p", "1", "-c"}, "node: either --check or --eval can be used, not both"},
		{[]string{"node", "--check", "f.js"}, "node: --check is not supported in this sandbox"},
	} {
		_, err := Parse(c.argv)
		var be *BadOptionError
		if !errors.As(err, &be) || be.Msg != c.want {
			t.Errorf("%q: err %v, want %q", c.argv, err, c.want)
		}
	}
}

// The TLS version options are node's: accepted and kept in execArgv (tls
// reads its defaults from there), except --tls-min-v1.3 with
// --tls-max-v1.2, which node refuses whatever their order.
func TestParseTLSVersions(t *testing.T) {
	inv, err := Parse([]string{"node", "--tls-min-v1.0", "--tls-max-v1.2", "--tls-cipher-list=AES128-SHA", "-p", "1"})
	if err != nil || !slices.Equal(inv.ExecArgv, []string{"--tls-min-v1.0", "--tls-max-v1.2", "--tls-cipher-list=AES128-SHA", "-p", "1"}) {
		t.Fatalf("Parse: %v, execArgv %q", err, inv.ExecArgv)
	}
	for _, argv := range [][]string{{"node", "--tls-min-v1.3", "--tls-max-v1.2", "-p", "1"}, {"node", "--tls-max-v1.2", "--tls-min-v1.3", "f.js"}} {
		_, err := Parse(argv)
		var be *BadOptionError
		if !errors.As(err, &be) || be.Msg != "node: either --tls-min-v1.3 or --tls-max-v1.2 can be used, not both" {
			t.Errorf("%q: err %v", argv, err)
		}
	}
}
