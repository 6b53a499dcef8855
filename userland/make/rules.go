package main

import (
	"strings"
)

// File is a target or prerequisite: what the makefiles say about it and
// how its update went.
type File struct {
	Name      string
	Deps      []string
	OrderOnly []string
	Recipe    []recipeLine
	HasRecipe bool
	RecipeLoc Loc
	// Double holds the rules of a double-colon target, each updated on
	// its own.
	Double   []*pendingRule
	IsTarget bool
	// Mentioned is set for a name that appears as a prerequisite.
	Mentioned bool
	Phony     bool
	Precious  bool
	// Intermediate and Secondary are the .INTERMEDIATE and .SECONDARY
	// marks.
	Intermediate bool
	Secondary    bool
	Vars         *Scope
	Stem         string

	// Update state.
	state      fileState
	onStack    bool
	exists     bool
	mtime      int64 // nanoseconds; 0 when missing
	statted    bool
	changed    bool // its recipe ran (or would have)
	failed     bool
	scope      *Scope
	implicitOK bool // the implicit rule search was done
	// fromImplicit is set when the recipe came from a pattern rule.
	fromImplicit bool
	// madeIntermediate is set for an intermediate file this run made,
	// to be deleted at the end.
	madeIntermediate bool
	goal             bool
	// group lists the targets of a grouped rule (&:), made by one run of
	// its recipe.
	group []string
	// dcIdx is the next double-colon rule to consider; dcFailed counts
	// those whose prerequisites failed (GNU reports each).
	dcIdx    int
	dcFailed int
	// depFailed is set when a prerequisite could not be made.
	depFailed bool
	// skipped marks a missing intermediate file left unmade.
	skipped bool
	// second holds prerequisites still to be expanded a second time.
	second []secondDeps
	// walk is every prerequisite in the order make visits them.
	walk []string
	// vpath is where the directory search found the file; noVpath is
	// set once its recipe ran (it is remade here, not there).
	vpath   string
	noVpath bool
}

type fileState int

const (
	stateNew fileState = iota
	stateRunning
	stateDone
)

// patternRule is a rule whose targets hold '%'.
type patternRule struct {
	targets   []string
	deps      []string
	orderOnly []string
	recipe    []recipeLine
	hasRecipe bool
	terminal  bool
	loc       Loc
	// second: its prerequisites are expanded again after the stem is
	// put in (.SECONDEXPANSION).
	second bool
}

// secondDeps are prerequisites a target gets from a rule read after
// .SECONDEXPANSION, expanded again before the target is updated.
type secondDeps struct {
	text   string
	first  bool // from the rule with the recipe: they go first
	static bool // a static pattern rule's, with stem
	stem   string
}

func (m *Make) file(name string) *File {
	f := m.files[name]
	if f == nil {
		f = &File{Name: name}
		m.files[name] = f
		m.fileOrder = append(m.fileOrder, name)
	}
	return f
}

