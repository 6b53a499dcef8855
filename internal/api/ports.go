package api

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
)

// Ports and previews: HTTP (and WebSocket) to a server a guest runs.
//
// /v1/vms/{id}/ports/{port}/... is for API clients: the bearer token
// authenticates the tenant as on every route, and is removed before the
// request reaches the guest. A preview is for a browser, which cannot
// send the header: POST /v1/vms/{id}/previews signs a token naming the
// VM, the port, an expiry and a preview id with the server's secret, and
// /p/{token}/... opens it. The token is the capability, so it is never
// logged (the metrics label only the route pattern), and every way it can
// fail — bad signature, expired, revoked, the VM gone, nothing listening —
// is the same 404, which says nothing about which.

// Defaults of the port and preview bounds.
const (
	defaultMaxPortConns  = 32
	defaultMaxPreviews   = 16
	defaultPreviewTTL    = time.Hour
	defaultMaxPreviewTTL = 24 * time.Hour
	// previewSecretMin is the shortest secret accepted to sign previews.
	previewSecretMin = 32
	// maxTokenLen bounds a preview token before any work is done on it.
	maxTokenLen = 512
)

// The codes of a proxied request that the guest did not answer (502:
// the API reached the VM, the upstream failed).
const (
	// CodePortClosed: nothing in the VM listens on the port (/ports).
	CodePortClosed Code = "port_closed"
	// CodeBadGateway: the guest's server answered with something that is
	// not HTTP, or over the bounds (a header over 64 KiB), or hung up.
	CodeBadGateway Code = "bad_gateway"
)

// proxiedMethods are the methods /ports and previews carry to the guest
// (CONNECT and TRACE are not proxied).
var proxiedMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut,
	http.MethodPatch, http.MethodDelete, http.MethodOptions}

// portOf parses the {port} parameter.
func portOf(r *http.Request) (int, error) {
	p, err := strconv.Atoi(chi.URLParam(r, "port"))
	if err != nil || p <= 0 || p > 65535 {
		return 0, apiError(http.StatusBadRequest, CodeBadRequest, "port must be 1-65535")
	}
	return p, nil
}

// proxyPort serves /v1/vms/{id}/ports/{port}/*.
func (s *Server) proxyPort(w http.ResponseWriter, r *http.Request) {
	port, err := portOf(r)
	if err != nil {
		writeError(w, err)
		return
	}
	e := vmOf(r)
	s.proxyTo(w, r, e, port, func(w http.ResponseWriter) {
		writeError(w, apiError(http.StatusBadGateway, CodePortClosed, "nothing in the VM listens on port %d", port))
	})
}

// proxiedPath is the path of r after its route's prefix (the {*} part),
// decoded and as the client encoded it: chi matches the encoded path when
// the client's encoding is not the canonical one (a%2Fb), so that the
// guest sees the bytes the client sent.
func proxiedPath(r *http.Request) (path, raw string) {
	rest := "/" + chi.URLParam(r, "*")
	if r.URL.RawPath == "" {
		return rest, ""
	}
	p, err := url.PathUnescape(rest)
	if err != nil {
		return rest, ""
	}
	return p, rest
}

// proxyTo proxies r to the guest's server on port, the path after the
// route's prefix. closed answers when the guest refused the connection.
func (s *Server) proxyTo(w http.ResponseWriter, r *http.Request, e *vmEntry, port int, closed func(http.ResponseWriter)) {
	if s.draining.Load() {
		writeError(w, apiError(http.StatusServiceUnavailable, CodeShuttingDown, "the server is shutting down"))
		return
	}
	release, ok := e.acquirePort(s.cfg.MaxPortConns)
	if !ok {
		er := apiError(http.StatusTooManyRequests, CodeQuota, "at most %d proxied requests per VM at once", s.cfg.MaxPortConns)
		er.RetryAfter = 1
		writeError(w, er)
		return
	}
	defer release()
	unuse := e.use()
	defer unuse()
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxFileBytes)
	}
	// Written by the transport's dialing goroutine, which may outlive a
	// cancelled request.
	var refused atomic.Bool
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			c, err := e.vm.Net().Dial(ctx, port)
			if err != nil {
				refused.Store(true)
			}
			return c, err
		},
		// One guest connection per request: they are in-memory and cheap,
		// and a pool would outlive the VM.
		DisableKeepAlives:      true,
		DisableCompression:     true,
		MaxResponseHeaderBytes: 64 << 10,
	}
	host := "localhost:" + strconv.Itoa(port)
	path, raw := proxiedPath(r)
	p := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme, pr.Out.URL.Host = "http", host
			pr.Out.URL.Path, pr.Out.URL.RawPath = path, raw
			// Dev servers check Host against what they listen on.
			pr.Out.Host = host
			// The guest sees neither the tenant's credentials nor the
			// fleet's internal marks.
			pr.Out.Header.Del("Authorization")
			pr.Out.Header.Del(forwardedHeader)
		},
		Transport:     tr,
		FlushInterval: -1, // server-sent events and streamed answers go through as they come
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			var mb *http.MaxBytesError
			switch {
			case errors.As(err, &mb):
				writeError(w, err)
			case refused.Load():
				closed(w)
			default:
				writeError(w, apiError(http.StatusBadGateway, CodeBadGateway, "the guest's server on port %d failed: %v", port, err))
			}
		},
	}
	p.ServeHTTP(w, r)
}

