package cli

import (
	"context"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"time"
)

// defaultPipIndex is pip's own default index; its files are served from
// pypiFiles.
const (
	defaultPipIndex = "https://pypi.org/simple"
	pypiFiles       = "files.pythonhosted.org:443"
)

// hostPipIndex is the package index the host's pip uses: PIP_INDEX_URL,
// else what `pip config get global.index-url` says (pip.conf at every
// level pip reads), else pip's default.
func hostPipIndex(ctx context.Context) string {
	if v := strings.TrimSpace(os.Getenv("PIP_INDEX_URL")); v != "" {
		return v
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "python3", "-m", "pip", "config", "get", "global.index-url").Output()
	if v := strings.TrimSpace(string(out)); err == nil && v != "" {
		return v
	}
	return defaultPipIndex
}

// guestPipIndex is index as the VM's pip gets it: without credentials. A
// password or token in the host's index URL is the host's secret, and the
// guest is not trusted with it; an index that needs one is given to the
// VM explicitly (--env PIP_INDEX_URL=...).
func guestPipIndex(index string) string {
	u, err := url.Parse(index)
	if err != nil || u.User == nil {
		return index
	}
	u.User = nil
	return u.String()
}

// pipIndexRules are the network rules that let the VM's pip reach index:
// its host, and for PyPI the host its files come from.
func pipIndexRules(index string) ([]string, error) {
	u, err := url.Parse(index)
	if err != nil || u.Hostname() == "" {
		return nil, &usageError{err: errBadPipIndex(index)}
	}
	port := u.Port()
	if port == "" {
		port = "443"
		if u.Scheme == "http" {
			port = "80"
		}
	}
	rules := []string{net.JoinHostPort(u.Hostname(), port)}
	if u.Hostname() == "pypi.org" {
		rules = append(rules, pypiFiles)
	}
	return rules, nil
}

type errBadPipIndex string

func (e errBadPipIndex) Error() string {
	return "--allow-pip-index: the host's pip index " + string(e) + " is not a URL"
}
