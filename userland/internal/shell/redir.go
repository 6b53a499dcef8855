package shell

import (
	"io"
	"os"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// redirects applies a statement's redirections in order and returns what
// to restore. On failure it prints bash's message, sets status 1 and
// reports false (the command does not run).
func (s *Shell) redirects(rs []*syntax.Redirect) ([]saved, bool) {
	var sv []saved
	for _, rd := range rs {
		if !s.redirect(rd, &sv) {
			s.fds.restore(sv)
			if s.lastStatus == 0 {
				s.lastStatus = 1
			}
			return nil, false
		}
	}
	return sv, true
}

func (s *Shell) redirect(rd *syntax.Redirect, sv *[]saved) bool {
	n := -1
	if rd.N != nil {
		if v := rd.N.Value; strings.HasPrefix(v, "{") && strings.HasSuffix(v, "}") {
			return s.varRedirect(rd, v[1:len(v)-1])
		}
		v, err := strconv.Atoi(rd.N.Value)
		if err != nil {
			s.errf("%s: bad file descriptor", rd.N.Value)
			return false
		}
		n = v
	}
	def := func(d int) int {
		if n >= 0 {
			return n
		}
		return d
	}
	install := func(fd int, o *ofile) {
		*sv = append(*sv, s.fds.swap(fd, o))
	}
	switch rd.Op {
	case syntax.Hdoc, syntax.DashHdoc:
		body, err := s.heredoc(rd)
		if err != nil {
			s.expandError(err)
			return false
		}
		o, err := s.feed(body)
		if err != nil {
			s.errf("cannot create temp file for here-document: %s", errText(err))
			return false
		}
		install(def(0), o)
		o.decRef()
		return true
	case syntax.WordHdoc:
		w, err := s.literal(rd.Word)
		if err != nil {
			s.expandError(err)
			return false
		}
		o, err := s.feed(w + "\n")
		if err != nil {
			s.errf("cannot create temp file for here-document: %s", errText(err))
			return false
		}
		install(def(0), o)
		o.decRef()
		return true
	}
	// The word is expanded once (it may hold a process substitution or a
	// command with side effects); more or fewer than one field is an
	// ambiguous redirect.
	var word string
	if rd.Word != nil {
		fs, err := s.fields(rd.Word)
		if err != nil {
			s.expandError(err)
			return false
		}
		if len(fs) != 1 {
			s.errf("%s: ambiguous redirect", wordSource(rd.Word))
			return false
		}
		word = fs[0]
	}
	switch rd.Op {
	case syntax.DplIn, syntax.DplOut:
		d := 0
		if rd.Op == syntax.DplOut {
			d = 1
		}
		if word == "-" {
			install(def(d), nil)
			return true
		}
		move := strings.HasSuffix(word, "-")
		src, err := strconv.Atoi(strings.TrimSuffix(word, "-"))
		if err != nil {
			if rd.Op == syntax.DplOut && n < 0 {
				// >&file is &>file.
				o, ok := s.openRedir(word, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, true)
				if !ok {
					return false
				}
				install(1, o)
				install(2, o)
				o.decRef()
				return true
			}
			s.errf("%s: ambiguous redirect", word)
			return false
		}
		o := s.fds.get(src)
		if o == nil {
			s.errf("%d: Bad file descriptor", src)
			return false
		}
		install(def(d), o)
		if move {
			install(src, nil)
		}
		return true
	}
	var flag int
	noclob := false
	switch rd.Op {
	case syntax.RdrIn:
		flag = os.O_RDONLY
	case syntax.RdrOut:
		flag = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
		noclob = s.opts.noclobber
	case syntax.RdrClob:
		flag = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	case syntax.AppOut:
		flag = os.O_WRONLY | os.O_CREATE | os.O_APPEND
	case syntax.RdrInOut:
		flag = os.O_RDWR | os.O_CREATE
	case syntax.RdrAll:
		flag = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
		noclob = s.opts.noclobber
	case syntax.AppAll:
		flag = os.O_WRONLY | os.O_CREATE | os.O_APPEND
	default:
		s.errf("unsupported redirection %s", rd.Op)
		return false
	}
	o, ok := s.openRedir(word, flag, noclob)
	if !ok {
		return false
	}
	switch rd.Op {
	case syntax.RdrIn:
		install(def(0), o)
	case syntax.RdrAll, syntax.AppAll:
		install(1, o)
		install(2, o)
	case syntax.RdrInOut:
		install(def(0), o)
	default:
		install(def(1), o)
	}
	o.decRef()
	return true
}

func wordSource(w *syntax.Word) string {
	var b strings.Builder
	_ = syntax.NewPrinter().Print(&b, w)
	return b.String()
}

// openRedir opens a redirection target. /dev/fd/N, /dev/stdin,
// /dev/stdout and /dev/stderr name the shell's own descriptors, as in
// bash; everything else is a file.
func (s *Shell) openRedir(path string, flag int, noclobber bool) (*ofile, bool) {
	fdn := -1
	switch path {
	case "/dev/stdin":
		fdn = 0
	case "/dev/stdout":
		fdn = 1
	case "/dev/stderr":
		fdn = 2
	default:
		if rest, ok := strings.CutPrefix(path, "/dev/fd/"); ok {
			if v, err := strconv.Atoi(rest); err == nil {
				fdn = v
			}
		}
	}
	if fdn >= 0 {
		o := s.fds.get(fdn)
		if o == nil {
			s.errf("%s: Bad file descriptor", path)
			return nil, false
		}
		return o.incRef(), true
	}
	if path == "" {
		s.errf(": No such file or directory")
		return nil, false
	}
	p := s.abs(path)
	if noclobber {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			s.errf("%s: cannot overwrite existing file", path)
			return nil, false
		}
	}
	o, err := s.sh.sys.Open(p, flag, 0o666)
	if err != nil {
		s.errf("%s: %s", path, errText(err))
		return nil, false
	}
	return o, true
}

