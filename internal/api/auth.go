package api

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
)

// ErrBadTokens is matched (errors.Is) by every error about a tokens file.
var ErrBadTokens = errors.New("api: bad tokens file")

// TokensError reports what is wrong with a tokens file, and on which line.
type TokensError struct {
	Line int
	Msg  string
}

func (e *TokensError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("api: tokens file line %d: %s", e.Line, e.Msg)
	}
	return "api: tokens file: " + e.Msg
}

// Unwrap makes a TokensError match ErrBadTokens.
func (e *TokensError) Unwrap() error { return ErrBadTokens }

// MaxTokens bounds the entries of a tokens file.
const MaxTokens = 10000

// tenantName is what a tenant may be called: it appears in logs and
// metrics labels, so it is kept short and plain.
var tenantName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

// Token is one accepted bearer token: the tenant it authenticates, and
// the SHA-256 of the token (the token itself is never stored).
type Token struct {
	Tenant string
	Hash   [sha256.Size]byte
}

// HashToken returns the SHA-256 of a bearer token.
func HashToken(token string) [sha256.Size]byte { return sha256.Sum256([]byte(token)) }

// TokenLine returns the tokens-file line for tenant and token.
func TokenLine(tenant, token string) string {
	h := HashToken(token)
	return tenant + " sha256:" + hex.EncodeToString(h[:])
}

// ParseTokens reads a tokens file: one "TENANT sha256:HEX" per line,
// blank lines and lines starting with # ignored. A tenant may have
// several tokens; one hash may not belong to two tenants.
func ParseTokens(data []byte) ([]Token, error) {
	var out []Token
	seen := map[[sha256.Size]byte]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 1024), 4096)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		f := strings.Fields(s)
		if len(f) != 2 {
			return nil, &TokensError{Line: line, Msg: "want TENANT sha256:HEX"}
		}
		if !tenantName.MatchString(f[0]) {
			return nil, &TokensError{Line: line, Msg: "tenant names are 1-63 of A-Z a-z 0-9 . _ - starting with a letter or digit"}
		}
		hexs, ok := strings.CutPrefix(f[1], "sha256:")
		if !ok || len(hexs) != 2*sha256.Size {
			return nil, &TokensError{Line: line, Msg: "want a hash as sha256: followed by 64 hex digits"}
		}
		var t Token
		if _, err := hex.Decode(t.Hash[:], []byte(hexs)); err != nil {
			return nil, &TokensError{Line: line, Msg: "want a hash as sha256: followed by 64 hex digits"}
		}
		if prev, dup := seen[t.Hash]; dup && prev != f[0] {
			return nil, &TokensError{Line: line, Msg: "the same token hash belongs to two tenants"}
		}
		seen[t.Hash] = f[0]
		t.Tenant = f[0]
		out = append(out, t)
		if len(out) > MaxTokens {
			return nil, &TokensError{Line: line, Msg: fmt.Sprintf("more than %d tokens", MaxTokens)}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, &TokensError{Line: line + 1, Msg: "line too long"}
	}
	if len(out) == 0 {
		return nil, &TokensError{Msg: "no tokens"}
	}
	return out, nil
}

// authenticator maps bearer tokens to tenants.
type authenticator struct{ tokens []Token }

// tenant returns the tenant of the request's bearer token. Every
// configured hash is compared, in constant time, so the time taken says
// nothing about which (or whether a) token matched.
func (a *authenticator) tenant(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" {
		return "", false
	}
	sum := HashToken(strings.TrimSpace(tok))
	found := ""
	for i := range a.tokens {
		if subtle.ConstantTimeCompare(sum[:], a.tokens[i].Hash[:]) == 1 {
			found = a.tokens[i].Tenant
		}
	}
	return found, found != ""
}

type tenantKey struct{}

// tenantOf returns the tenant the auth middleware put in ctx.
func tenantOf(ctx context.Context) string {
	t, _ := ctx.Value(tenantKey{}).(string)
	return t
}

// middleware rejects requests without a valid bearer token (401) and
// records the tenant of the others.
func (a *authenticator) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r, err := subprotocolAuth(r)
		if err != nil {
			writeError(w, err)
			return
		}
		t, ok := a.tenant(r)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="secexec"`)
			writeError(w, apiError(http.StatusUnauthorized, CodeUnauthorized, "a valid bearer token is required"))
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), tenantKey{}, t)))
	})
}

// The WebSocket subprotocols of the API. A browser cannot set an
// Authorization header on a WebSocket, so it may offer the token as a
// subprotocol instead: ["secexec.v1", "secexec.token.<base64url token>"].
// The server answers with SubprotocolV1 only, never echoing the token.
const (
	SubprotocolV1          = "secexec.v1"
	SubprotocolTokenPrefix = "secexec.token."
)

// maxProtocolHeader bounds the Sec-WebSocket-Protocol header considered
// for a token (a token is 64 hex digits; base64url makes 86 characters).
const maxProtocolHeader = 1024

// subprotocolAuth moves a token offered as a WebSocket subprotocol into
// the request's Authorization header and removes it from the offered
// subprotocols, so that nothing downstream — a guest behind the ports
// proxy, the WebSocket handshake answer — ever sees it; a request
// forwarded to another replica carries it as the header the peer checks.
// Only WebSocket handshakes are considered; a request with an
// Authorization header is left as it is.
func subprotocolAuth(r *http.Request) (*http.Request, error) {
	vals := r.Header.Values("Sec-WebSocket-Protocol")
	if len(vals) == 0 || r.Header.Get("Authorization") != "" || !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		return r, nil
	}
	total := 0
	var keep []string
	tok, v1 := "", false
	for _, v := range vals {
		total += len(v)
		if total > maxProtocolHeader {
			return nil, apiError(http.StatusBadRequest, CodeBadRequest, "the Sec-WebSocket-Protocol header is over %d bytes", maxProtocolHeader)
		}
		for _, p := range strings.Split(v, ",") {
			p = strings.TrimSpace(p)
			if enc, ok := strings.CutPrefix(p, SubprotocolTokenPrefix); ok {
				b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(enc, "="))
				if err != nil || len(b) == 0 || tok != "" {
					return nil, apiError(http.StatusUnauthorized, CodeUnauthorized, "want one subprotocol secexec.token. followed by the base64url of the token")
				}
				tok = string(b)
				continue
			}
			if p == SubprotocolV1 {
				v1 = true
			}
			if p != "" {
				keep = append(keep, p)
			}
		}
	}
	if tok == "" {
		return r, nil
	}
	if !v1 {
		// The handshake must name a subprotocol the client offered, or
		// a browser fails the connection; the token is not one to name.
		return nil, apiError(http.StatusBadRequest, CodeBadRequest, "a token subprotocol needs %s offered with it", SubprotocolV1)
	}
	r2 := r.Clone(r.Context())
	r2.Header.Del("Sec-WebSocket-Protocol")
	r2.Header.Set("Sec-WebSocket-Protocol", strings.Join(keep, ", "))
	r2.Header.Set("Authorization", "Bearer "+tok)
	return r2, nil
}

// NewToken returns a new random bearer token (256 bits, hex).
func NewToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
