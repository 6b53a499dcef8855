package webget

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/secexec/secexec/userland/internal/netconn"
)

// Env is what a command runs with.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// curlVersion is the curl this imitates; servers that answer curl
// differently (plain text instead of HTML) key on the "curl/" prefix.
const curlVersion = "7.88.1"

// Curl exit statuses (curl's CURLE_ codes).
const (
	exitUsage         = 2
	exitURLMalformat  = 3
	exitResolve       = 6
	exitConnect       = 7
	exitWeirdReply    = 8
	exitPartialFile   = 18
	exitHTTPError     = 22
	exitWriteError    = 23
	exitReadError     = 26
	exitTimeout       = 28
	exitTLSConnect    = 35
	exitTooManyRedirs = 47
	exitEmptyReply    = 52
	exitRecvError     = 56
	exitPeerVerify    = 60
)

// curlError is a failed transfer: curl's exit status and message.
type curlError struct {
	code int
	msg  string
	// extra follows the message line (curl's advice after code 60).
	extra string
}

func (e *curlError) Error() string { return e.msg }

// output is where one URL's body goes.
type output struct {
	file   string // "" is stdout
	remote bool   // -O: the URL's file name
}

type curlOpts struct {
	silent, showErr, fail, failBody, follow, head, include, verbose bool
	insecure, compressed, get, createDirs, jsonMode                 bool
	forms                                                           []string
	// loaders read data from files and stdin once options are parsed.
	loaders                                   []func() error
	maxRedirs, retry                          int
	retryRefused                              bool
	retryDelay                                time.Duration
	outputs                                   []output
	method                                    string
	headers                                   []string
	data                                      []string
	hasData                                   bool
	writeOut                                  string
	userAgent                                 *string
	user, referer, cookie, dumpHeader, upload string
	maxTime, connectTimeout                   time.Duration
	urls                                      []string
}

// curlFlag describes one option: whether it takes an argument and what
// it does.
type curlFlag struct {
	arg bool
	set func(o *curlOpts, v string, env Env) error
}

var curlShort = map[byte]string{
	's': "silent", 'S': "show-error", 'f': "fail", 'L': "location", 'o': "output", 'O': "remote-name",
	'X': "request", 'H': "header", 'd': "data", 'w': "write-out", 'I': "head", 'i': "include",
	'v': "verbose", 'A': "user-agent", 'u': "user", 'm': "max-time", 'k': "insecure", 'e': "referer",
	'b': "cookie", 'F': "form", 'D': "dump-header", 'G': "get", 'T': "upload-file", 'N': "no-buffer", 'g': "globoff",
	'4': "ipv4", '6': "ipv6", '#': "progress-bar", 'h': "help", 'V': "version", 'q': "disable",
}

func boolFlag(f func(o *curlOpts)) curlFlag {
	return curlFlag{set: func(o *curlOpts, _ string, _ Env) error { f(o); return nil }}
}

func argFlag(f func(o *curlOpts, v string, env Env) error) curlFlag {
	return curlFlag{arg: true, set: f}
}

func seconds(v string) (time.Duration, error) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 {
		return 0, &curlError{code: exitUsage, msg: "expected a proper numerical parameter"}
	}
	return time.Duration(f * float64(time.Second)), nil
}

func ignored() curlFlag { return boolFlag(func(*curlOpts) {}) }

var curlFlags map[string]curlFlag

