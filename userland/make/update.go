package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// status is how far a file's update got.
type status int

const (
	stDone    status = iota // up to date or remade
	stPending               // waiting for a running job
	stFailed
)

// stat reads a file's modification time.
func (m *Make) stat(f *File) {
	f.statted = true
	if f.Phony {
		f.exists, f.mtime = false, 0
		return
	}
	fi, err := os.Stat(f.Name)
	if err != nil && !f.noVpath && !filepath.IsAbs(f.Name) {
		// Not here: the directory search path may have it.
		if p := m.vpathSearch(f.Name); p != "" {
			f.vpath = p
			fi, err = os.Stat(p)
		}
	}
	if err != nil {
		f.exists, f.mtime = false, 0
		return
	}
	f.exists, f.mtime = true, fi.ModTime().UnixNano()
}

// vpathEntry is one 'vpath PATTERN DIRECTORIES' directive.
type vpathEntry struct {
	pattern string
	dirs    []string
}

// splitDirs splits a search path at colons and blanks.
func splitDirs(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ':' || r < 128 && isSpace(byte(r)) })
}

// vpathDirective handles 'vpath', 'vpath PATTERN' and 'vpath PATTERN
// DIRECTORIES'.
func (m *Make) vpathDirective(rest string) {
	words := fields(m.expand(rest, m.global))
	switch len(words) {
	case 0:
		m.vpaths = nil
	case 1:
		kept := m.vpaths[:0]
		for _, e := range m.vpaths {
			if e.pattern != words[0] {
				kept = append(kept, e)
			}
		}
		m.vpaths = kept
	default:
		var dirs []string
		for _, w := range words[1:] {
			dirs = append(dirs, splitDirs(w)...)
		}
		m.vpaths = append(m.vpaths, vpathEntry{pattern: words[0], dirs: dirs})
	}
}

