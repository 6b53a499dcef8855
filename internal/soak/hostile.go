package soak

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/andybalholm/brotli"

	"github.com/secexec/secexec/kernel/policy"
)

// attack is one hostile operation of tenant A, from issue 19's findings.
// Tenant A's requests may fail; the soak checks that they are answered
// within Bound, that they leave tenant B alone, that the memory they
// make the server and the engines take stays within bounds, and what
// Run itself checks of the answer.
type attack struct {
	name  string
	about string
	// vm returns the body of the VM create request (nil: {}). A
	// memory_bytes limit the server refuses (it has no --max-memory) is
	// dropped, and the run notes it.
	vm func(e *attackEnv) map[string]any
	// refusalOK: a 4xx answer to the VM create request is the defence
	// (the VM is refused), not a failure of the attack's set-up.
	refusalOK bool
	// run attacks the VM; it returns what the answer was, and a
	// *finding when the answer shows that a defence did not hold.
	run func(ctx context.Context, e *attackEnv, vm string) (string, error)
	// bound is how long the attack may take to be answered.
	bound time.Duration
	// serverGrowth and engineGrowth bound how much the peak RSS of the
	// server, and of the engines together, may rise during the attack
	// (0: defaultServerGrowth, defaultEngineGrowth; -1: not checked).
	serverGrowth, engineGrowth int64
	// killsEngine: the attack kills its engine on purpose (a V8 fatal
	// error). An engine lost during it is expected, not a leak; its
	// replacement is counted like any engine.
	killsEngine bool
}

// The default bounds of an attack's peak RSS growth: well above what
// tenant B's concurrent load moves, well below what the undefended
// attacks cost (hundreds of MiB to GiB, issue 19).
const (
	defaultServerGrowth = 256 << 20
	defaultEngineGrowth = 512 << 20
)

// finding is an answer that shows a defence did not hold.
type finding struct{ kind, detail string }

func (f *finding) Error() string { return f.kind + ": " + f.detail }

func found(kind, format string, a ...any) *finding {
	return &finding{kind: kind, detail: fmt.Sprintf(format, a...)}
}

// attackEnv is what attacks share: tenant A's client and the loopback
// service a tool callback must not reach.
type attackEnv struct {
	c        *apiClient
	internal *internalService
	bombOnce sync.Once
	bomb     []byte
}

// engineText matches engine internals in an answer: Go source positions,
// goroutine dumps, register dumps.
var engineText = regexp.MustCompile(`\.go:\d+|goroutine \d+ \[|\b(r[a-z0-9]{1,5}|[cdefgs]s)\s+0x[0-9a-f]+|0x[0-9a-f]{12,}`)

// execAttack runs an exec and describes the answer: an exec result or an
// API error are both answers.
func execAttack(ctx context.Context, e *attackEnv, vm string, req map[string]any) (*execResult, string, error) {
	res, err := e.c.exec(ctx, vm, req)
	var ae *APIError
	switch {
	case err == nil:
		out := res.String()
		if n := len(res.Stdout); n > 0 && n <= 200 { // a script's one-line summary
			line, _, _ := strings.Cut(strings.TrimSpace(string(res.Stdout)), "\n")
			out += ": " + line
		}
		return res, out, nil
	case errors.As(err, &ae):
		out := fmt.Sprintf("answered %d %s", ae.Status, ae.Code)
		if engineText.MatchString(ae.Message) {
			return nil, out, found("engine-text", "the answer to tenant A carries engine internals: %q", clip(ae.Message, 200))
		}
		return nil, out, nil
	}
	return nil, "", err
}

func nodeArgv(script string) []string { return []string{"node", "-e", script} }