// ruleLine parses a line that is neither an assignment nor a directive.
func (r *reader) ruleLine(line string) {
	m := r.m
	loc := m.loc
	// The recipe after ';' and a comment are cut before expanding.
	var recipe string
	hasSemi := false
	if i := findUnquoted(line, ";#"); i >= 0 {
		if line[i] == ';' {
			recipe = line[i+1:]
			hasSemi = true
		}
		line = line[:i]
	}
	line = collapseMode(line, m.posix)
	// Find the rule's colon: in the written text when it is there,
	// otherwise in the expansion.
	colon := findColon(line)
	var targetsText, rest string
	if colon >= 0 {
		targetsText = m.expand(line[:colon], m.global)
		rest = line[colon:]
	} else {
		exp := m.expand(line, m.global)
		if hasSemi {
			// A ';' produced by expansion does not start a recipe.
			_ = exp
		}
		c := findColon(exp)
		if c < 0 {
			if trimSpace(exp) == "" {
				if hasSemi {
					m.fatalf("missing rule before recipe")
				}
				return
			}
			if strings.HasPrefix(line, "        ") {
				m.fatalf("missing separator (did you mean TAB instead of 8 spaces?)")
			}
			m.fatalf("missing separator")
		}
		targetsText = exp[:c]
		rest = exp[c:]
		if i := strings.IndexByte(rest, ';'); i >= 0 && !hasSemi {
			recipe, hasSemi = rest[i+1:], true
			rest = rest[:i]
		}
	}
	double := false
	grouped := false
	if strings.HasPrefix(rest, "::") {
		double = true
		rest = rest[2:]
	} else {
		rest = rest[1:]
	}
	if strings.HasSuffix(targetsText, "&") {
		grouped = true
		targetsText = targetsText[:len(targetsText)-1]
	}
	targets := m.globWords(unescapeColons(fields(targetsText)))
	if len(targets) == 0 {
		r.noTargets = true
		return
	}
	// A target-specific variable?
	if a, ok := parseAssignment(rest); ok && !a.define {
		if hasSemi {
			a.value += ";" + recipe
		}
		for _, t := range targets {
			m.targetVar(t, a)
		}
		r.noTargets = true
		return
	}
	rest = m.expand(rest, m.global)
	pr := &pendingRule{targets: targets, loc: loc, double: double, grouped: grouped}
	// Static pattern rule: targets: target-pattern: prereq-patterns.
	if c := findUnquoted(rest, ":"); c >= 0 {
		pats := fields(rest[:c])
		if len(pats) != 1 {
			if len(pats) == 0 {
				m.fatalf("missing target pattern")
			}
			m.fatalf("multiple target patterns")
		}
		if findPercent(pats[0]) < 0 {
			m.fatalf("target pattern contains no '%%'")
		}
		pr.staticPat = pats[0]
		rest = rest[c+1:]
	}
	pr.second = m.secondExp
	isPattern := false
	for _, t := range targets {
		if findPercent(t) >= 0 {
			isPattern = true
		}
	}
	var words []string
	if pr.second && !isPattern && strings.Contains(rest, "$") {
		// .SECONDEXPANSION: expanded again when the target is updated.
		pr.secondText = rest
	} else if pr.second && isPattern {
		// Kept whole for the second expansion: a reference may hold
		// blanks.
		words = unescapeColons(fieldsRefs(rest))
	} else {
		words = m.globWords(unescapeColons(fields(rest)))
	}
	oo := false
	for _, w := range words {
		if w == "|" {
			oo = true
			continue
		}
		if oo {
			pr.orderOnly = append(pr.orderOnly, w)
		} else {
			pr.deps = append(pr.deps, w)
		}
	}
	if hasSemi {
		pr.recipe = append(pr.recipe, recipeLine{text: strings.TrimLeft(recipeText(recipe, m.recipePrefix()), " \t"), loc: loc})
		pr.hasRecipe = true
	}
	r.rule = pr
}

// globWords expands the wildcards (and a leading ~) of file names in
// rules and includes, as GNU make does; a pattern that matches nothing
// stays as written.
func (m *Make) globWords(ws []string) []string {
	var out []string
	for _, w := range ws {
		if w == "~" || strings.HasPrefix(w, "~/") {
			if home := m.varValue("HOME", m.global); home != "" {
				w = home + w[1:]
			}
		}
		if findPercent(w) < 0 && strings.ContainsAny(w, "*?[") {
			if g := glob(w); len(g) > 0 {
				out = append(out, g...)
				continue
			}
		}
		out = append(out, w)
	}
	return out
}

// fieldsRefs splits s into words at blanks outside variable references.
func fieldsRefs(s string) []string {
	var out []string
	start := -1
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '$':
			if start < 0 {
				start = i
			}
			i = skipRef(s, i) - 1
		case isSpace(s[i]):
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
		default:
			if start < 0 {
				start = i
			}
		}
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}

// unescapeColons turns the "\:" of file names into ':'.
func unescapeColons(ws []string) []string {
	for i, w := range ws {
		if strings.Contains(w, "\\:") {
			ws[i] = strings.ReplaceAll(w, "\\:", ":")
		}
	}
	return ws
}