func init() {
	curlFlags = map[string]curlFlag{
		"silent":         boolFlag(func(o *curlOpts) { o.silent = true }),
		"show-error":     boolFlag(func(o *curlOpts) { o.showErr = true }),
		"fail":           boolFlag(func(o *curlOpts) { o.fail = true }),
		"fail-with-body": boolFlag(func(o *curlOpts) { o.fail, o.failBody = true, true }),
		"location":       boolFlag(func(o *curlOpts) { o.follow = true }),
		"head":           boolFlag(func(o *curlOpts) { o.head = true }),
		"include":        boolFlag(func(o *curlOpts) { o.include = true }),
		"verbose":        boolFlag(func(o *curlOpts) { o.verbose = true }),
		"insecure":       boolFlag(func(o *curlOpts) { o.insecure = true }),
		"compressed":     boolFlag(func(o *curlOpts) { o.compressed = true }),
		"get":            boolFlag(func(o *curlOpts) { o.get = true }),
		"create-dirs":    boolFlag(func(o *curlOpts) { o.createDirs = true }),
		"remote-name":    boolFlag(func(o *curlOpts) { o.outputs = append(o.outputs, output{remote: true}) }),
		"no-buffer":      ignored(), "globoff": ignored(), "ipv4": ignored(), "ipv6": ignored(),
		"progress-bar": ignored(), "http1.1": ignored(), "http1.0": ignored(), "http2": ignored(),
		"no-progress-meter": ignored(), "disable": ignored(), "no-keepalive": ignored(), "tcp-nodelay": ignored(),
		"output": argFlag(func(o *curlOpts, v string, _ Env) error {
			o.outputs = append(o.outputs, output{file: v})
			return nil
		}),
		"request": argFlag(func(o *curlOpts, v string, _ Env) error { o.method = v; return nil }),
		"header":  argFlag(func(o *curlOpts, v string, _ Env) error { o.headers = append(o.headers, v); return nil }),
		"data":    argFlag(func(o *curlOpts, v string, env Env) error { return o.addData(v, true, true, env) }),
		"data-ascii": argFlag(func(o *curlOpts, v string, env Env) error {
			return o.addData(v, true, true, env)
		}),
		"data-binary": argFlag(func(o *curlOpts, v string, env Env) error { return o.addData(v, true, false, env) }),
		"data-raw":    argFlag(func(o *curlOpts, v string, env Env) error { return o.addData(v, false, false, env) }),
		"data-urlencode": argFlag(func(o *curlOpts, v string, env Env) error {
			return o.addURLEncoded(v, env)
		}),
		"form": argFlag(func(o *curlOpts, v string, _ Env) error { o.forms = append(o.forms, v); return nil }),
		"json": argFlag(func(o *curlOpts, v string, env Env) error {
			o.jsonMode = true
			return o.addData(v, true, false, env)
		}),
		"write-out":  argFlag(func(o *curlOpts, v string, _ Env) error { o.writeOut = v; return nil }),
		"user-agent": argFlag(func(o *curlOpts, v string, _ Env) error { o.userAgent = &v; return nil }),
		"user":       argFlag(func(o *curlOpts, v string, _ Env) error { o.user = v; return nil }),
		"referer":    argFlag(func(o *curlOpts, v string, _ Env) error { o.referer = v; return nil }),
		"cookie":     argFlag(func(o *curlOpts, v string, _ Env) error { o.cookie = v; return nil }),
		"dump-header": argFlag(func(o *curlOpts, v string, _ Env) error {
			o.dumpHeader = v
			return nil
		}),
		"upload-file": argFlag(func(o *curlOpts, v string, _ Env) error { o.upload = v; return nil }),
		"url":         argFlag(func(o *curlOpts, v string, _ Env) error { o.urls = append(o.urls, v); return nil }),
		"max-time": argFlag(func(o *curlOpts, v string, _ Env) (err error) {
			o.maxTime, err = seconds(v)
			return err
		}),
		"connect-timeout": argFlag(func(o *curlOpts, v string, _ Env) (err error) {
			o.connectTimeout, err = seconds(v)
			return err
		}),
		"max-redirs": argFlag(func(o *curlOpts, v string, _ Env) error {
			n, err := strconv.Atoi(v)
			if err != nil {
				return &curlError{code: exitUsage, msg: "expected a proper numerical parameter"}
			}
			o.maxRedirs = n
			return nil
		}),
		"retry-connrefused": boolFlag(func(o *curlOpts) { o.retryRefused = true }),
		"retry-delay": argFlag(func(o *curlOpts, v string, _ Env) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return &curlError{code: exitUsage, msg: "expected a proper numerical parameter"}
			}
			o.retryDelay = time.Duration(n) * time.Second
			return nil
		}),
		"retry": argFlag(func(o *curlOpts, v string, _ Env) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return &curlError{code: exitUsage, msg: "expected a proper numerical parameter"}
			}
			o.retry = n
			return nil
		}),
	}
}

// addData adds a -d style piece: at names a file ("-" stdin) when at is
// set, and strip drops its CR and LF bytes as -d does.
func (o *curlOpts) addData(v string, at, strip bool, env Env) error {
	o.hasData = true
	i := len(o.data)
	o.data = append(o.data, v)
	if at && strings.HasPrefix(v, "@") {
		o.loaders = append(o.loaders, func() error {
			b, err := readSource(v[1:], env)
			if err != nil {
				return &curlError{code: exitReadError, msg: "Failed to open/read local data from file/application"}
			}
			if strip {
				b = bytes.ReplaceAll(bytes.ReplaceAll(b, []byte("\r"), nil), []byte("\n"), nil)
			}
			o.data[i] = string(b)
			return nil
		})
	}
	return nil
}

// addURLEncoded is --data-urlencode: "content", "=content",
// "name=content", "@file" or "name@file".
func (o *curlOpts) addURLEncoded(v string, env Env) error {
	o.hasData = true
	name, content := "", v
	i := len(o.data)
	o.data = append(o.data, "")
	enc := func(content string) {
		o.data[i] = url.QueryEscape(content)
		if name != "" {
			o.data[i] = name + "=" + o.data[i]
		}
	}
	if j := strings.IndexAny(v, "=@"); j >= 0 {
		name, content = v[:j], v[j+1:]
		if v[j] == '@' {
			o.loaders = append(o.loaders, func() error {
				b, err := readSource(content, env)
				if err != nil {
					return &curlError{code: exitReadError, msg: "Failed to open/read local data from file/application"}
				}
				enc(string(b))
				return nil
			})
			return nil
		}
	}
	enc(content)
	return nil
}

// load reads the files and standard input the data options name. It
// runs after Restart, which would otherwise lose what was read.
func (o *curlOpts) load() error {
	for _, l := range o.loaders {
		if err := l(); err != nil {
			return err
		}
	}
	return nil
}

func readSource(name string, env Env) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(env.Stdin)
	}
	return os.ReadFile(name)
}

const curlTry = "curl: try 'curl --help' or 'curl --manual' for more information\n"

