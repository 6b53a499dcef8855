package client

import (
	"bytes"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// The engine's V8 warm pool capacity reaches it as
// SECEXEC_V8_WARM_ISOLATES: Options.WarmIsolates when set (negative
// disables, "0"), else this process's own value, passed through.
func TestEngineEnvWarmIsolates(t *testing.T) {
	cases := []struct {
		name   string
		parent string // "" leaves the variable unset
		opt    int
		want   string // "" wants no such variable
	}{
		{"unset", "", 0, ""},
		{"passedThrough", "5", 0, "5"},
		{"option", "", 3, "3"},
		{"optionWins", "5", 3, "3"},
		{"negativeDisables", "5", -1, "0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(warmEnv, c.parent) // restored after the case
			if c.parent == "" {
				os.Unsetenv(warmEnv)
			}
			var got, want []string
			for _, kv := range engineEnv(Options{WarmIsolates: c.opt}, slog.New(slog.DiscardHandler)) {
				if v, ok := strings.CutPrefix(kv, warmEnv+"="); ok {
					got = append(got, v)
				}
			}
			if c.want != "" {
				want = []string{c.want}
			}
			if !slices.Equal(got, want) {
				t.Errorf("engine env has %s=%q, want %q", warmEnv, got, want)
			}
		})
	}
}

// envValue returns the value of key in env ("KEY=value" list), and
// whether it is there; with duplicates the last one (the one exec uses).
func envValue(env []string, key string) (string, bool) {
	val, found := "", false
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			val, found = v, true
		}
	}
	return val, found
}

// The engine gets the directories its client set up (Options.Env, which
// wins over the client's own variables), the phase switch, and the
// client's log level; nothing else of the client's environment.
func TestEngineEnvPassesSetUpAndLogging(t *testing.T) {
	t.Setenv("SECEXEC_CACHE_DIR", "/from/parent")
	t.Setenv("SECEXEC_SESSION_PHASES", "1")
	t.Setenv("SECRET_TOKEN", "do-not-pass")
	debug := slog.New(slog.NewTextHandler(&bytes.Buffer{}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	env := engineEnv(Options{Env: []string{"SECEXEC_CACHE_DIR=/set/up", "SECEXEC_SOFTWARE_DIR=/sw"}}, debug)
	for key, want := range map[string]string{
		"SECEXEC_CACHE_DIR": "/set/up", "SECEXEC_SOFTWARE_DIR": "/sw",
		"SECEXEC_SESSION_PHASES": "1", "SECEXEC_LOG_LEVEL": "DEBUG",
	} {
		if got, _ := envValue(env, key); got != want {
			t.Errorf("%s = %q, want %q (env %q)", key, got, want, env)
		}
	}
	if n := strings.Count(strings.Join(env, "\n"), "SECEXEC_CACHE_DIR="); n != 1 {
		t.Errorf("SECEXEC_CACHE_DIR appears %d times", n)
	}
	if _, ok := envValue(env, "SECRET_TOKEN"); ok {
		t.Error("an unrelated variable of the client reached the engine")
	}
	if got, _ := envValue(engineEnv(Options{}, slog.New(slog.DiscardHandler)), "SECEXEC_LOG_LEVEL"); got != "ERROR" {
		t.Errorf("log level with a discarding logger = %q, want ERROR", got)
	}
}

// The engine's JSON log lines reach the client's logger as records of
// their own level, message and attributes; other stderr lines arrive as
// warnings, and broken JSON is not mistaken for a record.
func TestTailRelaysEngineRecords(t *testing.T) {
	var out bytes.Buffer
	log := slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelInfo,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}}))
	tl := newTail(log)
	when := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Format(time.RFC3339Nano)
	lines := []string{
		`{"time":"` + when + `","level":"INFO","msg":"js: session phases","pid":3,"warm_worker":"warm_worker_hit","bootstrap":"1.5ms"}`,
		`{"time":"` + when + `","level":"DEBUG","msg":"hidden"}`,
		`fatal error: something raw`,
		`{"level":"INFO","msg":` + "\n",
	}
	for _, l := range lines {
		_, _ = tl.Write([]byte(l + "\n"))
	}
	got := out.String()
	for _, want := range []string{
		`level=INFO msg="js: session phases" pid=3 warm_worker=warm_worker_hit bootstrap=1.5ms`,
		`level=WARN msg="secexec engine: fatal error: something raw"`,
		`level=WARN msg="secexec engine: {\"level\":\"INFO\",\"msg\":"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("relayed log lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "hidden") {
		t.Errorf("a DEBUG record passed an INFO logger:\n%s", got)
	}
}

// The client decodes what an engine writes on stderr, and an engine may be
// under a guest's control: no line may panic it or turn into a record
// without a level and a message.
func FuzzDecodeRecord(f *testing.F) {
	for _, s := range []string{
		`{"time":"2026-01-02T03:04:05Z","level":"INFO","msg":"js: session phases","pid":3,"bootstrap":"1.5ms"}`,
		`{"level":"DEBUG+2","msg":"x","nested":{"a":[1,2,{"b":null}]},"n":1e308,"big":123456789012345678901234567890}`,
		`{"level":"INFO","msg":`, `{}`, `[]`, `{"msg":"no level"}`, `{"level":"LOUD","msg":"bad level"}`,
		`fatal error: runtime: out of memory`, `{"level":"INFO","msg":"x","msg":"twice"}`, "{\"level\":\"INFO\",\"msg\":\"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		rec, ok := decodeRecord(line)
		if ok && rec.Message == "" && !bytes.Contains(line, []byte(`"msg":""`)) && !bytes.Contains(line, []byte(`"msg"`)) {
			t.Fatalf("record without a message from %q", line)
		}
		tl := newTail(slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelDebug})))
		_, _ = tl.Write(append(line, '\n'))
		_ = tl.lastLine()
	})
}