// attacks is the table of tenant A's attacks, in the order they rotate.
// Add an attack by adding an entry.
var attacks = []*attack{
	{
		name:  "fork",
		about: "shell fork bomb f(){ f | f & }; f under a 5 s timeout",
		run: func(ctx context.Context, e *attackEnv, vm string) (string, error) {
			_, out, err := execAttack(ctx, e, vm, map[string]any{"cmd": "f(){ f | f & }; f; sleep 2", "timeout_ms": 5000})
			return out, err
		},
		bound: 20 * time.Second,
	},
	{
		name:  "flood-sse",
		about: "output flood (yes) streamed as server-sent events",
		run: func(ctx context.Context, e *attackEnv, vm string) (string, error) {
			return floodSSE(ctx, e, vm)
		},
		bound: 40 * time.Second,
	},
	{
		name:  "tool-ssrf",
		about: "a tool whose callback URL is a loopback address the operator never named",
		vm: func(e *attackEnv) map[string]any {
			return map[string]any{"permissions": toolPolicy(), "tools": []map[string]string{{"name": "probe", "url": e.internal.url + "/admin"}}}
		},
		refusalOK: true,
		run: func(ctx context.Context, e *attackEnv, vm string) (string, error) {
			before := e.internal.hits.Load()
			res, out, err := execAttack(ctx, e, vm, map[string]any{"timeout_ms": 40000, "argv": nodeArgv(
				`require('secexec:tools').call('probe', {}).then(r => console.log('RESULT', JSON.stringify(r)), e => console.log('ERROR', e.code, e.message))`)})
			var fs []error
			if hits := e.internal.hits.Load() - before; hits > 0 {
				fs = append(fs, found("ssrf", "the server sent %d request(s) to a loopback address (%s) on tenant A's behalf", hits, e.internal.url))
			}
			if err == nil && res != nil && bytes.Contains(res.Stdout, []byte("answered 401")) {
				fs = append(fs, found("ssrf-oracle", "the guest learns the status of a loopback service: %q", clip(string(res.Stdout), 200)))
			}
			return out, errors.Join(append(fs, err)...)
		},
		bound: 45 * time.Second,
	},
	{
		name:  "sparse-tar",
		about: "a 3 KiB tar upload holding one PAX sparse entry of 512 MiB",
		run: func(ctx context.Context, e *attackEnv, vm string) (string, error) {
			_, _, err := e.c.do(ctx, http.MethodPut, "/v1/vms/"+vm+"/archive?path=/workspace/sparse", sparseTar(512<<20), "Content-Type", "application/x-tar")
			var ae *APIError
			if errors.As(err, &ae) {
				return fmt.Sprintf("answered %d %s", ae.Status, ae.Code), nil
			}
			if err == nil {
				return "answered 204", nil
			}
			return "", err
		},
		bound: 60 * time.Second,
	},
	{
		name:  "detached",
		about: "node spawns a detached child (sleep 30; echo LATE) and exits, under a 2 s timeout",
		run: func(ctx context.Context, e *attackEnv, vm string) (string, error) {
			res, out, err := execAttack(ctx, e, vm, map[string]any{"timeout_ms": 2000, "argv": nodeArgv(
				`require('child_process').spawn('sh', ['-c', 'sleep 30; echo LATE'], {detached: true, stdio: 'inherit'}).unref()`)})
			if err == nil && res != nil && bytes.Contains(res.Stdout, []byte("LATE")) {
				return out, found("outlived-timeout", "a detached child's output came %.1fs after the exec started, past its 2 s timeout", float64(res.DurationMS)/1000)
			}
			return out, err
		},
		bound: 7 * time.Second, // the issue asks for 1 s past the deadline; a busy machine gets more
	},
	{
		name:  "oom",
		about: "V8 fatal out-of-memory in node (new Array(2e8).fill(1.5)): kills the engine it runs in",
		run: func(ctx context.Context, e *attackEnv, vm string) (string, error) {
			_, out, err := execAttack(ctx, e, vm, map[string]any{"argv": nodeArgv(`new Array(2e8).fill(1.5)`), "timeout_ms": 120000})
			return out, err
		},
		// Undefended, V8 takes about a minute on a busy machine to fail.
		bound: 150 * time.Second, engineGrowth: -1, killsEngine: true,
	},
	{
		name:  "scrypt",
		about: "a crypto.scryptSync loop under cpu_time_ms 1000 and a 20 s timeout",
		vm:    func(*attackEnv) map[string]any { return map[string]any{"limits": map[string]any{"cpu_time_ms": 1000}} },
		run: func(ctx context.Context, e *attackEnv, vm string) (string, error) {
			res, out, err := execAttack(ctx, e, vm, map[string]any{"timeout_ms": 20000, "argv": nodeArgv(
				`const c = require('crypto'); for (;;) c.scryptSync('x', 'y', 64, {N: 16384})`)})
			if err == nil && res != nil && res.DurationMS >= 18000 {
				return out, found("cpu-not-charged", "ran %.1fs, to the 20 s wall-clock timeout, under cpu_time_ms 1000: the CPU of host-side crypto is not charged", float64(res.DurationMS)/1000)
			}
			return out, err
		},
		bound: 35 * time.Second,
	},
	{
		name:  "flood",
		about: "output flood (yes) answered as JSON",
		run: func(ctx context.Context, e *attackEnv, vm string) (string, error) {
			res, out, err := execAttack(ctx, e, vm, map[string]any{"cmd": "yes", "timeout_ms": 10000})
			if err == nil && res != nil && (len(res.Stdout) > 16<<20 || len(res.Stderr) > 16<<20) {
				return out, found("unbounded-output", "the answer holds %d bytes of stdout, over the server's 16 MiB output limit", len(res.Stdout))
			}
			return out, err
		},
		bound: 40 * time.Second,
		// The JSON answer (two 16 MiB streams, base64) is made whole in
		// the server's memory: a few hundred MiB at peak, bounded.
		serverGrowth: 768 << 20,
	},
	{
		name:  "brotli",
		about: "two brotli bombs (1 GiB of zeros) inflated at once under memory_bytes 32 MiB",
		vm: func(*attackEnv) map[string]any {
			return map[string]any{"limits": map[string]any{"memory_bytes": 32 << 20}}
		},
		run: func(ctx context.Context, e *attackEnv, vm string) (string, error) {
			if _, _, err := e.c.do(ctx, http.MethodPut, "/v1/vms/"+vm+"/files/workspace/bomb.br", e.brotliBomb()); err != nil {
				return "", fmt.Errorf("uploading the bomb: %w", err)
			}
			_, out, err := execAttack(ctx, e, vm, map[string]any{"timeout_ms": 60000, "argv": nodeArgv(
				`const z = require('zlib'), b = require('fs').readFileSync('/workspace/bomb.br');
				Promise.all([0, 1].map(() => new Promise(r => z.brotliDecompress(b, (e, o) => r(e ? e.code : o.length))))).then(v => console.log(JSON.stringify(v)))`)})
			return out, err
		},
		bound: 90 * time.Second,
	},
	{
		name:  "execsync",
		about: "execSync(head -c 1e9 /dev/zero, {maxBuffer: Infinity}) under memory_bytes 32 MiB",
		vm: func(*attackEnv) map[string]any {
			return map[string]any{"limits": map[string]any{"memory_bytes": 32 << 20}}
		},
		run: func(ctx context.Context, e *attackEnv, vm string) (string, error) {
			_, out, err := execAttack(ctx, e, vm, map[string]any{"timeout_ms": 60000, "argv": nodeArgv(
				`try { const o = require('child_process').execSync('head -c 1000000000 /dev/zero', {maxBuffer: Infinity}); console.log('GOT', o.length) } catch (e) { console.log('ERR', e.code || e.message) }`)})
			return out, err
		},
		bound: 90 * time.Second,
	},
	{
		name:  "many-node",
		about: "24 node processes holding 96 MiB of buffers each, under memory_bytes 128 MiB and vm_memory_bytes 384 MiB",
		vm: func(*attackEnv) map[string]any {
			return map[string]any{"limits": map[string]any{"memory_bytes": 128 << 20, "vm_memory_bytes": 384 << 20}}
		},
		run: func(ctx context.Context, e *attackEnv, vm string) (string, error) {
			_, out, err := execAttack(ctx, e, vm, map[string]any{"timeout_ms": 60000, "argv": nodeArgv(
				`const {spawn} = require('child_process'); let left = 24, codes = [];
				const kid = "const a = []; for (let i = 0; i < 96; i++) a.push(Buffer.alloc(1 << 20, 1)); setTimeout(() => {}, 3000)";
				for (let i = 0; i < 24; i++) spawn('node', ['-e', kid], {stdio: 'ignore'}).on('exit', c => { codes.push(c); if (--left === 0) console.log(JSON.stringify(codes)) })`)})
			return out, err
		},
		bound: 90 * time.Second,
	},
	{
		name:  "devzero",
		about: "GET /files/dev/zero, four at once",
		run: func(ctx context.Context, e *attackEnv, vm string) (string, error) {
			var wg sync.WaitGroup
			outs := make([]string, 4)
			errs := make([]error, 4)
			for i := range outs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					resp, err := e.c.send(ctx, http.MethodGet, "/v1/vms/"+vm+"/files/dev/zero", nil)
					if err != nil {
						errs[i] = err
						return
					}
					defer resp.Body.Close()
					n, err := io.Copy(io.Discard, io.LimitReader(resp.Body, 128<<20))
					switch {
					case resp.StatusCode == http.StatusOK && n >= 128<<20:
						errs[i] = found("unbounded-read", "GET /files/dev/zero streamed over %d bytes", n)
					case resp.StatusCode == http.StatusOK:
						outs[i] = fmt.Sprintf("200 with %d bytes", n)
					case err != nil:
						errs[i] = err
					default:
						outs[i] = fmt.Sprintf("answered %d", resp.StatusCode)
					}
				}()
			}
			wg.Wait()
			return strings.Join(slices.Compact(outs), ", "), errors.Join(errs...)
		},
		bound: 60 * time.Second,
	},
}