// heredoc expands a here-document body unless its delimiter is quoted.
func (s *Shell) heredoc(rd *syntax.Redirect) (string, error) {
	if rd.Hdoc == nil {
		return "", nil
	}
	quoted := false
	for _, wp := range rd.Word.Parts {
		switch wp := wp.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			quoted = true
		case *syntax.Lit:
			if strings.ContainsAny(wp.Value, `\`) {
				quoted = true
			}
		}
	}
	var body string
	if quoted {
		if start, end := int(rd.Hdoc.Pos().Offset()), int(rd.Hdoc.End().Offset()); s.src != "" && start >= 0 && start <= end && end <= len(s.src) {
			body = s.src[start:end]
			// The word's end may take in the closing delimiter line.
			if i := strings.LastIndex(body, "\n"); i >= 0 && strings.TrimLeft(body[i+1:], "\t") == hdocDelim(rd.Word) {
				body = body[:i+1]
			}
		} else {
			var b strings.Builder
			for _, wp := range rd.Hdoc.Parts {
				if l, ok := wp.(*syntax.Lit); ok {
					b.WriteString(l.Value)
				}
			}
			body = b.String()
		}
	} else {
		w, _, err := s.substArithWord(rd.Hdoc)
		if err != nil {
			return "", err
		}
		if body, err = expand.Document(s.ecfg(), w); err != nil {
			return "", err
		}
	}
	if rd.Op == syntax.DashHdoc {
		lines := strings.SplitAfter(body, "\n")
		for i, l := range lines {
			lines[i] = strings.TrimLeft(l, "\t")
		}
		body = strings.Join(lines, "")
	}
	return body, nil
}

// feed returns the read end of a pipe a goroutine fills with data.
func (s *Shell) feed(data string) (*ofile, error) {
	r, w, err := s.sh.sys.Pipe(true)
	if err != nil {
		return nil, err
	}
	s.sh.running.Add(1)
	go func() {
		defer s.sh.running.Add(-1)
		_, _ = io.WriteString(w.f, data)
		w.decRef()
	}()
	return r, nil
}

// hdocDelim is a here-document's delimiter with its quotes removed.
func hdocDelim(w *syntax.Word) string {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(strings.ReplaceAll(p.Value, "\\", ""))
		case *syntax.SglQuoted:
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					b.WriteString(l.Value)
				}
			}
		}
	}
	return b.String()
}
