//go:build !wasip1

package main

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/testcert"
	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/internal/vmhost"
	"github.com/secexec/secexec/internal/vmtest"
	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/policy"
)

// These tests put host git's own server, git http-backend, behind Go's
// CGI handler on a loopback port, and run the same clone, fetch, push and
// pull scripts with host git (the reference) and the VM's git against
// it: the server repositories start equal (same commits, same hashes) for
// each side, and what each side prints, how it ends, and what the server
// holds afterwards are compared.

const httpBackend = "/usr/lib/git-core/git-http-backend"

// gitServer serves the bare repositories under root over smart HTTP.
type gitServer struct {
	*httptest.Server
	root string
	port string
}

func newGitServer(t *testing.T) *gitServer { return startGitServer(t, false) }

// testCA is the one certificate (a self-signed CA for 127.0.0.1) the
// HTTPS server presents, made once per process: the host kernel, which
// runs the VM's TLS, reads SSL_CERT_FILE into Go's system pool once, at
// the process's first handshake, so the file must not change after.
var testCA struct {
	once      sync.Once
	cert, key []byte
	file      string
}

func caFile(t *testing.T) string {
	testCA.once.Do(func() {
		testCA.cert, testCA.key = testcert.New(t, false)
		f, err := os.CreateTemp("", "git-test-ca-*.pem")
		if err != nil {
			t.Fatal(err)
		}
		f.Write(testCA.cert)
		f.Close()
		testCA.file = f.Name()
		os.Setenv("SSL_CERT_FILE", testCA.file)
	})
	if testCA.file == "" {
		t.Fatal("no test CA")
	}
	return testCA.file
}

func startGitServer(t *testing.T, useTLS bool) *gitServer {
	t.Helper()
	if _, err := os.Stat(httpBackend); err != nil {
		t.Fatalf("host git's http-backend (the reference server): %v", err)
	}
	root := t.TempDir()
	backend := &cgi.Handler{Path: httpBackend, Env: []string{
		"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "HOME=" + root,
	}}
	mux := http.NewServeMux()
	mux.Handle("/", backend)
	// /auth/ is the same repositories behind HTTP basic authentication.
	mux.HandleFunc("/auth/", func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "agent" || p != "s3cret-pw" {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "auth required", http.StatusUnauthorized)
			return
		}
		r2 := r.Clone(r.Context())
		r2.URL.Path = strings.TrimPrefix(r.URL.Path, "/auth")
		backend.ServeHTTP(w, r2)
	})
	s := httptest.NewUnstartedServer(mux)
	if useTLS {
		caFile(t)
		cert, err := tls.X509KeyPair(testCA.cert, testCA.key)
		if err != nil {
			t.Fatal(err)
		}
		s.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
		s.StartTLS()
	} else {
		s.Start()
	}
	t.Cleanup(s.Close)
	return &gitServer{Server: s, root: root, port: s.URL[strings.LastIndexByte(s.URL, ':')+1:]}
}

// hostMust runs a host shell script that must succeed.
func hostMust(t *testing.T, dir, script string) output {
	t.Helper()
	o := hostSh(t, dir, script)
	if o.code != 0 {
		t.Fatalf("host: %s: exit %d\n%s%s", script, o.code, o.stdout, o.stderr)
	}
	return o
}

// seedRepo makes the bare repository NAME.git on the server from a
// script run by host git in a scratch worktree, pushable over HTTP.
func (s *gitServer) seedRepo(t *testing.T, name, script string) {
	t.Helper()
	work := t.TempDir()
	hostMust(t, work, "git init -q -b main w && cd w && "+script)
	bare := filepath.Join(s.root, name+".git")
	os.RemoveAll(bare)
	hostMust(t, work, "git clone -q --bare w "+bare+" && git -C "+bare+" config http.receivepack true")
}

// standardSeed is a small history: main with two commits, a branch dev,
// a lightweight tag and an annotated one.
const standardSeed = "printf 'one\\n' > f && mkdir d && printf 'x\\n' > d/x && git add . && git commit -q -m one && " +
	"git branch dev && git tag v0 && printf 'two\\n' >> f && git commit -q -am two && git tag -a v1 -m 'release 1' && " +
	"git checkout -q dev && printf 'dev\\n' > g && git add g && git commit -q -m 'dev work' && git checkout -q main"

// localSeed is standardSeed without tags, for a source repository the
// VM's git makes itself.
const localSeed = "printf 'one\\n' > f && mkdir d && printf 'x\\n' > d/x && git add . && git commit -q -m one && " +
	"git branch dev && printf 'two\\n' >> f && git commit -q -am two && " +
	"git checkout dev 2>/dev/null && printf 'dev\\n' > g && git add g && git commit -q -m 'dev work' && git checkout main 2>/dev/null"

