package webget

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/secexec/secexec/userland/internal/netconn"
)

// wgetVersion is the GNU wget this imitates.
const wgetVersion = "1.21.3"

// GNU wget exit statuses.
const (
	wgetGeneric = 1
	wgetParse   = 2
	wgetIO      = 3
	wgetNetwork = 4
	wgetTLS     = 5
	wgetServer  = 8
)

type wgetOpts struct {
	quiet, noVerbose, serverResponse, spider, insecure bool
	output                                             string
	hasOutput                                          bool
	headers                                            []string
	postData                                           *string
	postFile                                           string
	method                                             string
	timeout                                            time.Duration
	tries                                              int
	maxRedirect                                        int
	userAgent                                          string
	prefix                                             string
	urls                                               []string
}

const wgetTry = "Usage: wget [OPTION]... [URL]...\n\nTry `wget --help' for more options.\n"

func parseWget(args []string) (*wgetOpts, error) {
	o := &wgetOpts{tries: 20, maxRedirect: 20, userAgent: "Wget/" + wgetVersion, timeout: 900 * time.Second}
	// withArg lists the options that take a value, long and short.
	withArg := map[string]bool{"O": true, "output-document": true, "header": true, "post-data": true,
		"post-file": true, "T": true, "timeout": true, "t": true, "tries": true, "max-redirect": true,
		"U": true, "user-agent": true, "P": true, "directory-prefix": true, "method": true, "body-data": true,
		"read-timeout": true, "connect-timeout": true, "dns-timeout": true, "o": true, "output-file": true,
		"a": true, "append-output": true, "w": true, "wait": true, "waitretry": true}
	set := func(name, v string) error {
		switch name {
		case "q", "quiet":
			o.quiet = true
		case "nv", "no-verbose":
			o.noVerbose = true
		case "v", "verbose", "c", "continue", "N", "timestamping", "no-clobber", "nc", "retry-connrefused",
			"no-cache", "inet4-only", "4", "inet6-only", "6", "o", "output-file", "a", "append-output",
			"w", "wait", "waitretry", "dns-timeout", "no-dns-cache", "show-progress", "progress":
		case "S", "server-response":
			o.serverResponse = true
		case "spider":
			o.spider = true
		case "no-check-certificate":
			o.insecure = true
		case "O", "output-document":
			o.output, o.hasOutput = v, true
		case "header":
			o.headers = append(o.headers, v)
		case "post-data", "body-data":
			o.postData = &v
		case "post-file":
			o.postFile = v
		case "method":
			o.method = strings.ToUpper(v)
		case "T", "timeout", "read-timeout", "connect-timeout":
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f < 0 {
				return fmt.Errorf("wget: --timeout: Invalid time period ‘%s’", v)
			}
			o.timeout = time.Duration(f * float64(time.Second))
			if f == 0 {
				o.timeout = 0
			}
		case "t", "tries":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				if v == "inf" {
					n = 0
				} else {
					return fmt.Errorf("wget: --tries: Invalid number ‘%s’", v)
				}
			}
			o.tries = n
		case "max-redirect":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return fmt.Errorf("wget: --max-redirect: Invalid number ‘%s’", v)
			}
			o.maxRedirect = n
		case "U", "user-agent":
			o.userAgent = v
		case "P", "directory-prefix":
			o.prefix = v
		default:
			return errUnknown
		}
		return nil
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--help" || a == "-h":
			return nil, errHelp
		case a == "--version" || a == "-V":
			return nil, errVersion
		case a == "--":
			o.urls = append(o.urls, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a, "--"):
			name, v, hasV := strings.Cut(a[2:], "=")
			if withArg[name] && !hasV {
				if i+1 >= len(args) {
					return nil, fmt.Errorf("wget: option '--%s' requires an argument\n%s", name, wgetTry)
				}
				i++
				v = args[i]
			}
			if err := set(name, v); err != nil {
				if err == errUnknown {
					return nil, fmt.Errorf("wget: unrecognized option '%s'\n%s", a, wgetTry)
				}
				return nil, err
			}
		case a == "-nv" || a == "-nc":
			_ = set(a[1:], "")
		case strings.HasPrefix(a, "-") && len(a) > 1:
			for j := 1; j < len(a); j++ {
				c := string(a[j])
				v := ""
				if withArg[c] {
					switch {
					case j+1 < len(a):
						v = a[j+1:]
					case i+1 < len(args):
						i++
						v = args[i]
					default:
						return nil, fmt.Errorf("wget: option requires an argument -- '%s'\n%s", c, wgetTry)
					}
					j = len(a)
				}
				if err := set(c, v); err != nil {
					if err == errUnknown {
						return nil, fmt.Errorf("wget: invalid option -- '%s'\n%s", c, wgetTry)
					}
					return nil, err
				}
			}
		default:
			o.urls = append(o.urls, a)
		}
	}
	if len(o.urls) == 0 {
		return nil, fmt.Errorf("wget: missing URL\n%s", wgetTry)
	}
	return o, nil
}

