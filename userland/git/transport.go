package main

import (
	"bytes"
	gocontext "context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/client"
	"github.com/go-git/go-git/v6/plumbing/protocol"
	"github.com/go-git/go-git/v6/plumbing/protocol/packp"
	"github.com/go-git/go-git/v6/plumbing/transport"
	xhttp "github.com/go-git/go-git/v6/plumbing/transport/http"

	"github.com/secexec/secexec/userland/internal/netconn"
)

// Remote repositories are reached two ways. A local path or file:// URL
// is opened in this process by go-git's file transport (no git-upload-pack
// is run: the VM has none to run; a clone of a path copies the object
// files instead, see cloneInto). An http:// or https:// URL is spoken to
// with git's smart HTTP protocol over connections that netconn makes, so
// inside the VM the host's kernel makes every connection under the VM's
// network rules and runs TLS for the guest, as for curl.
//
// What go-git holds in memory: a fetched pack is streamed into the object
// storage (a temporary pack file and its index), the advertised refs are
// held (bounded by maxAdvertisement), and a pushed pack is built in
// memory before it is sent (go-git's HTTP requester buffers the request
// body), so a push is bounded by the VM's memory limit and the objects
// pushed. Every allocation is the guest's, so the VM's memory limit
// bounds all of it: a server cannot make the host allocate.

// maxAdvertisement bounds the bytes of a ref advertisement the client
// reads (an info/refs response, or protocol v2's ls-refs): a hostile
// server could otherwise send an endless stream of refs for go-git to
// hold.
const maxAdvertisement = 16 << 20

// maxHeaderBytes bounds one response's header block.
const maxHeaderBytes = 256 << 10

// httpClient is the net/http client of the HTTP transport: HTTP/1.1 on
// netconn's connections, no proxy from the environment.
func httpClient() *http.Client {
	dial := func(ctx gocontext.Context, addr string, useTLS bool) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		start := time.Now()
		c, err := netconn.Dial(ctx, host, port, netconn.Options{TLS: useTLS, ServerName: host})
		if err != nil {
			return nil, &dialError{host: host, port: port, ms: time.Since(start).Milliseconds(), err: err}
		}
		return c, nil
	}
	tr := &http.Transport{
		Proxy:                  nil,
		DialContext:            func(ctx gocontext.Context, _, addr string) (net.Conn, error) { return dial(ctx, addr, false) },
		DialTLSContext:         func(ctx gocontext.Context, _, addr string) (net.Conn, error) { return dial(ctx, addr, true) },
		ForceAttemptHTTP2:      false,
		DisableCompression:     false,
		MaxResponseHeaderBytes: maxHeaderBytes,
		MaxIdleConnsPerHost:    1,
	}
	return &http.Client{Transport: boundedTransport{tr}}
}

// dialError is a failed connection with what git's message names.
type dialError struct {
	host, port string
	ms         int64
	err        error
}

func (d *dialError) Error() string { return d.err.Error() }
func (d *dialError) Unwrap() error { return d.err }

// boundedTransport caps the body of a ref advertisement: the GET of
// info/refs (protocol v0/v1, and v2's capabilities) and v2's ls-refs
// command, a POST. Pack responses stream into storage and are bounded by
// it.
type boundedTransport struct{ http.RoundTripper }

func (b boundedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	listing := req.Method == http.MethodGet || isLsRefs(req)
	resp, err := b.RoundTripper.RoundTrip(req)
	if err != nil || !listing {
		return resp, err
	}
	resp.Body = &limitedBody{r: resp.Body, n: maxAdvertisement}
	return resp, nil
}

// isLsRefs reports whether req is a protocol v2 ls-refs command: a small
// upload-pack POST whose body (go-git builds it in memory, so it can be
// read again) names the command.
func isLsRefs(req *http.Request) bool {
	if req.Method != http.MethodPost || req.GetBody == nil || !strings.HasSuffix(req.URL.Path, "/git-upload-pack") ||
		req.ContentLength <= 0 || req.ContentLength > 64<<10 {
		return false
	}
	body, err := req.GetBody()
	if err != nil {
		return false
	}
	defer body.Close()
	b, err := io.ReadAll(io.LimitReader(body, 64<<10))
	return err == nil && bytes.Contains(b, []byte("command=ls-refs"))
}

// limitedBody fails a read past n bytes instead of ending early, so a
// truncated advertisement is an error rather than a silently short list.
type limitedBody struct {
	r io.ReadCloser
	n int64
}

var errAdvertisementTooLarge = errors.New("ref advertisement too large")