// netVM makes a VM whose network policy allows only the given server.
func netVM(t *testing.T, s *gitServer) *vmhost.Host {
	p := policy.AllowAll().DenyNet("*")
	if s != nil {
		p.AllowNet("127.0.0.1:" + s.port)
	}
	return vmtest.NewHost(t, vmhost.Config{Policy: p})
}

// runScripts runs each step with host git in a fresh directory and then
// with the VM's git, the server repository reseeded before each side,
// and compares every step's output and status. In each output the side's
// working directory reads "$DIR".
func runScripts(t *testing.T, s *gitServer, h *vmhost.Host, seed func(), steps ...string) {
	t.Helper()
	seed()
	dir := t.TempDir()
	var want []output
	for _, c := range steps {
		o := hostSh(t, dir, c)
		o.stdout = strings.ReplaceAll(o.stdout, dir, "$DIR")
		o.stderr = strings.ReplaceAll(o.stderr, dir, "$DIR")
		want = append(want, o)
	}
	hostServer := serverState(t, s)
	seed()
	vdir := strings.TrimSpace(vmSh(t, h, "mkdir -p difftest && cd difftest && pwd").stdout)
	for i, c := range steps {
		got := vmSh(t, h, "cd "+vdir+" && "+c)
		got.stdout = strings.ReplaceAll(got.stdout, vdir, "$DIR")
		got.stderr = strings.ReplaceAll(got.stderr, vdir, "$DIR")
		if got != want[i] {
			t.Fatalf("$ %s\nhost (exit %d):\n%s\n-- stderr:\n%s\nVM (exit %d):\n%s\n-- stderr:\n%s\nfirst difference: %s",
				c, want[i].code, want[i].stdout, want[i].stderr, got.code, got.stdout, got.stderr, firstDiff(want[i], got))
		}
	}
	if vmServer := serverState(t, s); vmServer != hostServer {
		t.Fatalf("server after the host's script:\n%s\nafter the VM's:\n%s", hostServer, vmServer)
	}
}

// serverState is what host git reads of every server repository: it
// must pass fsck, and its refs and history are listed.
func serverState(t *testing.T, s *gitServer) string {
	t.Helper()
	if s == nil {
		return ""
	}
	o := hostMust(t, s.root, "for r in *.git; do echo \"== $r\"; git -C $r fsck --strict 2>&1 && git -C $r for-each-ref && git -C $r log --all --format='%H %P %s'; done")
	return o.stdout
}

func TestGitCloneHTTPMatchesHost(t *testing.T) {
	s := newGitServer(t)
	h := netVM(t, s)
	u := s.URL + "/r.git"
	runScripts(t, s, h, func() {
		s.seedRepo(t, "r", standardSeed)
		empty := filepath.Join(s.root, "empty.git")
		os.RemoveAll(empty)
		hostMust(t, s.root, "git init -q --bare -b trunk empty.git && git -C empty.git config http.receivepack true")
	},
		"git clone "+s.URL+"/empty.git e; echo rc=$?; cd e && git status; git branch -a; git config -l",
		"cd e && printf 'x\\n' > x && git add x && git commit -q -m x && git push -u origin trunk && git status && git ls-remote",
		"git clone "+u+" c",
		"cd c && git config -l && git branch -a && git log --format='%H %P %s' && git status && ls -lA | awk 'NR>1 {print $1, ($1 ~ /^d/ ? \"-\" : $5), $NF}' && cat d/x g 2>&1; git rev-parse origin/HEAD v0 v1^{commit} && for t in v0 v1; do cat .git/refs/tags/$t 2>/dev/null || grep refs/tags/$t .git/packed-refs | cut -c1-40; done",
		"cd c && git status --porcelain && git diff HEAD~1",
		"git clone -q "+u+" q && git -C q rev-parse HEAD && git -C q branch -a",
		"git clone -b dev "+u+" c2 && cd c2 && git status && git branch -a && git config -l | grep branch",
		"git clone -o up -q "+u+" c3 && cd c3 && git remote -v && git branch -a && git config -l",
		"git clone --depth 1 "+u+" s && cd s && git log --format='%H %s' && cat .git/shallow && git status",
		"git clone "+s.URL+"/nope.git x; echo rc=$?; ls",
		"git clone -b nope "+u+" y; echo rc=$?; ls",
		"git clone "+u+" c; echo rc=$?",
		"git clone -b v1 "+u+" tagged && git -C tagged rev-parse HEAD && git clone "+s.URL+"/ ; echo rc=$?; git clone "+s.URL+"/r.git/ slash && git -C slash config remote.origin.url",
		// The VM's git does not open bare repositories; their files are
		// compared.
		"git clone --bare -q "+u+" b.git && cd b.git && cat config HEAD && for r in heads/main heads/dev tags/v0 tags/v1; do cat refs/$r 2>/dev/null || grep \" refs/$r$\" packed-refs | cut -c1-40; done; ls refs/remotes 2>&1",
	)
}