// findColon finds the colon of a rule line outside variable references.
func findColon(s string) int {
	return findUnquoted(s, ":")
}

// targetVar records a target- or pattern-specific variable.
func (m *Make) targetVar(target string, a assignment) {
	var sc *Scope
	if findPercent(target) >= 0 {
		for _, pv := range m.patternVars {
			if pv.pattern == target {
				sc = pv.vars
			}
		}
		if sc == nil {
			sc = newScope(nil)
			m.patternVars = append(m.patternVars, patternVar{pattern: target, vars: sc})
		}
	} else {
		f := m.file(target)
		if f.Vars == nil {
			f.Vars = newScope(nil)
		}
		sc = f.Vars
	}
	name := trimSpace(m.expand(a.name, m.global))
	// A command-line (or -e environment) value beats a target-specific
	// one unless that says override (a global override does not): the
	// target gets a copy of it, as it is now (GNU's record_target_var).
	if cl := m.global.lookup(name); cl != nil && (cl.Origin == OriginCommandLine || cl.Origin == OriginEnvOverride) && !a.override {
		sc.vars[name] = &Var{Name: name, Value: cl.Value, Recursive: cl.Recursive, Origin: cl.Origin,
			Export: cl.Export, private: a.private, loc: cl.loc}
		return
	}
	v := &Var{Name: name, Origin: OriginFile, Export: a.export, private: a.private, loc: m.loc}
	if a.override {
		v.Origin = OriginOverride
	}
	// Immediate values are expanded with the target's variables so far
	// in front of the global ones.
	ctx := &Scope{vars: sc.vars, parent: m.global}
	switch a.op {
	case "=":
		v.Recursive, v.Value = true, a.value
	case ":=", "::=":
		v.Value = m.expand(a.value, ctx)
	case "!=":
		v.Recursive, v.Value = true, m.shellFunc(m.expand(a.value, ctx))
	case "?=":
		if sc.vars[name] != nil || m.global.lookup(name) != nil {
			return
		}
		v.Recursive, v.Value = true, a.value
	case "+=":
		if old := sc.vars[name]; old != nil {
			if old.Recursive {
				old.Value = joinNonEmpty(old.Value, a.value)
			} else {
				old.Value = joinNonEmpty(old.Value, m.expand(a.value, ctx))
			}
			old.loc = m.loc
			return
		}
		v.Recursive, v.Value, v.appendTo = true, a.value, true
	}
	sc.vars[name] = v
}

// joinNonEmpty is what '+=' makes of an old and an added value: GNU
// puts a blank between them only when both are non-empty.
func joinNonEmpty(a, b string) string {
	if a == "" {
		return b
	}
	if b == "" {
		return a
	}
	return a + " " + b
}

// patternVar is a pattern-specific variable set.
type patternVar struct {
	pattern string
	vars    *Scope
}

// recordRule enters a finished rule into the database.
func (m *Make) recordRule(pr *pendingRule) {
	if pr.staticPat != "" {
		m.recordStatic(pr)
		return
	}
	pat := 0
	for _, t := range pr.targets {
		if findPercent(t) >= 0 {
			pat++
		}
	}
	if pat > 0 {
		if pat != len(pr.targets) {
			// GNU 4.3 still accepts this, with a warning: each kind of
			// target gets the rule.
			m.loc = pr.loc
			m.warnf("*** mixed implicit and normal rules: deprecated syntax")
			var pats, plain []string
			for _, t := range pr.targets {
				if findPercent(t) >= 0 {
					pats = append(pats, t)
				} else {
					plain = append(plain, t)
				}
			}
			cp := *pr
			cp.targets = plain
			m.recordRule(&cp)
			pr.targets = pats
		}
		m.patterns = append(m.patterns, &patternRule{targets: pr.targets, deps: pr.deps, orderOnly: pr.orderOnly,
			recipe: pr.recipe, hasRecipe: pr.hasRecipe, terminal: pr.double, loc: pr.loc, second: pr.second})
		return
	}
	for _, t := range pr.targets {
		m.recordTarget(t, pr.deps, pr.orderOnly, pr)
		if pr.secondText != "" {
			f := m.file(t)
			f.second = append(f.second, secondDeps{text: pr.secondText, first: pr.hasRecipe})
		}
	}
	if pr.grouped && len(pr.targets) > 1 {
		for _, t := range pr.targets {
			m.file(t).group = pr.targets
		}
	}
}