// parseCurl parses curl's command line.
func parseCurl(args []string, env Env) (*curlOpts, int, error) {
	o := &curlOpts{maxRedirs: 50}
	unknown := func(name string) (*curlOpts, int, error) {
		return nil, exitUsage, fmt.Errorf("curl: option %s: is unknown\n%s", name, curlTry)
	}
	apply := func(name, shown string, inline *string, i *int) error {
		f, ok := curlFlags[name]
		neg := false
		if !ok && strings.HasPrefix(name, "no-") {
			if f, ok = curlFlags[name[3:]]; ok && !f.arg {
				neg = true
			}
		}
		if !ok {
			return errUnknown
		}
		if neg {
			return nil // --no-X turns off what is off by default
		}
		v := ""
		if f.arg {
			switch {
			case inline != nil:
				v = *inline
			case *i+1 < len(args):
				*i++
				v = args[*i]
			default:
				return fmt.Errorf("curl: option %s: requires parameter\n%s", shown, curlTry)
			}
		}
		return f.set(o, v, env)
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--help" || a == "-h":
			return nil, 0, errHelp
		case a == "--version" || a == "-V":
			return nil, 0, errVersion
		case strings.HasPrefix(a, "--") && len(a) > 2:
			if err := apply(a[2:], a, nil, &i); err != nil {
				if err == errUnknown {
					return unknown(a)
				}
				return nil, exitUsage, err
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			for j := 1; j < len(a); j++ {
				c := a[j]
				name, ok := curlShort[c]
				if !ok {
					return unknown("-" + string(c))
				}
				if c == 'h' || c == 'V' {
					if c == 'h' {
						return nil, 0, errHelp
					}
					return nil, 0, errVersion
				}
				var inline *string
				if curlFlags[name].arg && j+1 < len(a) {
					rest := a[j+1:]
					inline = &rest
				}
				if err := apply(name, "-"+string(c), inline, &i); err != nil {
					return nil, exitUsage, err
				}
				if inline != nil {
					break
				}
			}
		default:
			o.urls = append(o.urls, a)
		}
	}
	if len(o.urls) == 0 {
		return nil, exitUsage, fmt.Errorf("curl: no URL specified!\n%s", curlTry)
	}
	return o, 0, nil
}

var (
	errUnknown = errors.New("unknown option")
	errHelp    = errors.New("help")
	errVersion = errors.New("version")
)

const curlHelp = `Usage: curl [options...] <url>
 -d, --data <data>          HTTP POST data
     --data-binary <data>   HTTP POST binary data
     --data-raw <data>      HTTP POST data, '@' allowed
     --data-urlencode <data> HTTP POST data url encoded
 -D, --dump-header <filename> Write the received headers to <filename>
 -f, --fail                 Fail fast with no output on HTTP errors
 -G, --get                  Put the post data in the URL and use GET
 -H, --header <header/@file> Pass custom header(s) to server
 -I, --head                 Show document info only
 -i, --include              Include protocol response headers in the output
 -k, --insecure             Allow insecure server connections
     --json <data>          HTTP POST JSON
 -L, --location             Follow redirects
 -m, --max-time <seconds>   Maximum time allowed for transfer
 -o, --output <file>        Write to file instead of stdout
 -O, --remote-name          Write output to a file named as the remote file
 -X, --request <method>     Specify request method to use
 -s, --silent               Silent mode
 -S, --show-error           Show error even when -s is used
 -u, --user <user:password> Server user and password
 -A, --user-agent <name>    Send User-Agent <name> to server
 -v, --verbose              Make the operation more talkative
 -w, --write-out <format>   Use output FORMAT after completion
`

// Curl runs curl with args (without the program name).
func Curl(args []string, env Env) int {
	o, code, err := parseCurl(args, env)
	switch {
	case err == errHelp:
		fmt.Fprint(env.Stdout, curlHelp)
		return 0
	case err == errVersion:
		fmt.Fprintf(env.Stdout, "curl %s (wasm32-wasip1) secexec\nProtocols: http https\nFeatures: libz\n", curlVersion)
		return 0
	case err != nil:
		var ce *curlError
		if errors.As(err, &ce) {
			fmt.Fprintf(env.Stderr, "curl: (%d) %s\n", ce.code, ce.msg)
			return ce.code
		}
		fmt.Fprint(env.Stderr, err.Error())
		return code
	}
	// Returns only when the host already verifies as asked or the
	// restart failed; either way, carry on.
	_ = netconn.Restart(o.insecure)
	if err := o.load(); err != nil {
		var ce *curlError
		errors.As(err, &ce)
		fmt.Fprintf(env.Stderr, "curl: (%d) %s\n", ce.code, ce.msg)
		return ce.code
	}
	r := &curlRun{o: o, env: env, c: newClient(o.connectTimeout, o.insecure)}
	defer r.c.close()
	if o.verbose {
		r.c.onConnect = func(host, port string) {
			fmt.Fprintf(env.Stderr, "*   Trying %s...\n", net.JoinHostPort(host, port))
		}
		n := 0
		r.c.onConnected = func(host, port string) {
			// The host resolved the name: its address is not known here.
			fmt.Fprintf(env.Stderr, "* Connected to %s (%s) port %s (#%d)\n", host, host, port, n)
			n++
		}
	}
	status := 0
	for i, u := range o.urls {
		var out output
		if i < len(o.outputs) {
			out = o.outputs[i]
		}
		if err := r.transfer(u, out); err != nil {
			status = r.report(err)
		}
	}
	return status
}