func TestGitRemoteMatchesHost(t *testing.T) {
	h := vmtest.NewHost(t, vmhost.Config{})
	compareWithHost(t, h,
		"git init -q -b main repo",
		"git remote; git remote -v",
		"git remote add origin https://example.com/a.git && git remote add up /srv/x && git remote && git remote -v && cat .git/config",
		"git remote add origin x; echo rc=$?",
		"git remote add 'bad name' x; echo rc=$?",
		"git remote get-url origin && git remote get-url nope; echo rc=$?",
		"git remote set-url origin http://b/c && git remote get-url origin && git remote rename up upstream && cat .git/config && git remote",
		"git remote rename nope x; echo rc=$?; git remote rename origin upstream; echo rc=$?",
		"git remote remove upstream && git remote rm nope; echo rc=$? && git remote -v && cat .git/config",
		"git remote show",
		"git remote bogus 2>&1 | head -n 1; git remote bogus 2>/dev/null; echo rc=$?",
	)
}

// A remote's refs move with git remote rename and go with remove.
func TestGitRemoteRenameMovesRefs(t *testing.T) {
	s := newGitServer(t)
	h := netVM(t, s)
	u := s.URL + "/r.git"
	runScripts(t, s, h, func() { s.seedRepo(t, "r", standardSeed) },
		"git clone -q "+u+" c && cd c && git remote rename origin up && git branch -a && git config -l && git status",
		"cd c && git remote remove up && git branch -a && git config -l && git status",
	)
}

func TestGitCloneLocalMatchesHost(t *testing.T) {
	h := vmtest.NewHost(t, vmhost.Config{})
	steps := []string{
		"git init -q -b main src && cd src && " + localSeed,
		"git clone src c && cd c && git config -l && git branch -a && git log --format='%H %s' && git status && ls -A",
		"git clone -q file://$PWD/src c2 && cd c2 && git config -l | sed \"s|$PWD|PWD|\" && git branch -a && git status",
		"git clone --depth 1 src c3 && git -C c3 log --oneline",
		"git clone -q src/.git c4 && git -C c4 rev-parse HEAD",
		"git clone nothere c5; echo rc=$?",
		"git init -q -b trunk empty && git clone empty e2; echo rc=$?; cd e2 && git status && git config -l",
		// c2's objects are a pack (it came through the transport): a
		// path clone copies the pack and its index.
		"git clone -q c2 c7 && cd c7 && git log --format='%H %s' && git branch -a && git status && git diff HEAD~1",
		"git clone -b dev -q src c6 && git -C c6 status && git -C c6 log --oneline",
		"cd src && echo more >> f && git commit -qam more && cd ../c && git fetch && git status && git pull && git log --oneline",
		// A pull's diffstat with a scaled graph, a long name, a new and a
		// deleted file.
		"cd src && seq 1 150 > numbers-with-a-rather-long-name-for-the-stat-column.txt && seq 1 3 > few && git rm -q f 2>/dev/null || rm f; git add -A && git commit -q -m big && cd ../c && git pull",
		"cd c && echo local > l && git add l && git commit -qm local && git push origin main:pushed && git -C ../src branch && git -C ../src log --oneline pushed",
		// The source has main checked out: git refuses to move it.
		"cd c && git push; echo rc=$?; git push origin --delete main; echo rc=$?; git -C ../src log --oneline -1",
		// A pull into a new, empty repository.
		"git init -q -b main e && cd e && git remote add origin ../src && git pull origin main && git log --oneline && git status && ls",
	}
	runScripts(t, nil, h, func() {}, steps...)
}