// recordStatic enters a static pattern rule: each target gets the
// prerequisites its stem gives.
func (m *Make) recordStatic(pr *pendingRule) {
	for _, t := range pr.targets {
		stem, ok := matchPattern(pr.staticPat, t)
		if !ok {
			m.loc = pr.loc
			m.warnf("target '%s' doesn't match the target pattern", t)
			m.recordTarget(t, nil, nil, pr)
			if pr.secondText != "" {
				f := m.file(t)
				f.second = append(f.second, secondDeps{text: pr.secondText, first: pr.hasRecipe})
			}
			continue
		}
		subst := func(ws []string) []string {
			out := make([]string, len(ws))
			for i, w := range ws {
				if p := findPercent(w); p >= 0 {
					u := unescapePercent(w)
					out[i] = u[:p] + stem + u[p+1:]
				} else {
					out[i] = w
				}
			}
			return out
		}
		m.recordTarget(t, subst(pr.deps), subst(pr.orderOnly), pr)
		m.file(t).Stem = stem
		if pr.secondText != "" {
			f := m.file(t)
			f.second = append(f.second, secondDeps{text: pr.secondText, first: pr.hasRecipe, stem: stem, static: true})
		}
	}
}

// special target names and their handling.
func (m *Make) special(name string, deps []string) bool {
	switch name {
	case ".PHONY":
		for _, d := range deps {
			m.file(d).Phony = true
		}
	case ".SUFFIXES":
		if len(deps) == 0 {
			m.suffixes = nil
		} else {
			m.suffixes = append(m.suffixes, deps...)
		}
	case ".PRECIOUS":
		for _, d := range deps {
			if findPercent(d) >= 0 {
				m.preciousPats = append(m.preciousPats, d)
				continue
			}
			m.file(d).Precious = true
		}
	case ".INTERMEDIATE":
		for _, d := range deps {
			m.file(d).Intermediate = true
		}
	case ".SECONDARY":
		if len(deps) == 0 {
			m.allSecondary = true
		}
		for _, d := range deps {
			m.file(d).Secondary = true
		}
	case ".DELETE_ON_ERROR":
		m.deleteOnError = true
	case ".IGNORE":
		if len(deps) == 0 {
			m.ignoreAll = true
		}
		for _, d := range deps {
			m.ignoreTargets[d] = true
		}
	case ".SILENT":
		if len(deps) == 0 {
			m.silentAll = true
		}
		for _, d := range deps {
			m.silentTargets[d] = true
		}
	case ".EXPORT_ALL_VARIABLES":
		m.exportAll = true
	case ".NOTPARALLEL":
		m.notParallel = true
	case ".ONESHELL":
		m.oneShell = true
	case ".POSIX":
		// GNU 4.3: recipes run with sh -e, and continuation lines keep
		// the blanks before the backslash.
		m.posix = true
		if v := m.global.lookup(".SHELLFLAGS"); v != nil && v.Origin == OriginDefault {
			m.setVar(".SHELLFLAGS", "-ec", OriginDefault)
		}
	case ".SECONDEXPANSION":
		m.secondExp = true
	case ".DEFAULT", ".LOW_RESOLUTION_TIME", ".NOTINTERMEDIATE":
		return false
	default:
		return false
	}
	return true
}