// Wget runs wget with args (without the program name).
func Wget(args []string, env Env) int {
	o, err := parseWget(args)
	switch {
	case err == errHelp:
		fmt.Fprintf(env.Stdout, "GNU Wget %s (secexec), a non-interactive network retriever.\n%s", wgetVersion, wgetTry[:strings.IndexByte(wgetTry, '\n')+1])
		return 0
	case err == errVersion:
		fmt.Fprintf(env.Stdout, "GNU Wget %s built on wasip1 (secexec).\n", wgetVersion)
		return 0
	case err != nil:
		fmt.Fprint(env.Stderr, strings.TrimSuffix(err.Error(), "\n")+"\n")
		return wgetParse
	}
	_ = netconn.Restart(o.insecure)
	w := &wgetRun{o: o, env: env, c: newClient(o.timeout, o.insecure)}
	defer w.c.close()
	status := 0
	var out io.Writer
	var outFile *os.File
	if o.hasOutput && o.output != "-" && !o.spider {
		// wget opens -O's file before it connects.
		f, err := os.Create(o.output)
		if err != nil {
			fmt.Fprintf(env.Stderr, "%s: %v\n", o.output, unwrapPath(err))
			return wgetIO
		}
		defer f.Close()
		outFile, out = f, f
	} else if o.hasOutput && o.output == "-" {
		out = env.Stdout
	}
	for _, u := range o.urls {
		if s := w.fetch(u, out, outFile != nil); s != 0 && (status == 0 || s < status) {
			status = s
		}
	}
	return status
}

type wgetRun struct {
	o   *wgetOpts
	env Env
	c   *client
}

func (w *wgetRun) logf(format string, args ...any) {
	if !w.o.quiet && !w.o.noVerbose {
		fmt.Fprintf(w.env.Stderr, format, args...)
	}
}

func (w *wgetRun) errorf(format string, args ...any) {
	if !w.o.quiet {
		fmt.Fprintf(w.env.Stderr, format, args...)
	}
}

func stamp() string { return time.Now().Format("2006-01-02 15:04:05") }

// fetch retrieves one URL into out (nil: a file named after the URL).
func (w *wgetRun) fetch(raw string, out io.Writer, named bool) int {
	o := w.o
	s := raw
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		w.errorf("%s: Invalid URL %s: Invalid host name\n", raw, raw)
		return wgetParse
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		w.errorf("%s: Unsupported scheme ‘%s’.\n", raw, u.Scheme)
		return wgetParse
	}
	if u.Path == "" {
		u.Path = "/"
	}
	method := "GET"
	var body []byte
	switch {
	case o.spider:
		method = "HEAD"
	case o.postData != nil:
		method, body = "POST", []byte(*o.postData)
	case o.postFile != "":
		b, err := os.ReadFile(o.postFile)
		if err != nil {
			w.errorf("wget: %s: %v\n", o.postFile, unwrapPath(err))
			return wgetIO
		}
		method, body = "POST", b
	}
	if o.method != "" {
		method = o.method
	}
	if o.spider {
		w.logf("Spider mode enabled. Check if remote file exists.\n")
	}
	tries := o.tries
	for attempt := 1; ; attempt++ {
		code, retry := w.once(u, method, body, out, named)
		if !retry || (tries != 0 && attempt >= tries) {
			if retry {
				w.logf("Giving up.\n\n")
			}
			return code
		}
		w.logf("Retrying.\n\n")
		time.Sleep(time.Duration(min(attempt, 10)) * time.Second)
	}
}