// Fetch, push and pull over HTTP, with a second clone standing in for
// another user of the same server repository.
func TestGitFetchPushPullHTTPMatchesHost(t *testing.T) {
	s := newGitServer(t)
	h := netVM(t, s)
	u := s.URL + "/r.git"
	runScripts(t, s, h, func() { s.seedRepo(t, "r", standardSeed) },
		"git clone -q "+u+" a && git clone -q "+u+" b && git clone -q --depth 1 "+u+" sh",
		// A fast-forward push, and what the pusher's tracking ref says.
		"cd a && printf 'three\\n' >> f && git commit -q -am three && git status && git push && git status && git rev-parse origin/main",
		"cd a && git push; echo rc=$?",
		// New branches, -u, tags, deletion.
		"cd a && git checkout -b topic && printf 't\\n' > t && git add t && git commit -q -m topic && git push -u origin topic && git status && git config -l | grep branch",
		"cd a && git push origin main:renamed && git push origin --delete dev && git push --tags",
		// The other clone fetches it all.
		"cd b && git fetch && git branch -a && git status",
		"cd b && git fetch --prune && git branch -a",
		"cd b && git pull --ff-only && git log --format='%H %s' && git status",
		"cd b && git fetch origin topic && cat .git/FETCH_HEAD && git fetch origin renamed:refs/heads/copy && git branch",
		"cd b && git fetch origin main:refs/heads/copy2 topic && cat .git/FETCH_HEAD && git branch; git fetch origin nosuch; echo rc=$?; git pull origin nosuch; echo rc=$?",
		// Diverged: the push is refused, the pull cannot fast-forward.
		"cd b && printf 'b\\n' > bfile && git add bfile && git commit -q -m 'b work' && cd ../a && git checkout main 2>/dev/null && printf 'four\\n' >> f && git commit -q -am four && git push -q",
		"cd b && git push; echo rc=$?",
		"cd b && git fetch && git status && git push; echo rc=$?",
		"cd b && git pull --ff-only; echo rc=$?",
		"cd b && git fetch -q && git push --force-with-lease && git rev-parse origin/main",
		// The server moves again: b's lease is stale.
		"cd a && git pull -q --ff-only 2>&1; git fetch -q && git status && cd ../b && printf 'bb\\n' >> bfile && git commit -q -am bb && cd ../a && printf 'five\\n' >> f && git commit -q -am five && git push -q origin HEAD:main -f && cd ../b && git push --force-with-lease; echo rc=$?",
		"cd b && git push -f && git rev-parse origin/main",
		"cd a && git fetch && git status",
		"cd a && git pull --ff-only; echo rc=$?",
		"cd a && git push origin nosuch; echo rc=$?; git push origin --delete nosuch; echo rc=$?",
		"cd a && git fetch nosuchremote; echo rc=$?; git push nosuchremote; echo rc=$?",
		"cd a && git ls-remote && git ls-remote origin && git ls-remote --heads origin && git ls-remote --tags "+u+" && git ls-remote origin main v1 && git ls-remote -q",
		"cd a && git fetch --tags && git fetch --all && git remote add other "+u+" && git fetch --all && git branch -r",
		// A tag moved on the server: the default fetch leaves the local
		// one, --tags refuses to clobber it.
		"cd a && git push -f origin HEAD:refs/tags/v0 && cd ../b && git fetch; echo rc=$?; git fetch --tags; echo rc=$?; cat .git/refs/tags/v0 2>/dev/null || grep refs/tags/v0 .git/packed-refs | cut -c1-40",
		// A shallow clone fetches and pulls only what is new.
		"cd sh && git pull && git log --format='%H %s' && cat .git/shallow && git status",
		// The boundary commit's patch is against nothing, as git shows it.
		"cd sh && git log -p --format=%s | tail -n 12 && git show --stat --format=%s $(cat .git/shallow)",
	)
}

// closedPort is a loopback port nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return strconv.Itoa(port)
}

