package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v6/plumbing/object"
)

// identity is the author or committer of a new commit: from
// GIT_{AUTHOR,COMMITTER}_{NAME,EMAIL,DATE}, else user.name and
// user.email from the repository's or the global configuration, and now.
func identity(e *env, rp *repo, who string) (*object.Signature, error) {
	name := e.getenv("GIT_" + who + "_NAME")
	email := e.getenv("GIT_" + who + "_EMAIL")
	if name == "" {
		name = configValue(rp, "user", "name")
	}
	if email == "" {
		email = configValue(rp, "user", "email")
	}
	if name == "" || email == "" {
		return nil, fatalf("unable to auto-detect email address: set user.name and user.email "+
			"(git config user.name \"Your Name\"; git config user.email you@example.com) or GIT_%s_NAME/EMAIL", who)
	}
	when := time.Now()
	if d := e.getenv("GIT_" + who + "_DATE"); d != "" {
		t, err := parseDate(d)
		if err != nil {
			return nil, fatalf("invalid date format: %s", d)
		}
		when = t
	}
	return &object.Signature{Name: name, Email: email, When: when}, nil
}

// configValue reads section.key from the repository's configuration, then
// the global one; "" if neither sets it.
func configValue(rp *repo, section, key string) string {
	if v, ok := cliConfig[strings.ToLower(section)+"."+strings.ToLower(key)]; ok {
		return v
	}
	if rp != nil {
		if v, ok := readConfigFile(filepath.Join(rp.gitDir(), "config"), section, key); ok {
			return v
		}
	}
	if home, err := os.UserHomeDir(); err == nil {
		if v, ok := readConfigFile(filepath.Join(home, ".gitconfig"), section, key); ok {
			return v
		}
	}
	return ""
}

// parseDate parses the date formats git accepts in GIT_*_DATE that
// scripts use: "@UNIX [+ZZZZ]", "UNIX +ZZZZ", RFC 3339 / ISO 8601
// ("2024-01-02T03:04:05+01:00", "2024-01-02 03:04:05 +0100") and
// RFC 2822 ("Tue, 2 Jan 2024 03:04:05 +0100"). A time without a zone is
// UTC.
func parseDate(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if len(s) > 100 {
		return time.Time{}, fmt.Errorf("date too long")
	}
	fields := strings.Fields(s)
	if len(fields) >= 1 && len(fields) <= 2 {
		secs := strings.TrimPrefix(fields[0], "@")
		if n, err := strconv.ParseInt(secs, 10, 64); err == nil && (fields[0][0] == '@' || len(fields) == 2) {
			if n < 0 || n > 1<<40 {
				return time.Time{}, fmt.Errorf("date out of range")
			}
			loc := time.UTC
			if len(fields) == 2 {
				l, err := parseZone(fields[1])
				if err != nil {
					return time.Time{}, err
				}
				loc = l
			}
			return time.Unix(n, 0).In(loc), nil
		}
	}
	for _, layout := range []string{
		time.RFC3339, "2006-01-02T15:04:05-0700", "2006-01-02 15:04:05 -0700", "2006-01-02 15:04:05 -07:00",
		time.RFC1123Z, "Mon, 2 Jan 2006 15:04:05 -0700", "Mon Jan 2 15:04:05 2006 -0700",
	} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02 15:04:05"} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("unrecognised date %q", s)
}

// parseZone parses "+HHMM" / "-HHMM".
func parseZone(z string) (*time.Location, error) {
	if len(z) != 5 || (z[0] != '+' && z[0] != '-') {
		return nil, fmt.Errorf("bad zone %q", z)
	}
	hh, err1 := strconv.Atoi(z[1:3])
	mm, err2 := strconv.Atoi(z[3:5])
	if err1 != nil || err2 != nil || hh > 23 || mm > 59 {
		return nil, fmt.Errorf("bad zone %q", z)
	}
	off := hh*3600 + mm*60
	if z[0] == '-' {
		off = -off
	}
	return time.FixedZone("", off), nil
}