// once makes one attempt, following redirects; retry reports a
// transient failure.
func (w *wgetRun) once(u *url.URL, method string, body []byte, out io.Writer, named bool) (int, bool) {
	o := w.o
	for redirects := 0; ; redirects++ {
		w.logf("--%s--  %s\n", stamp(), u)
		req, err := http.NewRequest(method, u.String(), nil)
		if err != nil {
			return wgetParse, false
		}
		if body != nil {
			req, _ = http.NewRequest(method, u.String(), strings.NewReader(string(body)))
		}
		req.Header = http.Header{"User-Agent": {o.userAgent}, "Accept": {"*/*"}, "Accept-Encoding": {"identity"}, "Connection": {"Keep-Alive"}}
		if body != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		for _, h := range o.headers {
			name, value, ok := strings.Cut(h, ":")
			if !ok {
				continue
			}
			name, value = strings.TrimSpace(name), strings.TrimSpace(value)
			if strings.EqualFold(name, "Host") {
				req.Host = value
				continue
			}
			if value == "" {
				req.Header.Del(name)
				continue
			}
			req.Header.Set(name, value)
		}
		ctx, cancel := context.WithCancel(context.Background())
		req = req.WithContext(ctx)
		hostport := u.Host
		if u.Port() == "" {
			hostport = u.Hostname() + ":" + map[string]string{"http": "80", "https": "443"}[u.Scheme]
		}
		w.logf("Connecting to %s... ", hostport)
		var timer *time.Timer
		if o.timeout > 0 {
			timer = time.AfterFunc(o.timeout, cancel)
		}
		resp, ex, err := w.c.do(req, body != nil)
		if err != nil {
			cancel()
			return w.netFailure(u, err, ctx)
		}
		w.logf("connected.\n")
		w.logf("HTTP request sent, awaiting response... ")
		if o.serverResponse {
			w.logf("\n")
			for _, h := range rawHeads(ex, resp) {
				for _, l := range strings.Split(strings.TrimRight(string(h), "\r\n"), "\r\n") {
					w.errorf("  %s\n", l)
				}
			}
		} else {
			w.logf("%s\n", resp.Status)
		}
		loc := resp.Header.Get("Location")
		if loc != "" && resp.StatusCode >= 300 && resp.StatusCode < 400 && resp.StatusCode != 304 {
			resp.Body.Close()
			cancel()
			next, err := u.Parse(loc)
			if err != nil {
				return wgetServer, false
			}
			w.logf("Location: %s [following]\n", loc)
			if redirects >= o.maxRedirect {
				w.errorf("%d redirections exceeded.\n", o.maxRedirect)
				return wgetServer, false
			}
			if resp.StatusCode == 303 || (resp.StatusCode == 301 || resp.StatusCode == 302) && method == "POST" {
				if method != "HEAD" {
					method = "GET"
				}
				body = nil
			}
			u = next
			continue
		}
		if resp.StatusCode >= 400 {
			resp.Body.Close()
			cancel()
			if o.spider {
				w.logf("Remote file does not exist -- broken link!!!\n")
			}
			w.errorf("%s ERROR %d: %s.\n\n", stamp(), resp.StatusCode, strings.TrimPrefix(resp.Status, strconv.Itoa(resp.StatusCode)+" "))
			// wget 1.21 gives up on an error response at once.
			return wgetServer, false
		}
		length := "unspecified"
		if resp.ContentLength >= 0 {
			length = strconv.FormatInt(resp.ContentLength, 10)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "" {
			length += " [" + ct + "]"
		}
		w.logf("Length: %s\n", length)
		if o.spider {
			resp.Body.Close()
			cancel()
			w.logf("Remote file exists.\n\n")
			return 0, false
		}
		dst, name := out, "-"
		var f *os.File
		if dst == nil {
			name = w.localName(u)
			f, err = os.Create(name)
			if err != nil {
				resp.Body.Close()
				cancel()
				w.errorf("%s: %v\n", name, unwrapPath(err))
				return wgetIO, false
			}
			dst = f
		} else if named {
			name = o.output
		}
		w.logf("Saving to: ‘%s’\n\n", name)
		// The read time-out restarts with every read, as wget's does.
		src := &timeoutReader{r: resp.Body, timer: timer, d: o.timeout}
		cw := &countWriter{w: dst}
		start := time.Now()
		_, err = io.Copy(cw, src)
		resp.Body.Close()
		cancel()
		if f != nil {
			if cerr := f.Close(); cerr != nil && err == nil {
				cw.failed, err = cerr, cerr
			}
		}
		if err != nil {
			if cw.failed != nil {
				w.errorf("Cannot write to ‘%s’ (%v).\n", name, unwrapPath(cw.failed))
				return wgetIO, false
			}
			w.errorf("%s (%s) - Read error at byte %d (%v).", stamp(), rate(cw.n, start), cw.n, err)
			return wgetNetwork, true
		}
		if w.o.noVerbose && !w.o.quiet {
			fmt.Fprintf(w.env.Stderr, "%s URL:%s [%d/%d] -> \"%s\" [1]\n", stamp(), u, cw.n, max(resp.ContentLength, cw.n), name)
		}
		w.logf("%s (%s) - ‘%s’ saved [%d/%d]\n\n", stamp(), rate(cw.n, start), name, cw.n, max(resp.ContentLength, cw.n))
		return 0, false
	}
}

func rate(n int64, start time.Time) string {
	s := time.Since(start).Seconds()
	if s <= 0 {
		s = 1e-3
	}
	return fmt.Sprintf("%.2f MB/s", float64(n)/s/1e6)
}

// timeoutReader restarts the read time-out timer after every read.
type timeoutReader struct {
	r     io.Reader
	timer *time.Timer
	d     time.Duration
}

func (t *timeoutReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if t.timer != nil && n > 0 {
		t.timer.Reset(t.d)
	}
	return n, err
}

// localName is wget's file name for u: the last path element (and the
// query), index.html for a directory, with .1, .2 ... added when the
// name is taken.
func (w *wgetRun) localName(u *url.URL) string {
	name := path.Base(u.Path)
	if strings.HasSuffix(u.Path, "/") || name == "/" || name == "." {
		name = "index.html"
	}
	if u.RawQuery != "" {
		name += "?" + u.RawQuery
	}
	if w.o.prefix != "" {
		name = path.Join(w.o.prefix, name)
		_ = os.MkdirAll(w.o.prefix, 0o777)
	}
	cand := name
	for i := 1; ; i++ {
		if _, err := os.Lstat(cand); errors.Is(err, os.ErrNotExist) {
			return cand
		}
		cand = name + "." + strconv.Itoa(i)
	}
}

// netFailure reports a failed connection or request as wget does.
func (w *wgetRun) netFailure(u *url.URL, err error, ctx context.Context) (int, bool) {
	var ne *netconn.Error
	if errors.As(err, &ne) {
		switch ne.Stage {
		case netconn.Resolve:
			w.logf("failed: Name or service not known.\n")
			w.errorf("wget: unable to resolve host address ‘%s’\n", u.Hostname())
			return wgetNetwork, false
		case netconn.Timeout:
			w.logf("failed: Connection timed out.\n")
			return wgetNetwork, true
		case netconn.Verify:
			w.logf("connected.\n")
			w.errorf("ERROR: cannot verify %s's certificate: it did not verify against the trust store.\nTo connect to %s insecurely, use `--no-check-certificate'.\n", u.Hostname(), u.Hostname())
			return wgetTLS, false
		case netconn.TLS:
			w.logf("connected.\n")
			w.errorf("Unable to establish SSL connection.\n")
			return wgetTLS, false
		}
		if ne.Denied {
			w.logf("failed: Permission denied (the sandbox's network policy).\n")
			if w.o.quiet || w.o.noVerbose {
				w.errorf("wget: connecting to %s: Permission denied (the sandbox's network policy)\n", u.Host)
			}
			return wgetNetwork, false
		}
		w.logf("failed: Connection refused.\n")
		return wgetNetwork, false
	}
	if ctx.Err() != nil || isTimeout(err) {
		w.logf("failed: Read timed out.\n")
		return wgetNetwork, true
	}
	w.logf("failed: %v.\n", err)
	return wgetNetwork, true
}