// acquirePort counts one proxied request on e, up to limit at once.
func (e *vmEntry) acquirePort(limit int) (release func(), ok bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.portConns >= limit {
		return nil, false
	}
	e.portConns++
	return func() {
		e.mu.Lock()
		e.portConns--
		e.mu.Unlock()
	}, true
}

// CreatePreviewRequest is the body of POST /v1/vms/{id}/previews.
type CreatePreviewRequest struct {
	// Port is the guest's listening port (1-65535).
	Port int `json:"port"`
	// TTLSeconds is how long the URL works (default 1 hour, at most the
	// server's MaxPreviewTTL).
	TTLSeconds int `json:"ttl_seconds,omitempty"`
}

// PreviewJSON is a created preview.
type PreviewJSON struct {
	ID        string    `json:"id"`
	URL       string    `json:"url"`
	Port      int       `json:"port"`
	ExpiresAt time.Time `json:"expires_at"`
}

// preview is a live preview of a VM.
type preview struct {
	port int
	exp  time.Time
}

// previewClaims are what a preview token signs.
type previewClaims struct {
	Tenant string `json:"t"`
	VM     string `json:"v"`
	Port   int    `json:"p"`
	Exp    int64  `json:"e"`
	ID     string `json:"i"`
}

// signPreview returns the token for c: base64url(JSON) "." base64url(HMAC).
func (s *Server) signPreview(c previewClaims) string {
	data, _ := json.Marshal(c)
	m := hmac.New(sha256.New, s.cfg.PreviewSecret)
	m.Write(data)
	enc := base64.RawURLEncoding
	return enc.EncodeToString(data) + "." + enc.EncodeToString(m.Sum(nil))
}

// verifyPreview checks a token's signature and expiry.
func (s *Server) verifyPreview(tok string, now time.Time) (previewClaims, bool) {
	var c previewClaims
	if len(tok) > maxTokenLen {
		return c, false
	}
	body, sig, ok := strings.Cut(tok, ".")
	if !ok {
		return c, false
	}
	enc := base64.RawURLEncoding
	data, err1 := enc.DecodeString(body)
	mac, err2 := enc.DecodeString(sig)
	if err1 != nil || err2 != nil {
		return c, false
	}
	m := hmac.New(sha256.New, s.cfg.PreviewSecret)
	m.Write(data)
	if !hmac.Equal(mac, m.Sum(nil)) {
		return c, false
	}
	if json.Unmarshal(data, &c) != nil || c.Port <= 0 || c.Port > 65535 || now.Unix() >= c.Exp {
		return c, false
	}
	return c, true
}