// vpathSearch looks for name in the directories of the vpath
// directives whose pattern matches it, then in VPATH's.
func (m *Make) vpathSearch(name string) string {
	try := func(dirs []string) string {
		for _, d := range dirs {
			p := strings.TrimSuffix(d, "/") + "/" + name
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
		return ""
	}
	for _, e := range m.vpaths {
		if _, ok := matchPattern(e.pattern, name); ok {
			if p := try(e.dirs); p != "" {
				return p
			}
		}
	}
	if v := m.global.lookup("VPATH"); v != nil {
		return try(splitDirs(m.valueOf(v, m.global)))
	}
	return ""
}

// shown is the name of a file in automatic variables: where the
// directory search found it, if it did.
func (m *Make) shown(name string) string {
	if f := m.files[name]; f != nil && f.vpath != "" {
		return f.vpath
	}
	return name
}

// hasRule reports whether the makefiles say how to make f.
func (f *File) hasRule() bool {
	return f.IsTarget || f.HasRecipe || len(f.Double) > 0
}

// scopeFor builds the variable scope f's recipe sees: its own
// variables, then pattern-specific ones, then the scope of the target
// that needed it.
func (m *Make) scopeFor(f *File, parent *Scope) *Scope {
	sc := parent
	for i := 0; i < len(m.patternVars); i++ {
		pv := m.patternVars[i]
		if _, ok := matchPattern(pv.pattern, f.Name); ok {
			s := newScope(sc)
			s.owner = f
			for k, v := range pv.vars.vars {
				s.vars[k] = v
			}
			sc = s
		}
	}
	if f.Vars != nil {
		s := newScope(sc)
		s.owner = f
		for k, v := range f.Vars.vars {
			s.vars[k] = v
		}
		sc = s
	}
	if sc == nil || sc.owner != f {
		// An empty scope of its own marks where f's context starts.
		sc = newScope(sc)
		sc.owner = f
	}
	return sc
}

// update brings f up to date (or starts that) and reports its status.
func (m *Make) update(f *File, parent *Scope, needer string) status {
	switch {
	case f.state == stateDone:
		if f.failed {
			return stFailed
		}
		return stDone
	case f.state == stateRunning:
		return stPending
	}
	if f.scope == nil {
		f.scope = m.scopeFor(f, parent)
		m.stat(f)
		if len(f.second) > 0 {
			m.secondExpand(f)
		}
		if !f.HasRecipe && len(f.Double) == 0 && !f.Phony && !f.implicitOK {
			f.implicitOK = true
			m.implicit(f, 0)
		}
	}
	f.onStack = true
	defer func() { f.onStack = false }()

	if len(f.Double) > 0 {
		return m.updateDouble(f)
	}

	pending, failed := false, false
	deps := append([]string(nil), f.walk...)
	for i := 0; i < len(deps); i++ {
		d := m.file(deps[i])
		if d.onStack {
			m.circular(f, d)
			continue
		}
		if m.skipIntermediate(f, d) {
			continue
		}
		switch m.update(d, f.scope, f.Name) {
		case stPending:
			pending = true
		case stFailed:
			failed = true
			if !m.opts.keepGoing {
				f.depFailed = true
				return m.fail(f)
			}
		}
		if m.stop {
			return m.fail(f)
		}
	}
	if pending {
		return stPending
	}
	if failed {
		f.depFailed = true
		return m.fail(f)
	}
	if !f.hasRule() && !f.exists && !f.HasRecipe {
		if f.Phony {
			f.state, f.changed = stateDone, true
			return stDone
		}
		if d := m.files[".DEFAULT"]; d != nil && d.HasRecipe {
			// .DEFAULT's recipe makes what nothing else can.
			return m.startRecipe(f, d.Recipe, f.Deps, f.OrderOnly)
		}
		return m.noRule(f, needer)
	}
	if !m.mustMake(f) {
		f.state = stateDone
		return stDone
	}
	if !f.HasRecipe {
		f.state = stateDone
		f.changed = true
		m.stat(f)
		return stDone
	}
	return m.startRecipe(f, f.Recipe, f.Deps, f.OrderOnly)
}

// skipIntermediate decides that a missing intermediate file need not
// be made again: what it would be made from is older than f (GNU keeps
// a deleted intermediate deleted until its sources change).
func (m *Make) skipIntermediate(f, d *File) bool {
	if d.state != stateNew || !d.Intermediate || !d.HasRecipe || f.Phony || m.opts.alwaysMake {
		return false
	}
	if !f.statted {
		m.stat(f)
	}
	if !f.exists {
		return false
	}
	if _, err := os.Lstat(d.Name); err == nil {
		return false
	}
	for _, src := range d.Deps {
		sf := m.file(src)
		if sf.IsTarget || sf.Intermediate {
			return false
		}
		if !sf.statted {
			m.stat(sf)
		}
		if !sf.exists || sf.mtime > f.mtime {
			return false
		}
	}
	d.state, d.skipped = stateDone, true
	return true
}

// secondExpand adds the prerequisites of rules read after
// .SECONDEXPANSION, expanded with $@, $* and the prerequisites of the
// target's earlier rules in $<, $^, $+ and $|.
func (m *Make) secondExpand(f *File) {
	chunks := f.second
	f.second = nil
	for _, c := range chunks {
		sc := m.autoScope(f, f.Deps, f.OrderOnly)
		words := m.globWords(unescapeColons(fields(m.expand(c.text, sc))))
		var deps, oo []string
		order := false
		for _, w := range words {
			if w == "|" {
				order = true
				continue
			}
			if c.static {
				if p := findPercent(w); p >= 0 {
					u := unescapePercent(w)
					w = u[:p] + c.stem + u[p+1:]
				}
			}
			m.file(w).Mentioned = true
			if order {
				oo = append(oo, w)
			} else {
				deps = append(deps, w)
			}
		}
		f.addDeps(deps, oo, c.first)
	}
}

// circular reports and drops a dependency on a target being updated.
func (m *Make) circular(f, d *File) {
	m.stderrf("%s: Circular %s <- %s dependency dropped.\n", m.prog, f.Name, d.Name)
	f.Deps = removeWord(f.Deps, d.Name)
	f.OrderOnly = removeWord(f.OrderOnly, d.Name)
	f.walk = removeWord(f.walk, d.Name)
}

func removeWord(ws []string, w string) []string {
	out := ws[:0:0]
	for _, x := range ws {
		if x != w {
			out = append(out, x)
		}
	}
	return out
}

func (m *Make) fail(f *File) status {
	f.state, f.failed = stateDone, true
	return stFailed
}

// noRule reports a file that does not exist and cannot be made.
func (m *Make) noRule(f *File, needer string) status {
	msg := "No rule to make target '" + f.Name + "'"
	if needer != "" {
		msg += ", needed by '" + needer + "'"
	}
	if m.opts.keepGoing {
		m.errorf("%s.", msg)
	} else {
		m.errorf("%s.  Stop.", msg)
		m.stop = true
	}
	m.anyFailed = true
	return m.fail(f)
}

// newer reports whether dependency d counts as newer than f.
func (m *Make) newer(d, f *File) bool {
	if !d.statted {
		m.stat(d)
	}
	if d.skipped {
		return false
	}
	if d.Phony || !d.exists {
		return true
	}
	return !f.exists || d.mtime > f.mtime
}

// mustMake decides whether f's recipe has to run.
func (m *Make) mustMake(f *File) bool {
	if f.Phony || !f.exists {
		return true
	}
	if m.opts.alwaysMake && f.HasRecipe {
		return true
	}
	for _, d := range f.Deps {
		if m.newer(m.file(d), f) {
			return true
		}
	}
	return false
}

// updateDouble updates a double-colon target: each rule on its own.
func (m *Make) updateDouble(f *File) status {
	for f.dcIdx < len(f.Double) {
		r := f.Double[f.dcIdx]
		pending, failed := false, false
		for _, dn := range append(append([]string(nil), r.deps...), r.orderOnly...) {
			d := m.file(dn)
			if d.onStack {
				m.circular(f, d)
				continue
			}
			switch m.update(d, f.scope, f.Name) {
			case stPending:
				pending = true
			case stFailed:
				failed = true
				if !m.opts.keepGoing {
					return m.fail(f)
				}
			}
			if m.stop {
				return m.fail(f)
			}
		}
		if pending {
			return stPending
		}
		f.dcIdx++
		if failed {
			// Under -k the other double-colon rules still run.
			f.depFailed = true
			f.dcFailed++
			continue
		}
		must := !f.exists || len(r.deps) == 0 || m.opts.alwaysMake
		for _, dn := range r.deps {
			if m.newer(m.file(dn), f) {
				must = true
			}
		}
		if must && r.hasRecipe {
			st := m.startRecipe(f, r.recipe, r.deps, r.orderOnly)
			if st != stDone {
				if st == stPending {
					f.state = stateRunning
				}
				return st
			}
			f.state = stateNew
		}
	}
	if f.depFailed {
		return m.fail(f)
	}
	f.state = stateDone
	return stDone
}

// implicit searches the pattern rules for one that makes f; depth
// counts chained rules.
func (m *Make) implicit(f *File, depth int) bool {
	if depth > 4 {
		return false
	}
	type cand struct {
		r    *patternRule
		stem string
		dir  string
		tpat string
	}
	var cands []cand
	for _, r := range m.patterns {
		if !r.hasRecipe {
			continue
		}
		for _, t := range r.targets {
			name, dir := f.Name, ""
			if !strings.Contains(t, "/") {
				if i := strings.LastIndexByte(name, '/'); i >= 0 {
					dir, name = name[:i+1], name[i+1:]
				}
			}
			if stem, ok := matchPattern(t, name); ok {
				if t == "%" && depth > 0 && !r.terminal {
					continue
				}
				cands = append(cands, cand{r, stem, dir, t})
				break
			}
		}
	}
	// Shorter stems win; a pattern without a slash counts the
	// directory it was matched in.
	sort.SliceStable(cands, func(i, j int) bool {
		return len(cands[i].dir)+len(cands[i].stem) < len(cands[j].dir)+len(cands[j].stem)
	})
	subst := func(c cand, ws []string) []string {
		out := make([]string, 0, len(ws))
		for _, w := range ws {
			d := w
			if p := findPercent(w); p >= 0 {
				u := unescapePercent(w)
				d = u[:p] + c.stem + u[p+1:]
				if !strings.Contains(w, "/") && !(c.r.second && strings.Contains(w, "$")) {
					d = c.dir + d
				}
			}
			if c.r.second && strings.Contains(d, "$") {
				// .SECONDEXPANSION: the stem is in, now expand with
				// $@ and $* of this target.
				out = append(out, fields(m.expand(d, m.stemScope(f, c.dir+c.stem)))...)
				continue
			}
			out = append(out, d)
		}
		return out
	}
	for pass := 0; pass < 2; pass++ {
		for _, c := range cands {
			deps := subst(c, c.r.deps)
			ok := true
			var chained []*File
			for _, d := range deps {
				if m.oughtToExist(d) {
					continue
				}
				if pass == 0 || c.r.terminal {
					ok = false
					break
				}
				// A chain: d made by another pattern rule, as an
				// intermediate file.
				df := m.file(d)
				if df.implicitOK || !m.implicit(df, depth+1) {
					ok = false
					break
				}
				df.implicitOK = true
				chained = append(chained, df)
			}
			if !ok {
				for _, df := range chained {
					df.HasRecipe, df.Recipe = false, nil
				}
				continue
			}
			for _, df := range chained {
				if !df.IsTarget && !df.Mentioned {
					df.Intermediate = true
				}
			}
			f.addDeps(deps, subst(c, c.r.orderOnly), true)
			f.Recipe, f.HasRecipe, f.RecipeLoc = c.r.recipe, true, c.r.loc
			f.Stem = c.dir + c.stem
			f.fromImplicit = true
			return true
		}
	}
	return false
}

// stemScope is the scope of a pattern rule's second expansion: $@ and
// $* (with their D and F forms) of target f.
func (m *Make) stemScope(f *File, stem string) *Scope {
	parent := f.scope
	if parent == nil {
		parent = m.global
	}
	sc := newScope(parent)
	for name, val := range map[string]string{"@": f.Name, "*": stem} {
		d, file := ".", val
		if i := strings.LastIndexByte(val, '/'); i >= 0 {
			d, file = val[:i], val[i+1:]
			if d == "" {
				d = "/"
			}
		}
		sc.vars[name] = &Var{Name: name, Value: val, Origin: OriginAutomatic}
		sc.vars[name+"D"] = &Var{Name: name + "D", Value: d, Origin: OriginAutomatic}
		sc.vars[name+"F"] = &Var{Name: name + "F", Value: file, Origin: OriginAutomatic}
	}
	return sc
}

// oughtToExist is GNU's test for a prerequisite of a pattern rule:
// the file exists, or the makefiles name it as a target or a
// prerequisite.
func (m *Make) oughtToExist(name string) bool {
	if f := m.files[name]; f != nil && (f.IsTarget || f.Mentioned) {
		return true
	}
	_, err := os.Stat(name)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return true
	}
	return !filepath.IsAbs(name) && m.vpathSearch(name) != ""
}

// deleteIntermediates removes the intermediate files this run made.
func (m *Make) deleteIntermediates() {
	var names []string
	for _, n := range m.fileOrder {
		f := m.files[n]
		if f.Intermediate && f.madeIntermediate && !f.Precious && !f.Secondary && !m.allSecondary && !m.precious(n) {
			if _, err := os.Lstat(n); err == nil {
				names = append(names, n)
			}
		}
	}
	if len(names) == 0 {
		return
	}
	if !m.opts.silent {
		m.stdoutf("rm %s\n", strings.Join(names, " "))
	}
	if m.opts.dryRun {
		return
	}
	for _, n := range names {
		if err := os.Remove(n); err != nil {
			m.stderrf("%s: unlink: %s: %s\n", m.prog, n, errText(err))
		}
	}
}

// precious reports whether name matches a .PRECIOUS pattern.
func (m *Make) precious(name string) bool {
	for _, p := range m.preciousPats {
		if _, ok := matchPattern(p, name); ok {
			return true
		}
	}
	return false
}