// A URL the VM's network rules deny fails as host git fails for a host
// it cannot reach: "fatal: unable to access 'URL/': ...", status 128, and
// the clone's directory is not left behind. A loopback address the rules
// do not allow is the VM's own loopback, where nothing listens (the
// host's server there is not reached); another address is refused by
// the policy at once. An allowed port where nothing listens fails with
// host git's very words.
func TestGitRemoteDeniedByNetworkPolicy(t *testing.T) {
	s := newGitServer(t)
	s.seedRepo(t, "r", standardSeed)
	u := s.URL + "/r.git"
	hostMust(t, t.TempDir(), "git clone -q "+u+" c")
	denied := netVM(t, nil)
	vmSh(t, denied, "git --version") // the first run compiles git.wasm; not timed
	ms := regexp.MustCompile(`after \d+ ms`)
	for _, c := range []struct{ url, why string }{
		{u, "Couldn't connect to server"},
		{"http://10.1.2.3:8080/r.git", "Couldn't connect to server (denied by the sandbox's network policy)"},
	} {
		start := time.Now()
		host, port, _ := net.SplitHostPort(strings.TrimPrefix(strings.TrimSuffix(c.url, "/r.git"), "http://"))
		want := "Cloning into 'c'...\nfatal: unable to access '" + c.url + "/': Failed to connect to " + host + " port " + port + " after N ms: " + c.why + "\n"
		got := vmSh(t, denied, "git clone "+c.url+" c; echo rc=$?; ls")
		if got.stdout != "rc=128\n" || ms.ReplaceAllString(got.stderr, "after N ms") != want {
			t.Errorf("denied clone of %s: %+v\nwant stderr %q", c.url, got, want)
		}
		got = vmSh(t, denied, "rm -rf r && git init -q r && cd r && git commit -q --allow-empty -m x && git push "+c.url+" HEAD:main; echo rc=$?; git fetch "+c.url+"; echo rc=$?; cd .. && rm -rf r")
		if got.stdout != "rc=128\nrc=128\n" || strings.Count(got.stderr, "fatal: unable to access '"+c.url+"/': ") != 2 {
			t.Errorf("denied push/fetch of %s: %+v", c.url, got)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%s: took %v", c.url, d)
		}
	}
	// Allowed, but nothing listens: host git's message.
	port := closedPort(t)
	cu := "http://127.0.0.1:" + port + "/r.git"
	want := hostSh(t, t.TempDir(), "git clone "+cu+" c; echo rc=$?; ls")
	p := policy.AllowAll().DenyNet("*").AllowNet("127.0.0.1:" + port)
	allowed := vmtest.NewHost(t, vmhost.Config{Policy: p})
	got := vmSh(t, allowed, "git clone "+cu+" c; echo rc=$?; ls")
	if got.stdout != want.stdout || ms.ReplaceAllString(got.stderr, "after N ms") != ms.ReplaceAllString(want.stderr, "after N ms") {
		t.Fatalf("refused clone:\nVM:   %q\nhost: %q", got.stderr, want.stderr)
	}
}

// Credentials in the URL are sent as HTTP basic authentication and
// never printed; without them, or with wrong ones, the clone fails as
// host git's does with no terminal to prompt on.
func TestGitCloneCredentialsMatchHost(t *testing.T) {
	s := newGitServer(t)
	h := netVM(t, s)
	hostPort := strings.TrimPrefix(s.URL, "http://")
	good := "http://agent:s3cret-pw@" + hostPort + "/auth/r.git"
	bad := "http://agent:wrong-pw@" + hostPort + "/auth/r.git"
	none := s.URL + "/auth/r.git"
	runScripts(t, s, h, func() { s.seedRepo(t, "r", standardSeed) },
		"git clone "+good+" c && cd c && git log --oneline && git config remote.origin.url && git fetch && git status",
		"cd c && printf 'x\\n' >> f && git commit -q -am x && git push && git pull",
		"GIT_TERMINAL_PROMPT=0 git clone "+bad+" d; echo rc=$?",
		"GIT_TERMINAL_PROMPT=0 git clone "+none+" e; echo rc=$?; ls",
	)
	// And the VM's output never holds the password.
	o := vmSh(t, h, "git clone "+good+" z && cd z && git fetch && git push && git pull; git clone "+bad+" y")
	if strings.Contains(o.stdout+o.stderr, "s3cret-pw") || strings.Contains(o.stdout+o.stderr, "wrong-pw") {
		t.Fatalf("a password was printed: %+v", o)
	}
}