// createPreview serves POST /v1/vms/{id}/previews.
func (s *Server) createPreview(w http.ResponseWriter, r *http.Request) {
	var req CreatePreviewRequest
	if err := s.decodeJSON(w, r, &req, false); err != nil {
		writeError(w, err)
		return
	}
	if req.Port <= 0 || req.Port > 65535 {
		writeError(w, apiError(http.StatusBadRequest, CodeBadRequest, "port must be 1-65535"))
		return
	}
	ttl := defaultPreviewTTL
	if req.TTLSeconds < 0 {
		writeError(w, apiError(http.StatusBadRequest, CodeBadRequest, "ttl_seconds must not be negative"))
		return
	}
	if req.TTLSeconds > 0 {
		ttl = time.Duration(req.TTLSeconds) * time.Second
	}
	ttl = min(ttl, s.cfg.MaxPreviewTTL)
	e := vmOf(r)
	// A preview of a closed port is refused now rather than handed out
	// to fail later: the client most likely has the wrong port.
	c, err := e.vm.Net().Dial(r.Context(), req.Port)
	if err != nil {
		writeError(w, apiError(http.StatusNotFound, CodeNotFound, "nothing in the VM listens on port %d", req.Port))
		return
	}
	_ = c.Close()
	now := time.Now()
	var b [8]byte
	_, _ = rand.Read(b[:])
	id := "pv-" + hex.EncodeToString(b[:])
	exp := now.Add(ttl).Truncate(time.Second)
	e.mu.Lock()
	for pid, p := range e.previews {
		if !now.Before(p.exp) {
			delete(e.previews, pid)
		}
	}
	if len(e.previews) >= s.cfg.MaxPreviews {
		e.mu.Unlock()
		writeError(w, apiError(http.StatusTooManyRequests, CodeQuota, "at most %d previews per VM", s.cfg.MaxPreviews))
		return
	}
	if e.previews == nil {
		e.previews = map[string]preview{}
	}
	e.previews[id] = preview{port: req.Port, exp: exp}
	e.mu.Unlock()
	tok := s.signPreview(previewClaims{Tenant: e.tenant, VM: e.id, Port: req.Port, Exp: exp.Unix(), ID: id})
	writeJSON(w, http.StatusCreated, PreviewJSON{ID: id, URL: s.publicBase(r) + "/p/" + tok + "/", Port: req.Port, ExpiresAt: exp.UTC()})
}

// publicBase is the scheme://host preview URLs start with: the
// configured PublicURL, else the host the client used (through a peer
// that forwarded the request: the host that peer was asked for).
func (s *Server) publicBase(r *http.Request) string {
	if s.cfg.PublicURL != "" {
		return strings.TrimSuffix(s.cfg.PublicURL, "/")
	}
	scheme, host := "http", r.Host
	if r.TLS != nil {
		scheme = "https"
	}
	if r.Header.Get(forwardedHeader) != "" {
		if h := r.Header.Get("X-Forwarded-Host"); h != "" {
			host = h
		}
		if p := r.Header.Get("X-Forwarded-Proto"); p == "http" || p == "https" {
			scheme = p
		}
	}
	return scheme + "://" + host
}

// deletePreview serves DELETE /v1/vms/{id}/previews/{pid}.
func (s *Server) deletePreview(w http.ResponseWriter, r *http.Request) {
	e := vmOf(r)
	pid := chi.URLParam(r, "pid")
	e.mu.Lock()
	_, ok := e.previews[pid]
	delete(e.previews, pid)
	e.mu.Unlock()
	if !ok {
		writeError(w, apiError(http.StatusNotFound, CodeNotFound, "no such preview"))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// openPreview serves /p/{token}/*: no bearer token, the signed token is
// the credential. A VM of another replica is forwarded there, which
// checks everything again.
func (s *Server) openPreview(w http.ResponseWriter, r *http.Request) {
	notFound := func(w http.ResponseWriter) {
		writeError(w, apiError(http.StatusNotFound, CodeNotFound, "no such preview"))
	}
	now := time.Now()
	c, ok := s.verifyPreview(chi.URLParam(r, "token"), now)
	if !ok {
		notFound(w)
		return
	}
	replica, ok := parseVMID(c.VM)
	if !ok {
		notFound(w)
		return
	}
	e := s.vms.get(c.Tenant, c.VM)
	if e == nil && replica != s.cfg.Replica {
		s.forward(w, r, replica, nil)
		return
	}
	if e == nil {
		notFound(w)
		return
	}
	e.mu.Lock()
	p, live := e.previews[c.ID]
	e.mu.Unlock()
	if !live || p.port != c.Port || !now.Before(p.exp) {
		notFound(w)
		return
	}
	e.touch()
	leave, err := s.enter(r.Context(), e)
	if err != nil {
		writeError(w, err)
		return
	}
	defer leave()
	s.proxyTo(w, r, e, c.Port, notFound)
}