func (l *limitedBody) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, errAdvertisementTooLarge
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}

func (l *limitedBody) Close() error { return l.r.Close() }

// clientOptions configure go-git's transports for one operation.
func clientOptions() []client.Option {
	return []client.Option{client.WithHTTPClient(httpClient())}
}

// isURL reports whether s names a remote by URL rather than a local path.
func isURL(s string) bool {
	i := strings.Index(s, "://")
	return i > 0 && !strings.ContainsAny(s[:i], "/\\")
}

// isHTTP reports whether s is an http(s) URL.
func isHTTP(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}

// checkScheme refuses the schemes this git does not speak (ssh and git://
// need transports the VM cannot provide).
func checkScheme(u string) error {
	if !isURL(u) {
		return nil
	}
	scheme := u[:strings.Index(u, "://")]
	switch scheme {
	case "http", "https", "file":
		return nil
	}
	return fatalf("Unable to find remote helper for '%s'", scheme)
}

// displayURL is u as git prints it: without a password or user name.
// The user information is cut out of the text, not parsed: a URL that
// does not parse still loses it.
func displayURL(u string) string {
	if !isURL(u) {
		return u
	}
	i := strings.Index(u, "://") + 3
	auth := u[i:]
	if j := strings.IndexAny(auth, "/?#"); j >= 0 {
		auth = auth[:j]
	}
	at := strings.LastIndexByte(auth, '@')
	if at < 0 {
		return u
	}
	return u[:i] + u[i+at+1:]
}

// userinfo is the user information of URL u ("user:pass"), or "".
func userinfo(u string) string {
	if !isURL(u) {
		return ""
	}
	i := strings.Index(u, "://") + 3
	auth := u[i:]
	if j := strings.IndexAny(auth, "/?#"); j >= 0 {
		auth = auth[:j]
	}
	if at := strings.LastIndexByte(auth, '@'); at >= 0 {
		return auth[:at]
	}
	return ""
}

// fetchDisplayURL is the "From" line's URL: git drops a trailing "/" and
// ".git".
func fetchDisplayURL(u string) string {
	d := strings.TrimSuffix(displayURL(u), "/")
	return strings.TrimSuffix(d, ".git")
}

// localPath resolves a local repository path as git does: DIR, or
// DIR/.git for a non-bare repository. It returns "" when there is none.
func localPath(u string) string {
	p := u
	if strings.HasPrefix(u, "file://") {
		p = strings.TrimPrefix(u, "file://")
	}
	for _, c := range []string{filepath.Join(p, ".git"), p} {
		if fi, err := os.Stat(filepath.Join(c, "HEAD")); err == nil && fi.Mode().IsRegular() {
			return c
		}
	}
	return ""
}

// transportError turns a failure to reach or talk to a remote into git's
// message for it: the server's own text/plain explanation first, as
// "remote: " lines, then git's fatal line. The URL printed has no
// credentials.
func transportError(u string, err error) error {
	e := transportFatal(u, err)
	var he *xhttp.Err
	var xe *exitError
	if errors.As(err, &he) && he.Reason != "" && errors.As(e, &xe) && !strings.Contains(xe.msg, "terminal prompts disabled") {
		var b strings.Builder
		for _, l := range strings.Split(he.Reason, "\n") {
			b.WriteString("remote: " + redact(l, u) + "\n")
		}
		xe.msg = b.String() + xe.msg
	}
	return e
}

func transportFatal(u string, err error) error {
	shown := displayURL(u)
	if isHTTP(u) && !strings.HasSuffix(shown, "/") {
		shown += "/"
	}
	var ne *netconn.Error
	var de *dialError
	switch {
	case errors.As(err, &ne) && errors.As(err, &de) && ne.Stage == netconn.Connect:
		// curl's words, which git prints.
		return fatalf("unable to access '%s': Failed to connect to %s port %s after %d ms: %s", shown, de.host, de.port, de.ms, netconnText(ne))
	case errors.As(err, &ne):
		return fatalf("unable to access '%s': %s", shown, netconnText(ne))
	case errors.Is(err, transport.ErrRepositoryNotFound):
		if !isHTTP(u) {
			return fatalf("'%s' does not appear to be a git repository\nfatal: Could not read from remote repository.\n\nPlease make sure you have the correct access rights\nand the repository exists.", u)
		}
		return fatalf("repository '%s' not found", shown)
	case errors.Is(err, transport.ErrAuthenticationRequired), errors.Is(err, transport.ErrAuthorizationFailed):
		if p, perr := url.Parse(u); perr == nil && p.User == nil {
			// git would ask for a user name; there is no terminal to ask on.
			return fatalf("could not read Username for '%s://%s': terminal prompts disabled", p.Scheme, p.Host)
		}
		return fatalf("Authentication failed for '%s'", shown)
	case errors.Is(err, errAdvertisementTooLarge):
		return fatalf("unable to access '%s': %v", shown, err)
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		// Not the network's fault: the local side could not store it.
		return fatalf("%s %s: %s", pe.Op, pe.Path, errText(pe))
	}
	var he *xhttp.Err
	if errors.As(err, &he) {
		return fatalf("unable to access '%s': The requested URL returned error: %d", shown, he.Status)
	}
	if isHTTP(u) {
		return fatalf("unable to access '%s': %s", shown, redact(err.Error(), u))
	}
	return fatalf("%s", redact(err.Error(), u))
}