// hostileServer serves the real repository with a twist: the ref
// advertisement (forced to protocol v0) carries extra refs whose names
// try to leave .git/refs, or never ends (in protocol v2's ls-refs when
// the client asks for v2, else in v0's advertisement). injected counts
// the v0 advertisements it altered.
func hostileServer(t *testing.T, s *gitServer, endless bool, injected *atomic.Int32) *httptest.Server {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v2 := strings.Contains(r.Header.Get("Git-Protocol"), "version=2")
		r.Header.Del("Git-Protocol")
		if !strings.HasSuffix(r.URL.Path, "/info/refs") && !(endless && v2) {
			resp, err := http.DefaultTransport.RoundTrip(proxyReq(r, s.URL))
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			defer resp.Body.Close()
			for k, v := range resp.Header {
				w.Header()[k] = v
			}
			w.WriteHeader(resp.StatusCode)
			io.Copy(w, resp.Body)
			return
		}
		if endless && v2 {
			// Protocol v2: the capabilities, then an ls-refs that never
			// ends.
			pkt := func(s string) string { return fmt.Sprintf("%04x%s", len(s)+4, s) }
			if r.Method == http.MethodGet {
				w.Header().Set("Content-Type", "application/x-git-upload-pack-advertisement")
				io.WriteString(w, pkt("version 2\n")+pkt("agent=git/2.39.5\n")+pkt("ls-refs=unborn\n")+pkt("fetch=shallow wait-for-done\n")+pkt("server-option\n")+pkt("object-format=sha1\n")+"0000")
				return
			}
			w.Header().Set("Content-Type", "application/x-git-upload-pack-result")
			for i := 0; r.Context().Err() == nil; i++ {
				if _, err := io.WriteString(w, pkt(fmt.Sprintf("%s refs/heads/%s/b%09d\n", strings.Repeat("a", 40), longName, i))); err != nil {
					return
				}
			}
			return
		}
		w.Header().Set("Content-Type", "application/x-git-upload-pack-advertisement")
		if endless {
			injected.Add(1)
			pkt := func(s string) string { return fmt.Sprintf("%04x%s", len(s)+4, s) }
			io.WriteString(w, pkt("# service=git-upload-pack\n")+"0000")
			io.WriteString(w, pkt(strings.Repeat("a", 40)+" HEAD\x00side-band-64k\n"))
			for i := 0; r.Context().Err() == nil; i++ {
				if _, err := io.WriteString(w, pkt(fmt.Sprintf("%s refs/heads/%s/b%09d\n", strings.Repeat("a", 40), longName, i))); err != nil {
					return
				}
			}
			return
		}
		resp, err := http.DefaultTransport.RoundTrip(proxyReq(r, s.URL))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		// The first commit of main is what the hostile refs name.
		head := regexp.MustCompile(`[0-9a-f]{40} refs/heads/main`).Find(body)
		if head == nil || !bytes.HasSuffix(body, []byte("0000")) {
			http.Error(w, "unexpected advertisement", http.StatusBadGateway)
			return
		}
		var extra string
		for _, n := range []string{"refs/heads/../../evil", "refs/heads/../../../../../tmp/evil", "refs/tags/../../hooks/evil", "refs/heads/.evil", "refs/heads/ev\\il"} {
			line := string(head[:40]) + " " + n + "\n"
			extra += fmt.Sprintf("%04x%s", len(line)+4, line)
		}
		injected.Add(1)
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		w.Write(append(body[:len(body)-4:len(body)-4], []byte(extra+"0000")...))
	}))
	t.Cleanup(hs.Close)
	return hs
}

// longName makes each endless ref line about 1 KB, so the test streams
// 16 MiB in few lines (a valid ref name component of 990 characters).
var longName = strings.Repeat("x", 990)

// proxyReq is r re-aimed at the real server.
func proxyReq(r *http.Request, base string) *http.Request {
	pr := r.Clone(r.Context())
	u, _ := url.Parse(base + r.URL.RequestURI())
	pr.URL, pr.Host, pr.RequestURI = u, u.Host, ""
	return pr
}

// Ref names from a server are validated: names that try to climb out of
// .git/refs are not written anywhere, and the clone still gets the real
// refs.
func TestGitCloneRejectsHostileRefNames(t *testing.T) {
	s := newGitServer(t)
	s.seedRepo(t, "r", standardSeed)
	var injected atomic.Int32
	hs := hostileServer(t, s, false, &injected)
	port := hs.URL[strings.LastIndexByte(hs.URL, ':')+1:]
	h := vmtest.NewHost(t, vmhost.Config{Policy: policy.AllowAll().DenyNet("*").AllowNet("127.0.0.1:" + port)})
	o := vmSh(t, h, "git clone -q "+hs.URL+"/r.git c; echo rc=$?; cd c && git branch -a && git fetch 2>&1; echo rc=$?; find / -name '*evil*' 2>/dev/null; ls .git .git/refs/heads; echo end")
	if strings.Contains(o.stdout+o.stderr, "panic") || !strings.HasPrefix(o.stdout, "rc=0\n* main\n  remotes/origin/HEAD -> origin/main\n  remotes/origin/dev\n  remotes/origin/main\n") ||
		strings.Contains(o.stdout, "evil") || !strings.HasSuffix(o.stdout, "end\n") {
		t.Fatalf("clone from a hostile server: %+v", o)
	}
	if n := injected.Load(); n < 2 {
		t.Fatalf("the hostile refs were advertised %d times, want one for the clone and one for the fetch", n)
	}
}