// curlRun is one curl invocation.
type curlRun struct {
	o     *curlOpts
	env   Env
	c     *client
	start time.Time
	// formType is the multipart Content-Type of -F's body.
	formType string
}

func (r *curlRun) report(err error) int {
	var ce *curlError
	if !errors.As(err, &ce) {
		ce = &curlError{code: exitRecvError, msg: err.Error()}
	}
	if !r.o.silent || r.o.showErr {
		fmt.Fprintf(r.env.Stderr, "curl: (%d) %s\n%s", ce.code, ce.msg, ce.extra)
	}
	return ce.code
}

// parseURL applies curl's defaults: no scheme means http.
func parseURL(raw string) (*url.URL, error) {
	s := raw
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		if err == nil && u.Host != "" && u.Scheme != "" {
			return nil, &curlError{code: 1, msg: fmt.Sprintf("Protocol \"%s\" not supported or disabled in libcurl", u.Scheme)}
		}
		return nil, &curlError{code: exitURLMalformat, msg: "URL using bad/illegal format or missing URL"}
	}
	if u.Path == "" {
		u.Path = "/"
	}
	return u, nil
}

// header is one request header in the order curl sends them.
type header struct{ name, value string }

// stats are what -w reports.
type stats struct {
	code        int
	url         string
	contentType string
	size        int64
	headerSize  int
	redirects   int
	redirectURL string
	method      string
	start       time.Time
	remote      string
}

// transfer fetches one URL with the options.
func (r *curlRun) transfer(raw string, out output) error {
	o := r.o
	u, err := parseURL(raw)
	if err != nil {
		return err
	}
	data := strings.Join(o.data, "&")
	if o.jsonMode {
		data = strings.Join(o.data, "")
	}
	method, hasBody := "GET", false
	var body []byte
	switch {
	case o.head:
		method = "HEAD"
	case o.get && o.hasData:
		if u.RawQuery != "" {
			u.RawQuery += "&" + data
		} else {
			u.RawQuery = data
		}
	case o.upload != "":
		b, err := readSource(o.upload, r.env)
		if err != nil {
			return &curlError{code: exitReadError, msg: "Failed to open/read local data from file/application"}
		}
		method, hasBody, body = "PUT", true, b
		if strings.HasSuffix(u.Path, "/") && o.upload != "-" {
			u.Path += filepath.Base(o.upload)
		}
	case len(o.forms) > 0:
		b, ct, err := buildForm(o.forms, r.env)
		if err != nil {
			return err
		}
		method, hasBody, body, r.formType = "POST", true, b, ct
	case o.hasData:
		method, hasBody, body = "POST", true, []byte(data)
	}
	if o.method != "" {
		method = o.method
	}
	ctx := context.Background()
	if o.maxTime > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.maxTime)
		defer cancel()
	}
	r.start = time.Now()
	st := &stats{start: r.start, method: method}
	attempts := o.retry + 1
	var lastErr error
attempts:
	for attempt := 0; attempt < attempts; attempt++ {
		if attempt > 0 {
			wait := time.Second << min(attempt-1, 9)
			if o.retryDelay > 0 {
				wait = o.retryDelay
			}
			if !o.silent {
				problem := "timeout"
				var ce *curlError
				if lastErr == nil || errors.As(lastErr, &ce) && ce.code == exitHTTPError {
					problem = "HTTP error"
				}
				fmt.Fprintf(r.env.Stderr, "Warning: Problem : %s. Will retry in %d seconds. %d retries left.\n", problem, int(wait.Seconds()), attempts-attempt)
			}
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				break attempts
			}
		}
		var retry bool
		retry, lastErr = r.chain(ctx, u, method, hasBody, body, out, st)
		if !retry || attempt+1 == attempts {
			break
		}
		if lastErr != nil {
			// Each failed attempt is reported, as curl does.
			r.report(lastErr)
		}
	}
	if o.writeOut != "" {
		r.writeOut(st, lastErr)
	}
	return lastErr
}