// AttackNames are the names --hostile accepts, in rotation order.
func AttackNames() []string {
	out := make([]string, len(attacks))
	for i, a := range attacks {
		out[i] = a.name
	}
	return out
}

// AttackHelp describes each attack on a line, for --help.
func AttackHelp() string {
	var b strings.Builder
	for _, a := range attacks {
		fmt.Fprintf(&b, "  %-11s %s\n", a.name, a.about)
	}
	return b.String()
}

// ErrUnknownAttack is matched by a --hostile list naming no attack.
var ErrUnknownAttack = errors.New("soak: unknown attack")

// ParseHostile turns a --hostile value — all, none, or names separated
// by commas — into attack names.
func ParseHostile(s string) ([]string, error) {
	switch strings.TrimSpace(s) {
	case "all":
		return AttackNames(), nil
	case "none", "":
		return nil, nil
	}
	var out []string
	for _, n := range strings.Split(s, ",") {
		n = strings.TrimSpace(n)
		if !slices.Contains(AttackNames(), n) {
			return nil, fmt.Errorf("%w %q (known: all, none, %s)", ErrUnknownAttack, n, strings.Join(AttackNames(), ","))
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, nil
}

func attackByName(name string) *attack {
	for _, a := range attacks {
		if a.name == name {
			return a
		}
	}
	return nil
}

// floodSSE streams `yes` as server-sent events and counts what comes.
func floodSSE(ctx context.Context, e *attackEnv, vm string) (string, error) {
	resp, err := e.c.send(ctx, http.MethodPost, "/v1/vms/"+vm+"/exec", map[string]any{"cmd": "yes", "timeout_ms": 10000}, "Accept", "text/event-stream")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		ae := answerError(resp.StatusCode, data)
		return fmt.Sprintf("answered %d %s", ae.Status, ae.Code), nil
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	var bytesIn int64
	var events []string
	event := ""
	for sc.Scan() {
		line := sc.Text()
		bytesIn += int64(len(line)) + 1
		if v, ok := strings.CutPrefix(line, "event: "); ok {
			event = v
			if event != "stdout" && event != "stderr" {
				events = append(events, event)
			}
		}
		if v, ok := strings.CutPrefix(line, "data: "); ok && event == "error" {
			var m struct{ Code string }
			_ = json.Unmarshal([]byte(v), &m)
			events[len(events)-1] += "(" + m.Code + ")"
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("reading the stream: %w", err)
	}
	out := fmt.Sprintf("streamed %d MiB, then %s", bytesIn>>20, strings.Join(events, ", "))
	// Two streams of 16 MiB each, base64 in events: about 43 MiB at most.
	if bytesIn > 48<<20 {
		return out, found("unbounded-output", "the stream carried %d MiB, over the server's output limit", bytesIn>>20)
	}
	if !slices.ContainsFunc(events, func(s string) bool { return strings.HasPrefix(s, "exit") }) {
		return out, found("no-exit-event", "the stream ended without an exit event")
	}
	return out, nil
}

// toolPolicy is the server's standard permissions plus every tool.
func toolPolicy() *policy.Policy {
	p := policy.DenyAll().AllowFS(policy.AllFSOps(), "/**").AllowExec("*", "/**").AllowTool("*")
	p.Net = append(p.Net, policy.NetRule{Effect: policy.Allow, Ops: []policy.NetOp{policy.NetListen}, Hosts: []string{"*"}})
	return p
}

// sparseTar returns a tar of one PAX (GNU 1.0) sparse entry that expands
// to size bytes of zeros from a few KiB of archive. archive/tar cannot
// write one, so the blocks are made here.
func sparseTar(size int64) []byte {
	record := func(k, v string) string {
		s := " " + k + "=" + v + "\n"
		n := len(s)
		for { // the length prefix counts itself
			t := strconv.Itoa(n) + s
			if len(t) == n {
				return t
			}
			n = len(t)
		}
	}
	header := func(name string, size int64, flag byte) []byte {
		b := make([]byte, 512)
		copy(b[0:100], name)
		copy(b[100:], "0000644\x00")
		copy(b[108:], "0000000\x00")
		copy(b[116:], "0000000\x00")
		copy(b[124:], fmt.Sprintf("%011o\x00", size))
		copy(b[136:], "00000000000\x00")
		b[156] = flag
		copy(b[257:], "ustar\x0000")
		copy(b[148:156], "        ")
		sum := 0
		for _, c := range b {
			sum += int(c)
		}
		copy(b[148:], fmt.Sprintf("%06o\x00 ", sum))
		return b
	}
	pad := func(b []byte) []byte { return append(b, make([]byte, (512-len(b)%512)%512)...) }
	recs := record("GNU.sparse.major", "1") + record("GNU.sparse.minor", "0") +
		record("GNU.sparse.name", "zeros") + record("GNU.sparse.realsize", strconv.FormatInt(size, 10))
	var buf bytes.Buffer
	buf.Write(header("PaxHeaders.0/zeros", int64(len(recs)), 'x'))
	buf.Write(pad([]byte(recs)))
	buf.Write(header("GNUSparseFile.0/zeros", 512, '0'))
	buf.Write(pad([]byte("0\n"))) // a sparse map of no data: all hole
	buf.Write(make([]byte, 1024))
	return buf.Bytes()
}

// brotliBomb is 1 GiB of zeros, brotli-compressed (about 190 KiB at
// quality 1, made in well under a second; higher qualities are far
// smaller but take minutes).
func (e *attackEnv) brotliBomb() []byte {
	e.bombOnce.Do(func() {
		var buf bytes.Buffer
		w := brotli.NewWriterOptions(&buf, brotli.WriterOptions{Quality: 1, LGWin: 24})
		zeros := make([]byte, 1<<20)
		for range 1024 {
			_, _ = w.Write(zeros)
		}
		_ = w.Close()
		e.bomb = buf.Bytes()
	})
	return e.bomb
}

// internalService is a loopback HTTP service of the operator's, which
// answers 401 as an internal admin endpoint would: no tenant request
// may reach it through the server.
type internalService struct {
	url  string
	hits atomic.Int64
	srv  *http.Server
}

func startInternalService() (*internalService, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &internalService{url: "http://" + ln.Addr().String()}
	s.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		// No keep-alive: an idle connection in the server's pool would
		// count as a leaked descriptor at the end.
		w.Header().Set("Connection", "close")
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	})}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

func (s *internalService) close() { _ = s.srv.Close() }