// An advertisement that never ends is cut off at the client's bound: the
// command fails with git's kind of message instead of holding it all.
func TestGitCloneEndlessAdvertisement(t *testing.T) {
	s := newGitServer(t)
	var v0 atomic.Int32
	hs := hostileServer(t, s, true, &v0)
	port := hs.URL[strings.LastIndexByte(hs.URL, ':')+1:]
	h := vmtest.NewHost(t, vmhost.Config{Policy: policy.AllowAll().DenyNet("*").AllowNet("127.0.0.1:" + port)})
	start := time.Now()
	o := vmSh(t, h, "git clone "+hs.URL+"/r.git c; echo rc=$?; ls")
	if o.stdout != "rc=128\n" || !strings.Contains(o.stderr, "fatal: unable to access '"+hs.URL+"/r.git/': ref advertisement too large") {
		t.Fatalf("endless advertisement (protocol v2, the default): %+v", o)
	}
	// The same in protocol v0, which the client falls back to.
	o = vmSh(t, h, "git init -q v0 && cd v0 && git config protocol.version 0 && git fetch "+hs.URL+"/r.git; echo rc=$?")
	if o.stdout != "rc=128\n" || !strings.Contains(o.stderr, "ref advertisement too large") || v0.Load() == 0 {
		t.Fatalf("endless advertisement (protocol v0, %d served): %+v", v0.Load(), o)
	}
	t.Logf("cut off after %v", time.Since(start))
}

// A pack is streamed to the object store, not held in memory, so what
// bounds it is the VM's filesystem: a clone whose pack is bigger than
// that fails cleanly with the write error and leaves nothing behind, and
// the VM carries on. (A 40 MB pack clones in a 24 MiB process; the
// docs record that measurement, too slow to repeat here.)
func TestGitCloneBiggerThanFilesystemLimit(t *testing.T) {
	s := newGitServer(t)
	s.seedRepo(t, "big", "head -c 24000000 /dev/urandom > big.bin && git add big.bin && git commit -q -m big")
	h := vmtest.NewHost(t, vmhost.Config{Policy: policy.AllowAll().DenyNet("*").AllowNet("127.0.0.1:" + s.port), Limits: kernel.Limits{FSBytes: 16 << 20}})
	o := vmSh(t, h, "git clone -q "+s.URL+"/big.git c; echo rc=$?; ls")
	if o.stdout != "rc=128\n" || !strings.HasPrefix(o.stderr, "fatal: write /workspace/c/.git/objects/pack/tmp_pack_") || !strings.HasSuffix(o.stderr, ": No space left on device\n") {
		t.Errorf("a 24 MB pack in a 16 MiB filesystem: %+v", o)
	}
	if after := vmSh(t, h, "echo still here && git init -q small && echo ok"); after.stdout != "still here\nok\n" {
		t.Fatalf("the VM after the failed clone: %+v", after)
	}
}

// A pull that is not a fast-forward: refused as git refuses it while
// neither pull.rebase nor pull.ff nor the command line says how, then
// merged (mergeInto, the merge command's engine) with git's message and
// output, once cleanly and once with a conflict concluded by commit.
func TestGitPullNonFastForward(t *testing.T) {
	s := newGitServer(t)
	h := netVM(t, s)
	u := s.URL + "/r.git"
	runScripts(t, s, h, func() { s.seedRepo(t, "r", standardSeed) },
		"git clone -q "+u+" a && git clone -q "+u+" b",
		"cd a && printf 'server\\n' > s && git add s && git commit -q -m server && git push -q",
		"cd b && echo local > l && git add l && git commit -q -m local && git pull; echo rc=$?; git status",
		"cd b && git pull --ff-only; echo rc=$?; git pull --no-rebase; echo rc=$?; git log --format='%H %P %s' -3; git status; cat .git/ORIG_HEAD",
		"cd a && printf 'one\\nserver two\\n' > f && git commit -q -am 'server f' && git push -q",
		"cd b && printf 'one\\nlocal two\\n' > f && git commit -q -am 'local f' && git -c pull.rebase=false pull; echo rc=$?; cat f; git status; git diff; cat .git/MERGE_MSG",
		"cd b && printf 'one\\nboth\\n' > f && git add f && git commit --no-edit && git log --format='%H %P %s' -2 && git push -q && git status",
		"cd a && git config pull.ff false && git pull; echo rc=$?; git log --format='%H %P %s' -1",
		// switch reports tracking and makes a tracking branch, as
		// checkout does.
		"cd a && git switch dev && git switch main && git switch main && echo x >> f && git commit -q -am x && git switch dev && git switch -q main && git config -l | grep '^branch'",
		// rebase without an upstream argument rebases onto the branch's.
		"cd a && git push -q && cd ../b && echo y > y && git add y && git commit -q -m y && git fetch -q && git rebase; echo rc=$?; git log --format='%H %P %s' -3; git switch -q --detach && git rebase; echo rc=$?; git switch -q main; git switch -q -c nt && git rebase; echo rc=$?",
		// pull --rebase: the local commits onto the fetched ones, a
		// fast-forward, and up to date both ways.
		"cd a && echo z > z && git add z && git commit -q -m z && git push -q && cd ../b && git switch -q main && git pull --rebase; echo rc=$?; git log --format='%H %s' -3; git pull --rebase; echo rc=$?; git push -q && cd ../a && git pull --rebase; echo rc=$?; git pull -r; echo rc=$?; git -c pull.rebase=true pull; echo rc=$?",
	)
}