// chain makes the request and follows redirects; retry reports whether a
// failure is transient (for --retry).
func (r *curlRun) chain(ctx context.Context, u *url.URL, method string, hasBody bool, body []byte, out output, st *stats) (retry bool, err error) {
	o := r.o
	st.redirects = 0
	origin := u.Host
	for {
		req, err := r.request(ctx, u, method, hasBody, body, u.Host == origin)
		if err != nil {
			return false, err
		}
		resp, ex, err := r.c.do(req, hasBody)
		if err != nil {
			ce := r.classify(ctx, u, err, 0)
			return ce.code == exitTimeout || ce.code == exitConnect && o.retryRefused, ce
		}
		st.url, st.code = u.String(), resp.StatusCode
		st.contentType = resp.Header.Get("Content-Type")
		st.remote = ""
		if r.o.verbose {
			r.verbose(ex, resp)
		}
		heads := rawHeads(ex, resp)
		st.headerSize = 0
		for _, h := range heads {
			st.headerSize += len(h)
		}
		loc := resp.Header.Get("Location")
		st.redirectURL = ""
		if loc != "" {
			if next, err := u.Parse(loc); err == nil {
				st.redirectURL = next.String()
			}
		}
		redirect := o.follow && loc != "" && resp.StatusCode >= 300 && resp.StatusCode < 400 && resp.StatusCode != 304
		failed := o.fail && resp.StatusCode >= 400
		// Headers are written even when --fail then fails.
		if err := r.writeHeads(heads); err != nil {
			resp.Body.Close()
			return false, err
		}
		// curl's transient HTTP errors, retried with --retry.
		transient := resp.StatusCode == 408 || resp.StatusCode == 429 || resp.StatusCode == 500 ||
			resp.StatusCode == 502 || resp.StatusCode == 503 || resp.StatusCode == 504
		if failed && !o.failBody {
			resp.Body.Close()
			return transient, &curlError{code: exitHTTPError, msg: fmt.Sprintf("The requested URL returned error: %d", resp.StatusCode)}
		}
		if redirect {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
			resp.Body.Close()
			if st.redirects >= o.maxRedirs {
				return false, &curlError{code: exitTooManyRedirs, msg: fmt.Sprintf("Maximum (%d) redirects followed", o.maxRedirs)}
			}
			st.redirects++
			next, err := u.Parse(loc)
			if err != nil {
				return false, &curlError{code: exitURLMalformat, msg: "URL using bad/illegal format or missing URL"}
			}
			// curl turns a POST into a GET after 301, 302 and 303, unless
			// the method was set with -X.
			if resp.StatusCode == 303 && method != "HEAD" || (resp.StatusCode == 301 || resp.StatusCode == 302) && method == "POST" {
				if o.method == "" {
					method = "GET"
				}
				hasBody, body = false, nil
			}
			u = next
			continue
		}
		if o.head || method == "HEAD" {
			resp.Body.Close()
			st.size = 0
			return false, nil
		}
		n, err := r.writeBody(ctx, u, resp, out)
		st.size = n
		if err != nil {
			return false, err
		}
		if failed {
			return transient, &curlError{code: exitHTTPError, msg: fmt.Sprintf("The requested URL returned error: %d", resp.StatusCode)}
		}
		return transient, nil
	}
}

// request builds the request curl sends, its headers in curl's order.
//
// Credentials (-u, Authorization and Cookie headers) go to the first
// host only: after a redirect to another, curl leaves them out.
func (r *curlRun) request(ctx context.Context, u *url.URL, method string, hasBody bool, body []byte, origin bool) (*http.Request, error) {
	o := r.o
	var rd io.Reader
	if hasBody {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return nil, &curlError{code: exitURLMalformat, msg: "URL using bad/illegal format or missing URL"}
	}
	ua := "curl/" + curlVersion
	if o.userAgent != nil {
		ua = *o.userAgent
	}
	hs := []header{{"User-Agent", ua}, {"Accept", "*/*"}}
	switch {
	case !origin:
		// No credentials for another host.
	case o.user != "":
		user, pass, _ := strings.Cut(o.user, ":")
		hs = append(hs, header{"Authorization", "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))})
	case u.User != nil:
		pass, _ := u.User.Password()
		hs = append(hs, header{"Authorization", "Basic " + base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pass))})
	}
	if o.referer != "" {
		hs = append(hs, header{"Referer", o.referer})
	}
	if o.cookie != "" && strings.Contains(o.cookie, "=") && origin {
		hs = append(hs, header{"Cookie", o.cookie})
	}
	if o.compressed {
		hs = append(hs, header{"Accept-Encoding", "deflate, gzip"})
	}
	if hasBody && o.upload == "" {
		ct := "application/x-www-form-urlencoded"
		if r.formType != "" {
			ct = r.formType
		} else if o.jsonMode {
			ct = "application/json"
			hs = setHeader(hs, "Accept", "application/json")
		}
		hs = append(hs, header{"Content-Type", ct})
	}
	for _, h := range o.headers {
		name, value, ok := strings.Cut(h, ":")
		if !ok {
			if n, empty := strings.CutSuffix(h, ";"); empty {
				hs = setHeader(hs, n, "")
			}
			continue
		}
		name = strings.TrimSpace(name)
		value = strings.TrimSpace(value)
		if !origin && (strings.EqualFold(name, "Authorization") || strings.EqualFold(name, "Cookie")) {
			continue
		}
		if value == "" {
			hs = delHeader(hs, name)
			continue
		}
		hs = setHeader(hs, name, value)
	}
	req.Header = http.Header{}
	hasUA := false
	for _, h := range hs {
		key := h.name
		switch canon := http.CanonicalHeaderKey(key); canon {
		case "Host":
			req.Host = h.value
			continue
		case "Content-Length", "Transfer-Encoding", "Trailer", "Connection":
			continue // net/http writes these itself
		case "User-Agent":
			key, hasUA = canon, true
		}
		req.Header[key] = append(req.Header[key], h.value)
	}
	if !hasUA {
		// An empty value makes net/http send no User-Agent at all, as
		// curl does after -H 'User-Agent:'.
		req.Header["User-Agent"] = []string{""}
	}
	if u.User != nil {
		req.URL.User = nil
	}
	return req, nil
}

