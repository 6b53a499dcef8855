package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	format "github.com/go-git/go-git/v6/plumbing/format/config"
)

// maxConfig bounds a configuration file read.
const maxConfig = 1 << 20

func (rp *repo) gitDir() string { return rp.dot }

// loadConfigFile decodes a git configuration file; a missing file is an
// empty configuration.
func loadConfigFile(name string) (*format.Config, error) {
	cfg := format.New()
	f, err := os.Open(name)
	if os.IsNotExist(err) {
		return cfg, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxConfig+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxConfig {
		return nil, fatalf("%s: configuration file too large", name)
	}
	if err := format.NewDecoder(bytes.NewReader(b)).Decode(cfg); err != nil {
		return nil, fatalf("bad config file %s: %v", name, err)
	}
	return cfg, nil
}

func readConfigFile(name, section, key string) (string, bool) {
	cfg, err := loadConfigFile(name)
	if err != nil || !cfg.HasSection(section) {
		return "", false
	}
	s := cfg.Section(section)
	if !s.HasOption(key) {
		return "", false
	}
	return s.Option(key), true
}

// splitKey splits "section.key" or "section.sub.key".
func splitKey(k string) (section, sub, key string, err error) {
	first := strings.IndexByte(k, '.')
	last := strings.LastIndexByte(k, '.')
	if first <= 0 || last == len(k)-1 {
		return "", "", "", &exitError{code: 1, msg: "error: key does not contain a section: " + k}
	}
	section, key = strings.ToLower(k[:first]), strings.ToLower(k[last+1:])
	if first != last {
		sub = k[first+1 : last]
	}
	return section, sub, key, nil
}

// cmdConfig: git config [--global|--local] [--get|--unset|--list] [key [value]].
func cmdConfig(e *env, args []string) error {
	scope, action := "", ""
	var rest []string
	for _, a := range args {
		switch a {
		case "--global", "--local":
			scope = a
		case "--get", "--unset", "--list", "-l":
			action = a
		default:
			if strings.HasPrefix(a, "-") {
				return usagef("error: unknown option `%s'\nusage: git config [--global|--local] [--get|--unset|--list] name [value]", strings.TrimLeft(a, "-"))
			}
			rest = append(rest, a)
		}
	}
	var file string
	if scope == "--global" {
		home, err := os.UserHomeDir()
		if err != nil {
			return fatalf("$HOME not set")
		}
		file = filepath.Join(home, ".gitconfig")
	} else {
		rp, err := openRepo()
		if err != nil {
			if scope == "" && (action == "--get" || (action == "" && len(rest) == 1)) {
				// Reading outside a repository: the global file only.
				rp = nil
			} else {
				return err
			}
		}
		if rp != nil {
			file = filepath.Join(rp.gitDir(), "config")
		}
	}
	if action == "--list" || action == "-l" {
		return listConfig(e, file)
	}
	if len(rest) == 0 || len(rest) > 2 || (action != "" && len(rest) != 1) {
		return usagef("usage: git config [--global|--local] [--get|--unset|--list] name [value]")
	}
	section, sub, key, err := splitKey(rest[0])
	if err != nil {
		return err
	}
	if len(rest) == 1 && action != "--unset" {
		ck := section + "." + key
		if sub != "" {
			ck = section + "." + sub + "." + key
		}
		v, ok := cliConfig[ck]
		ok = ok && scope == ""
		if !ok && file != "" {
			v, ok = getOption(file, section, sub, key)
		}
		if !ok && scope == "" {
			if home, err := os.UserHomeDir(); err == nil {
				v, ok = getOption(filepath.Join(home, ".gitconfig"), section, sub, key)
			}
		}
		if !ok {
			return &exitError{code: 1}
		}
		fmt.Fprintln(e.stdout, v)
		return nil
	}
	cfg, err := loadConfigFile(file)
	if err != nil {
		return err
	}
	if action == "--unset" {
		if _, ok := getOption(file, section, sub, key); !ok {
			return &exitError{code: 5}
		}
		if sub == "" {
			cfg.Section(section).RemoveOption(key)
		} else {
			cfg.Section(section).Subsection(sub).RemoveOption(key)
		}
	} else {
		cfg.SetOption(section, sub, key, rest[1])
	}
	var buf bytes.Buffer
	if err := format.NewEncoder(&buf).Encode(cfg); err != nil {
		return err
	}
	tmp := file + ".lock"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return fatalf("could not write config file %s: %s", file, errText(err))
	}
	return os.Rename(tmp, file)
}

func getOption(file, section, sub, key string) (string, bool) {
	cfg, err := loadConfigFile(file)
	if err != nil || !cfg.HasSection(section) {
		return "", false
	}
	s := cfg.Section(section)
	if sub == "" {
		return s.Option(key), s.HasOption(key)
	}
	if !s.HasSubsection(sub) {
		return "", false
	}
	ss := s.Subsection(sub)
	return ss.Option(key), ss.HasOption(key)
}

func listConfig(e *env, file string) error {
	files := []string{}
	if home, err := os.UserHomeDir(); err == nil && file != filepath.Join(home, ".gitconfig") {
		files = append(files, filepath.Join(home, ".gitconfig"))
	}
	if file != "" {
		files = append(files, file)
	}
	for _, f := range files {
		cfg, err := loadConfigFile(f)
		if err != nil {
			return err
		}
		for _, s := range cfg.Sections {
			for _, o := range s.Options {
				fmt.Fprintf(e.stdout, "%s.%s=%s\n", strings.ToLower(s.Name), strings.ToLower(o.Key), o.Value)
			}
			for _, ss := range s.Subsections {
				for _, o := range ss.Options {
					fmt.Fprintf(e.stdout, "%s.%s.%s=%s\n", strings.ToLower(s.Name), ss.Name, strings.ToLower(o.Key), o.Value)
				}
			}
		}
	}
	return nil
}