// HTTPS: the host kernel runs TLS for the VM's git and verifies the
// server against the trust store (SSL_CERT_FILE here); host git is given
// the same CA.
func TestGitCloneHTTPSMatchesHost(t *testing.T) {
	s := startGitServer(t, true)
	h := netVM(t, s)
	u := s.URL + "/r.git"
	ca := "GIT_SSL_CAINFO=" + caFile(t) + " "
	runScripts(t, s, h, func() { s.seedRepo(t, "r", standardSeed) },
		ca+"git clone "+u+" c && cd c && git config -l && git branch -a && git status",
		"cd c && printf 'x\\n' >> f && git commit -q -am x && "+ca+"git push && "+ca+"git fetch && "+ca+"git pull && "+ca+"git ls-remote origin main",
	)
	// A server whose certificate nothing trusts is not cloned from.
	other, otherKey := testcert.New(t, false)
	cert, err := tls.X509KeyPair(other, otherKey)
	if err != nil {
		t.Fatal(err)
	}
	us := httptest.NewUnstartedServer(http.NotFoundHandler())
	us.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	us.StartTLS()
	t.Cleanup(us.Close)
	port := us.URL[strings.LastIndexByte(us.URL, ':')+1:]
	hu := vmtest.NewHost(t, vmhost.Config{Policy: policy.AllowAll().DenyNet("*").AllowNet("127.0.0.1:" + port)})
	prefix := "Cloning into 'c'...\nfatal: unable to access '" + us.URL + "/r.git/': "
	want := hostSh(t, t.TempDir(), ca+"git clone "+us.URL+"/r.git c; echo rc=$?; ls")
	got := vmSh(t, hu, "git clone "+us.URL+"/r.git c; echo rc=$?; ls")
	if want.stdout != "rc=128\n" || got.stdout != want.stdout || !strings.HasPrefix(want.stderr, prefix) || !strings.HasPrefix(got.stderr, prefix+"SSL certificate problem: ") {
		t.Fatalf("untrusted server:\nhost: %+v\nVM:   %+v", want, got)
	}
}

// Host git reads the VM's clone as its own: the VM clones into a host
// directory mounted in the VM, and host git's fsck, index, refs, config
// and status of it equal those of host git's clone of the same server
// repository (over HTTP and from a local path).
func TestGitCloneReadByHostGit(t *testing.T) {
	s := newGitServer(t)
	s.seedRepo(t, "r", standardSeed)
	dir := t.TempDir()
	p := policy.AllowAll().DenyNet("*").AllowNet("127.0.0.1:" + s.port)
	h := vmtest.NewHost(t, vmhost.Config{Policy: p, Mounts: []vm.Mount{{Path: "/mnt/host", HostDir: dir}}})
	u := s.URL + "/r.git"
	hostMust(t, dir, "git clone -q "+u+" host-http && git clone -q host-http host-local && git clone -q -b dev --depth 1 "+u+" host-shallow")
	if o := vmSh(t, h, "cd /mnt/host && git clone -q "+u+" vm-http && git clone -q vm-http vm-local && git clone -q -b dev --depth 1 "+u+" vm-shallow"); o.code != 0 {
		t.Fatalf("VM clones: %+v", o)
	}
	read := "git fsck --strict 2>&1 && git ls-files -s --debug | grep -v '  ctime\\|  mtime\\|  dev:\\|  uid:' && git for-each-ref && git symbolic-ref HEAD && " +
		"git config -l | sed 's|/mnt/host/vm-|DIR/|; s|" + dir + "/host-|DIR/|' && git status --porcelain=v2 --branch && git rev-list --all && cat .git/shallow 2>/dev/null; true"
	for _, kind := range []string{"http", "local", "shallow"} {
		want := hostMust(t, filepath.Join(dir, "host-"+kind), read)
		got := hostMust(t, filepath.Join(dir, "vm-"+kind), read)
		if got != want {
			t.Errorf("host git on the VM's %s clone:\n%s\nstderr: %s\non its own:\n%s\nstderr: %s\nfirst difference: %s", kind, got.stdout, got.stderr, want.stdout, want.stderr, firstDiff(want, got))
		}
	}
}