// recordTarget adds one explicit rule for target t.
func (m *Make) recordTarget(t string, deps, oo []string, pr *pendingRule) {
	m.special(t, deps)
	f := m.file(t)
	f.IsTarget = true
	for _, d := range deps {
		m.file(d).Mentioned = true
	}
	for _, d := range oo {
		m.file(d).Mentioned = true
	}
	if m.defaultGoal() == "" && isGoalCandidate(t) {
		m.setDefaultGoal(t)
	}
	if pr.double {
		if f.HasRecipe || (len(f.Deps) > 0 && len(f.Double) == 0) {
			m.loc = pr.loc
			m.fatalf("target file '%s' has both : and :: entries", t)
		}
		cp := *pr
		cp.deps, cp.orderOnly = deps, oo
		f.Double = append(f.Double, &cp)
		return
	}
	if len(f.Double) > 0 {
		m.loc = pr.loc
		m.fatalf("target file '%s' has both : and :: entries", t)
	}
	if pr.hasRecipe {
		if f.HasRecipe && !strings.HasPrefix(t, ".") {
			m.loc = recipeLoc(pr)
			m.warnf("warning: overriding recipe for target '%s'", t)
			m.loc = f.RecipeLoc
			m.warnf("warning: ignoring old recipe for target '%s'", t)
		}
		f.Recipe, f.HasRecipe, f.RecipeLoc = pr.recipe, true, recipeLoc(pr)
		// The prerequisites of the rule with the recipe come first.
		f.addDeps(deps, oo, true)
		return
	}
	f.addDeps(deps, oo, false)
}

// recipeLoc is where a rule's recipe starts (GNU's place for it).
func recipeLoc(pr *pendingRule) Loc {
	if len(pr.recipe) > 0 {
		return pr.recipe[0].loc
	}
	return pr.loc
}

// addDeps adds prerequisites (normal and order-only) in front of or
// after those f has. walk keeps GNU's single list, in which make visits
// them: each rule's normal prerequisites, then its order-only ones.
func (f *File) addDeps(deps, oo []string, front bool) {
	seg := append(append([]string(nil), deps...), oo...)
	if front {
		f.Deps = append(append([]string(nil), deps...), f.Deps...)
		f.OrderOnly = append(append([]string(nil), oo...), f.OrderOnly...)
		f.walk = append(seg, f.walk...)
		return
	}
	f.Deps = append(f.Deps, deps...)
	f.OrderOnly = append(f.OrderOnly, oo...)
	f.walk = append(f.walk, seg...)
}

// isGoalCandidate reports whether a target may be the default goal: not
// a pattern, and not starting with '.' unless it holds a '/'.
func isGoalCandidate(t string) bool {
	if strings.HasPrefix(t, ".") && !strings.Contains(t, "/") {
		return false
	}
	return findPercent(t) < 0
}

// defaultSuffixes is GNU make's built-in .SUFFIXES list.
var defaultSuffixes = strings.Fields(".out .a .ln .o .c .cc .C .cpp .p .f .F .m .r .y .l .ym .yl .s .S .mod .sym .def .h .info .dvi .tex .texinfo .texi .txinfo .w .ch .web .sh .elc .el")

// suffixRules turns old-fashioned suffix rules (.c.o:) into pattern
// rules, against the final .SUFFIXES list.
func (m *Make) suffixRules() {
	known := map[string]bool{}
	for _, s := range m.suffixes {
		known[s] = true
	}
	for _, name := range m.fileOrder {
		f := m.files[name]
		if !f.IsTarget || !strings.HasPrefix(name, ".") || len(f.Deps) > 0 || !f.HasRecipe {
			continue
		}
		for _, s := range m.suffixes {
			if !strings.HasPrefix(name, s) {
				continue
			}
			t := name[len(s):]
			if t == "" {
				m.patterns = append(m.patterns, &patternRule{targets: []string{"%"}, deps: []string{"%" + s},
					recipe: f.Recipe, hasRecipe: true, loc: f.RecipeLoc})
				break
			}
			if known[t] {
				m.patterns = append(m.patterns, &patternRule{targets: []string{"%" + t}, deps: []string{"%" + s},
					recipe: f.Recipe, hasRecipe: true, loc: f.RecipeLoc})
				break
			}
		}
	}
}