// netconnText is curl's wording (which git prints) for a failed connect.
func netconnText(ne *netconn.Error) string {
	switch ne.Stage {
	case netconn.Resolve:
		return "Could not resolve host: " + hostOf(ne)
	case netconn.Timeout:
		return "Connection timed out"
	case netconn.Verify:
		return "SSL certificate problem: " + ne.Err.Error()
	case netconn.TLS:
		return "SSL connect error: " + ne.Err.Error()
	}
	if ne.Denied {
		return "Couldn't connect to server (denied by the sandbox's network policy)"
	}
	return "Couldn't connect to server"
}

func hostOf(ne *netconn.Error) string {
	var de *net.DNSError
	if errors.As(ne.Err, &de) {
		return de.Name
	}
	return ne.Err.Error()
}

// redact removes u's password (and the whole user information) from a
// message, in case a library quoted the URL it was given.
func redact(msg, u string) string {
	info := userinfo(u)
	if info == "" {
		return msg
	}
	msg = strings.ReplaceAll(msg, info+"@", "")
	if _, pw, ok := strings.Cut(info, ":"); ok && pw != "" {
		msg = strings.ReplaceAll(msg, pw, "***")
		if dec, err := url.PathUnescape(pw); err == nil && dec != "" {
			msg = strings.ReplaceAll(msg, dec, "***")
		}
	}
	return msg
}

// validRemoteRef reports whether a ref name a server sent is safe to
// store: a well-formed name under refs/ (or HEAD), with no component that
// could leave the refs directory.
func validRemoteRef(n plumbing.ReferenceName) bool {
	if n == plumbing.HEAD {
		return true
	}
	s := string(n)
	if !strings.HasPrefix(s, "refs/") || n.Validate() != nil {
		return false
	}
	for _, c := range strings.Split(s, "/") {
		if c == "" || c == "." || c == ".." || strings.HasPrefix(c, ".") || strings.HasSuffix(c, ".lock") {
			return false
		}
	}
	return !strings.ContainsAny(s, "\\\x00 ~^:?*[") && !strings.Contains(s, "@{") && !strings.Contains(s, "..")
}

// listRemote asks the remote at u for its refs (upload-pack's ref
// discovery), with what go-git's Remote.List drops: the target of an
// unborn HEAD, which a clone of an empty repository checks out.
func listRemote(u string) (*transport.RemoteRefs, error) {
	tu, err := transport.ParseURL(u)
	if err != nil {
		return nil, err
	}
	ctx := gocontext.Background()
	sess, err := client.New(clientOptions()...).Handshake(ctx, &transport.Request{URL: tu, Command: transport.UploadPackService, Protocol: protocol.V2})
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	rr, err := sess.GetRemoteRefs(ctx, nil)
	if !errors.Is(err, transport.ErrEmptyRemoteRepository) {
		return rr, err
	}
	// go-git drops an empty repository's ls-refs answer, unborn HEAD and
	// all; ask again for just HEAD (protocol v2 only: v0 has no unborn).
	cmd, ok := sess.(transport.Commander)
	if !ok || !sess.Capabilities().Supports("ls-refs") {
		return nil, err
	}
	out := &packp.LsRefsOutput{}
	if cerr := cmd.Command(ctx, "ls-refs", &packp.LsRefsArgs{Symrefs: true, Unborn: true, RefPrefixes: []string{"HEAD"}}, out); cerr != nil {
		return nil, err
	}
	for _, r := range out.References {
		if r.Name() == plumbing.HEAD && r.Type() == plumbing.SymbolicReference {
			return &transport.RemoteRefs{Unborn: r.Target()}, nil
		}
	}
	return nil, err
}