func setHeader(hs []header, name, value string) []header {
	for i, h := range hs {
		if strings.EqualFold(h.name, name) {
			hs[i] = header{name, value}
			return hs
		}
	}
	return append(hs, header{name, value})
}

func delHeader(hs []header, name string) []header {
	out := hs[:0]
	for _, h := range hs {
		if !strings.EqualFold(h.name, name) {
			out = append(out, h)
		}
	}
	return out
}

// rawHeads returns the response header blocks as received, or rebuilt
// from resp when they could not be recorded.
func rawHeads(ex *exchange, resp *http.Response) [][]byte {
	if ex != nil && len(ex.respHeads) > 0 {
		return ex.respHeads
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s\r\n", resp.Proto, resp.Status)
	_ = resp.Header.Write(&b)
	b.WriteString("\r\n")
	return [][]byte{b.Bytes()}
}

func (r *curlRun) writeHeads(heads [][]byte) error {
	o := r.o
	if o.include || o.head {
		for _, h := range heads {
			if _, err := r.env.Stdout.Write(h); err != nil {
				return &curlError{code: exitWriteError, msg: "Failure writing output to destination"}
			}
		}
	}
	if o.dumpHeader != "" {
		var w io.Writer = r.env.Stdout
		if o.dumpHeader != "-" {
			f, err := os.OpenFile(o.dumpHeader, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o666)
			if err != nil {
				return &curlError{code: exitWriteError, msg: fmt.Sprintf("Failed to open %s", o.dumpHeader)}
			}
			defer f.Close()
			w = f
		}
		for _, h := range heads {
			if _, err := w.Write(h); err != nil {
				return &curlError{code: exitWriteError, msg: "Failure writing output to destination"}
			}
		}
	}
	return nil
}

func (r *curlRun) verbose(ex *exchange, resp *http.Response) {
	w := r.env.Stderr
	if ex != nil && ex.reqHead != nil {
		for _, l := range strings.Split(strings.TrimSuffix(string(ex.reqHead), "\r\n"), "\r\n") {
			fmt.Fprintf(w, "> %s\r\n", l)
		}
	}
	for _, h := range rawHeads(ex, resp) {
		for _, l := range strings.Split(strings.TrimSuffix(string(h), "\r\n"), "\r\n") {
			fmt.Fprintf(w, "< %s\r\n", l)
		}
	}
}

// countWriter counts what it passes on and remembers a write failure,
// so that it can be told from a read failure.
type countWriter struct {
	w      io.Writer
	n      int64
	failed error
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	if err != nil {
		c.failed = err
	}
	return n, err
}

// lazyFile creates its file at the first write or at finish, so that a
// failed transfer leaves none.
type lazyFile struct {
	name       string
	createDirs bool
	f          *os.File
}

func (l *lazyFile) open() error {
	if l.f != nil {
		return nil
	}
	if l.createDirs {
		if err := os.MkdirAll(filepath.Dir(l.name), 0o777); err != nil {
			return err
		}
	}
	f, err := os.Create(l.name)
	if err != nil {
		return err
	}
	l.f = f
	return nil
}

func (l *lazyFile) Write(p []byte) (int, error) {
	if err := l.open(); err != nil {
		return 0, err
	}
	return l.f.Write(p)
}

// writeBody streams the body to out, decoding it for --compressed.
func (r *curlRun) writeBody(ctx context.Context, u *url.URL, resp *http.Response, out output) (int64, error) {
	defer resp.Body.Close()
	var dst io.Writer = r.env.Stdout
	var lf *lazyFile
	if out.file != "" && out.file != "-" || out.remote {
		name := out.file
		if out.remote {
			name = path.Base(u.Path)
			if name == "/" || name == "." || strings.HasSuffix(u.Path, "/") {
				return 0, &curlError{code: exitWriteError, msg: "Remote file name has no length!"}
			}
		}
		lf = &lazyFile{name: name, createDirs: r.o.createDirs}
		dst = lf
	}
	var src io.Reader = resp.Body
	raw := &countReader{r: resp.Body}
	src = raw
	if r.o.compressed {
		switch strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding"))) {
		case "gzip", "x-gzip":
			zr, err := gzip.NewReader(raw)
			if err != nil && err != io.EOF {
				return 0, &curlError{code: 61, msg: "Error while processing content unencoding: invalid gzip header"}
			}
			if zr != nil {
				src = zr
			}
		case "deflate":
			src = &deflateReader{r: raw}
		}
	}
	cw := &countWriter{w: dst}
	_, err := io.Copy(cw, src)
	if lf != nil {
		if oerr := lf.open(); oerr != nil && err == nil {
			cw.failed, err = oerr, oerr
		}
		if lf.f != nil {
			if cerr := lf.f.Close(); cerr != nil && err == nil {
				cw.failed, err = cerr, cerr
			}
		}
	}
	switch {
	case err == nil:
		return raw.n, nil
	case cw.failed != nil:
		if lf != nil && lf.f == nil {
			return raw.n, &curlError{code: exitWriteError, msg: fmt.Sprintf("Failed to open the file %s: %v", lf.name, unwrapPath(cw.failed))}
		}
		return raw.n, &curlError{code: exitWriteError, msg: "Failed writing body"}
	}
	ce := r.classify(ctx, u, err, raw.n)
	switch {
	case resp.ContentLength > 0 && raw.n < resp.ContentLength && (ce.code == exitRecvError || ce.code == exitEmptyReply):
		ce = &curlError{code: exitPartialFile, msg: fmt.Sprintf("transfer closed with %d bytes remaining to read", resp.ContentLength-raw.n)}
	case resp.ContentLength < 0 && errors.Is(err, io.ErrUnexpectedEOF):
		ce = &curlError{code: exitPartialFile, msg: "transfer closed with outstanding read data remaining"}
	}
	return raw.n, ce
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// deflateReader reads "deflate" content, which servers send both as
// zlib streams (as the RFC says) and raw.
type deflateReader struct {
	r  io.Reader
	zr io.Reader
}

func (d *deflateReader) Read(p []byte) (int, error) {
	if d.zr == nil {
		var head [2]byte
		n, err := io.ReadFull(d.r, head[:])
		if n == 0 {
			return 0, err
		}
		rest := io.MultiReader(bytes.NewReader(head[:n]), d.r)
		if n == 2 && (uint16(head[0])<<8|uint16(head[1]))%31 == 0 && head[0]&0xF == 8 {
			zr, err := zlib.NewReader(rest)
			if err != nil {
				return 0, err
			}
			d.zr = zr
		} else {
			d.zr = flate.NewReader(rest)
		}
	}
	return d.zr.Read(p)
}

// classify turns a transfer error into curl's status and message; got is
// what was received so far.
func (r *curlRun) classify(ctx context.Context, u *url.URL, err error, got int64) *curlError {
	var ce *curlError
	if errors.As(err, &ce) {
		return ce
	}
	host := u.Hostname()
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	ms := time.Since(r.startOf()).Milliseconds()
	var ne *netconn.Error
	if errors.As(err, &ne) {
		switch ne.Stage {
		case netconn.Resolve:
			return &curlError{code: exitResolve, msg: "Could not resolve host: " + host}
		case netconn.Timeout:
			if ctx.Err() != nil {
				return &curlError{code: exitTimeout, msg: fmt.Sprintf("Connection timed out after %d milliseconds", ms)}
			}
			return &curlError{code: exitTimeout, msg: fmt.Sprintf("Failed to connect to %s port %s after %d ms: Timeout was reached", host, port, ms)}
		case netconn.Verify:
			return &curlError{code: exitPeerVerify, msg: "SSL certificate problem: the server's certificate did not verify against the trust store",
				extra: "More details here: https://curl.se/docs/sslcerts.html\n\n" +
					"curl failed to verify the legitimacy of the server and therefore could not\n" +
					"establish a secure connection to it. To learn more about this situation and\n" +
					"how to fix it, please visit the web page mentioned above.\n"}
		case netconn.TLS:
			return &curlError{code: exitTLSConnect, msg: fmt.Sprintf("TLS connect error: %v", ne.Err)}
		}
		if ne.Denied {
			return &curlError{code: exitConnect, msg: fmt.Sprintf("Failed to connect to %s port %s after %d ms: Couldn't connect to server (denied by the sandbox's network policy)", host, port, ms)}
		}
		return &curlError{code: exitConnect, msg: fmt.Sprintf("Failed to connect to %s port %s after %d ms: Couldn't connect to server", host, port, ms)}
	}
	if (ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded)) && r.c.dialing {
		return &curlError{code: exitTimeout, msg: fmt.Sprintf("Connection timed out after %d milliseconds", ms)}
	}
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
		return &curlError{code: exitTimeout, msg: fmt.Sprintf("Operation timed out after %d milliseconds with %d bytes received", ms, got)}
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) && got == 0 {
		return &curlError{code: exitEmptyReply, msg: "Empty reply from server"}
	}
	// net/http says so only in text: "malformed HTTP response",
	// "server response headers exceeded N bytes".
	if strings.Contains(err.Error(), "malformed HTTP") || strings.Contains(err.Error(), "header") {
		return &curlError{code: exitWeirdReply, msg: "Weird server reply"}
	}
	return &curlError{code: exitRecvError, msg: "Recv failure: " + err.Error()}
}

func isTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}

// startOf is when the current transfer began, for curl's "after N ms"
// texts.
func (r *curlRun) startOf() time.Time { return r.start }

// writeOut prints -w's format.
func (r *curlRun) writeOut(st *stats, err error) {
	f := r.o.writeOut
	if strings.HasPrefix(f, "@") {
		b, rerr := readSource(f[1:], r.env)
		if rerr != nil {
			return
		}
		f = string(b)
	}
	var b strings.Builder
	w := r.env.Stdout
	for i := 0; i < len(f); i++ {
		c := f[i]
		switch {
		case c == '\\' && i+1 < len(f):
			i++
			switch f[i] {
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case '\\':
				b.WriteByte('\\')
			default:
				b.WriteByte('\\')
				b.WriteByte(f[i])
			}
		case c == '%' && i+1 < len(f) && f[i+1] == '%':
			b.WriteByte('%')
			i++
		case c == '%' && i+1 < len(f) && f[i+1] == '{':
			end := strings.IndexByte(f[i:], '}')
			if end < 0 {
				b.WriteString(f[i:])
				i = len(f)
				continue
			}
			name := f[i+2 : i+end]
			i += end
			if name == "stderr" {
				fmt.Fprint(w, b.String())
				b.Reset()
				w = r.env.Stderr
				continue
			}
			if name == "stdout" {
				fmt.Fprint(w, b.String())
				b.Reset()
				w = r.env.Stdout
				continue
			}
			v, ok := st.variable(name, err)
			if !ok {
				fmt.Fprint(w, b.String())
				b.Reset()
				fmt.Fprintf(r.env.Stderr, "curl: unknown --write-out variable: '%s'\n", name)
				continue
			}
			b.WriteString(v)
		default:
			b.WriteByte(c)
		}
	}
	fmt.Fprint(w, b.String())
}

func (st *stats) variable(name string, err error) (string, bool) {
	secs := func() string { return fmt.Sprintf("%.6f", time.Since(st.start).Seconds()) }
	switch name {
	case "http_code", "response_code":
		return fmt.Sprintf("%03d", st.code), true
	case "url_effective", "url":
		return st.url, true
	case "content_type":
		return st.contentType, true
	case "size_download":
		return strconv.FormatInt(st.size, 10), true
	case "size_header":
		return strconv.Itoa(st.headerSize), true
	case "num_redirects":
		return strconv.Itoa(st.redirects), true
	case "redirect_url":
		return st.redirectURL, true
	case "method":
		return st.method, true
	case "time_total", "time_starttransfer", "time_connect", "time_namelookup", "time_pretransfer", "time_appconnect", "time_redirect":
		return secs(), true
	case "http_version":
		return "1.1", true
	case "exitcode":
		var ce *curlError
		if errors.As(err, &ce) {
			return strconv.Itoa(ce.code), true
		}
		return "0", true
	case "errormsg":
		if err != nil {
			return err.Error(), true
		}
		return "", true
	case "scheme":
		if u, perr := url.Parse(st.url); perr == nil {
			return strings.ToUpper(u.Scheme), true
		}
		return "", true
	case "size_upload", "size_request":
		return "0", true
	}
	return "", false
}

// formTypes are the content types curl gives -F files by extension.
var formTypes = map[string]string{".gif": "image/gif", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
	".png": "image/png", ".svg": "image/svg+xml", ".txt": "text/plain", ".htm": "text/html",
	".html": "text/html", ".pdf": "application/pdf", ".xml": "application/xml"}

// buildForm makes -F's multipart/form-data body: name=value,
// name=@file (a file part), name=<file (the file as the value), each
// optionally followed by ;type=T and ;filename=F.
func buildForm(forms []string, env Env) ([]byte, string, error) {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	// curl's boundary shape.
	if err := mw.SetBoundary(fmt.Sprintf("------------------------%x", rnd)); err != nil {
		return nil, "", err
	}
	for _, f := range forms {
		name, val, ok := strings.Cut(f, "=")
		if !ok || name == "" {
			return nil, "", &curlError{code: exitUsage, msg: "option -F: is badly used here"}
		}
		typ, fname := "", ""
		for {
			i := strings.LastIndex(val, ";")
			if i < 0 {
				break
			}
			k, v, _ := strings.Cut(val[i+1:], "=")
			switch strings.TrimSpace(k) {
			case "type":
				typ = v
			case "filename":
				fname = v
			default:
				i = -1
			}
			if i < 0 {
				break
			}
			val = val[:i]
		}
		h := textproto.MIMEHeader{}
		disp := fmt.Sprintf("form-data; name=\"%s\"", quoteForm(name))
		switch {
		case strings.HasPrefix(val, "@"):
			content, err := readSource(val[1:], env)
			if err != nil {
				return nil, "", &curlError{code: exitReadError, msg: "Failed to open/read local data from file/application"}
			}
			src := filepath.Base(val[1:])
			if fname == "" && val[1:] != "-" {
				fname = src
			}
			if typ == "" {
				// Guessed from the file read, whatever name is sent.
				typ = formTypes[strings.ToLower(filepath.Ext(src))]
				if typ == "" {
					typ = "application/octet-stream"
				}
			}
			disp += fmt.Sprintf("; filename=\"%s\"", quoteForm(fname))
			val = string(content)
		case strings.HasPrefix(val, "<"):
			content, err := readSource(val[1:], env)
			if err != nil {
				return nil, "", &curlError{code: exitReadError, msg: "Failed to open/read local data from file/application"}
			}
			val = string(content)
		}
		h.Set("Content-Disposition", disp)
		if typ != "" {
			h.Set("Content-Type", typ)
		}
		w, err := mw.CreatePart(h)
		if err != nil {
			return nil, "", err
		}
		_, _ = io.WriteString(w, val)
	}
	if err := mw.Close(); err != nil {
		return nil, "", err
	}
	return b.Bytes(), mw.FormDataContentType(), nil
}

// quoteForm escapes a name for a Content-Disposition parameter as curl
// does.
func quoteForm(s string) string {
	return strings.NewReplacer("\\", "\\\\", "\"", "\\\"").Replace(s)
}
