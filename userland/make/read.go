package main

import (
	"errors"
	"io/fs"
	"os"
	"strings"
)

// Loc is a place in a makefile, for messages.
type Loc struct {
	File string
	Line int
}

// cond is one open conditional.
type cond struct {
	// active is whether the current branch's lines are read.
	active bool
	// taken is whether some branch was already active.
	taken bool
	// sawElse is set once a plain 'else' was seen.
	sawElse bool
}

// reader reads one makefile's text.
type reader struct {
	m     *Make
	file  string
	lines []string
	pos   int
	// rule is the rule the following recipe lines belong to, if any.
	rule *pendingRule
	// noTargets is set after a rule line without targets: its recipe
	// lines are read and thrown away.
	noTargets bool
	conds     []cond
	// fixedLine, if set, is the line number of every line (eval).
	fixedLine int
}

// pendingRule is a rule whose recipe is still being read.
type pendingRule struct {
	targets   []string
	deps      []string
	orderOnly []string
	recipe    []recipeLine
	hasRecipe bool
	loc       Loc
	double    bool
	// staticPat is the target pattern of a static pattern rule.
	staticPat string
	grouped   bool
	// second is set for a rule read after .SECONDEXPANSION; secondText
	// holds prerequisites to expand again when the target is updated.
	second     bool
	secondText string
}

// nextLoc is the place GNU make gives the next recipe line: the
// recipe's first line plus the number of lines before it (blank lines,
// comments and continuations are not counted).
func (pr *pendingRule) nextLoc(here Loc) Loc {
	if len(pr.recipe) == 0 {
		return here
	}
	first := pr.recipe[0].loc
	return Loc{first.File, first.Line + len(pr.recipe)}
}

// recipeLine is one line of a recipe as written.
type recipeLine struct {
	text string
	loc  Loc
}

func (r *reader) ignoring() bool {
	for _, c := range r.conds {
		if !c.active {
			return true
		}
	}
	return false
}

// next returns the next logical line (continuations kept) and the
// number of its first physical line.
func (r *reader) next() (string, int, bool) {
	if r.pos >= len(r.lines) {
		return "", 0, false
	}
	start := r.pos
	if r.fixedLine > 0 {
		// Text from $(eval) keeps the line of the eval (GNU counts no
		// lines in a string buffer).
		start = r.fixedLine - 1
	}
	line := r.lines[r.pos]
	r.pos++
	for endsInBackslash(line) && r.pos < len(r.lines) {
		line += "\n" + r.lines[r.pos]
		r.pos++
	}
	return line, start + 1, true
}

// endsInBackslash reports whether s ends with an odd number of
// backslashes (a continued line).
func endsInBackslash(s string) bool {
	n := 0
	for i := len(s) - 1; i >= 0 && s[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// splitLines splits makefile text into physical lines.
func splitLines(text string) []string {
	text = strings.TrimSuffix(text, "\n")
	if text == "" {
		return nil
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// collapseMode joins continued lines outside recipes: a backslash-
// newline and the whitespace around it become one space; under .POSIX
// (posix set) the blanks before the backslash stay, as POSIX and GNU
// make 4.3 there want.
func collapseMode(s string, posix bool) string {
	if !strings.Contains(s, "\\\n") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && s[i+1] == '\n' {
			// Count the backslashes: an even run is not a continuation.
			j := i
			for j > 0 && s[j-1] == '\\' {
				j--
			}
			if (i-j+1)%2 == 0 {
				b.WriteByte('\\')
				continue
			}
			if !posix {
				out := strings.TrimRight(b.String(), " \t")
				b.Reset()
				b.WriteString(out)
			}
			i += 2
			for i < len(s) && (isBlank(s[i]) || s[i] == '\\' && i+1 < len(s) && s[i+1] == '\n') {
				if s[i] == '\\' {
					i++
				}
				i++
			}
			b.WriteByte(' ')
			i--
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// skipRef returns the index just past the variable reference that
// starts at s[i] == '$', or i+1 for a one-character one.
func skipRef(s string, i int) int {
	if i+1 >= len(s) {
		return i + 1
	}
	open := s[i+1]
	if open != '(' && open != '{' {
		return i + 2
	}
	closep := byte(')')
	if open == '{' {
		closep = '}'
	}
	count := 0
	for k := i + 2; k < len(s); k++ {
		switch s[k] {
		case open:
			count++
		case closep:
			if count == 0 {
				return k + 1
			}
			count--
		}
	}
	return len(s)
}

// findUnquoted finds the first of chars in s that is outside variable
// references and not escaped by a backslash.
func findUnquoted(s string, chars string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '$':
			i = skipRef(s, i) - 1
		case c == '\\' && i+1 < len(s):
			i++
		case strings.IndexByte(chars, c) >= 0:
			return i
		}
	}
	return -1
}

// stripComment removes a comment (from an unescaped '#' outside
// variable references) and unescapes '\#'.
func stripComment(s string) string {
	if !strings.Contains(s, "#") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '$':
			e := skipRef(s, i)
			b.WriteString(s[i:e])
			i = e - 1
		case c == '\\':
			j := i
			for j < len(s) && s[j] == '\\' {
				j++
			}
			if j < len(s) && s[j] == '#' {
				n := j - i
				b.WriteString(strings.Repeat("\\", n/2))
				if n%2 == 1 {
					b.WriteByte('#')
					i = j
					continue
				}
				return b.String()
			}
			b.WriteString(s[i:j])
			i = j - 1
		case c == '#':
			return b.String()
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// assignment is a parsed variable assignment.
type assignment struct {
	name     string // unexpanded
	op       string // "=", ":=", "::=", "+=", "?=", "!="
	value    string
	export   int
	override bool
	define   bool
	undefine bool
	private  bool
}

// parseAssignment recognises a variable assignment, with its modifiers
// (export, unexport, override, private, define, undefine).
func parseAssignment(line string) (assignment, bool) {
	var a assignment
	p := strings.TrimLeft(line, " \t")
	for {
		w, rest := firstWord(p)
		switch w {
		case "export":
			a.export = 1
		case "unexport":
			a.export = -1
		case "override":
			a.override = true
		case "private":
			a.private = true
		case "define":
			a.define = true
		case "undefine":
			a.undefine = true
		default:
			w = ""
		}
		if w == "" || rest == "" {
			break
		}
		p = rest
		if a.define || a.undefine {
			break
		}
	}
	if a.define || a.undefine {
		if w, _ := firstWord(p); w == "define" || w == "undefine" {
			// "define" with no name.
			return a, false
		}
		name := trimSpace(p)
		if a.define {
			for _, op := range []string{"::=", ":=", "+=", "?=", "!=", "="} {
				if strings.HasSuffix(name, op) {
					a.op = op
					name = trimSpace(strings.TrimSuffix(name, op))
					break
				}
			}
			if a.op == "" {
				a.op = "="
			}
		}
		a.name = name
		return a, true
	}
	name, op, value, ok := parseVarDef(p)
	if !ok {
		return a, false
	}
	a.name, a.op, a.value = name, op, value
	return a, true
}

// firstWord splits off the first blank-separated word.
func firstWord(s string) (string, string) {
	s = strings.TrimLeft(s, " \t")
	i := strings.IndexAny(s, " \t")
	if i < 0 {
		return s, ""
	}
	return s[:i], strings.TrimLeft(s[i:], " \t")
}

// parseVarDef is GNU's parse_variable_definition: NAME OP VALUE where
// NAME is one word (it may hold references).
func parseVarDef(p string) (name, op, value string, ok bool) {
	wspace := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c == '#' {
			return
		}
		if c == '$' {
			i = skipRef(p, i) - 1
			continue
		}
		if c == '=' {
			return trimSpace(p[:i]), "=", strings.TrimLeft(p[i+1:], " \t"), true
		}
		if i+1 < len(p) && p[i+1] == '=' {
			switch c {
			case ':', '+', '?', '!':
				return trimSpace(p[:i]), string(c) + "=", strings.TrimLeft(p[i+2:], " \t"), true
			}
			if wspace {
				return
			}
			continue
		}
		if c == ':' {
			if i+2 < len(p) && p[i+1] == ':' && p[i+2] == '=' {
				return trimSpace(p[:i]), "::=", strings.TrimLeft(p[i+3:], " \t"), true
			}
			return
		}
		if wspace {
			return
		}
		if isBlank(c) {
			wspace = true
			for i+1 < len(p) && isBlank(p[i+1]) {
				i++
			}
		}
	}
	return
}

// readMakefile reads and evaluates one makefile.
func (m *Make) readMakefile(name string, missingOK bool, from Loc) error {
	data, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	m.makefiles = append(m.makefiles, name)
	m.appendVar("MAKEFILE_LIST", name)
	// A UTF-8 byte-order mark at the start is skipped, as GNU make does.
	m.eval(name, strings.TrimPrefix(string(data), "\xef\xbb\xbf"), m.global)
	return nil
}

// evalText is $(eval TEXT): the text read as makefile lines where the
// eval stands.
func (m *Make) evalText(text string, sc *Scope) {
	saved := m.loc
	r := &reader{m: m, file: m.loc.File, lines: splitLines(text), fixedLine: m.loc.Line}
	if r.fixedLine == 0 {
		r.fixedLine = 1
	}
	r.run()
	m.loc = saved
}

func (m *Make) eval(file, text string, sc *Scope) {
	r := &reader{m: m, file: file, lines: splitLines(text)}
	r.run()
}

func (m *Make) recipePrefix() byte {
	if v := m.global.lookup(".RECIPEPREFIX"); v != nil {
		val := m.valueOf(v, m.global)
		if val != "" {
			return val[0]
		}
	}
	return '\t'
}

func (r *reader) run() {
	m := r.m
	for {
		line, lineno, ok := r.next()
		if !ok {
			break
		}
		m.loc = Loc{r.file, lineno}
		prefix := m.recipePrefix()
		if len(line) > 0 && line[0] == prefix {
			if r.noTargets {
				continue
			}
			if r.rule != nil {
				if r.ignoring() {
					continue
				}
				r.rule.recipe = append(r.rule.recipe, recipeLine{text: recipeText(line[1:], prefix), loc: r.rule.nextLoc(m.loc)})
				r.rule.hasRecipe = true
				continue
			}
		}
		collapsed := stripComment(collapseMode(line, m.posix))
		if a, ok := parseAssignment(collapsed); ok {
			if a.define {
				body := r.defineBody()
				if r.ignoring() {
					continue
				}
				r.endRule()
				a.value = body
				m.assign(a, OriginFile, m.global)
				continue
			}
			if r.ignoring() {
				continue
			}
			r.endRule()
			if a.undefine {
				m.undefine(a)
				continue
			}
			m.assign(a, OriginFile, m.global)
			continue
		}
		trimmed := strings.TrimLeft(collapsed, " \t")
		if trimSpace(trimmed) == "" {
			continue
		}
		word, rest := firstWord(trimmed)
		if r.conditional(word, rest) {
			continue
		}
		if r.ignoring() {
			continue
		}
		switch word {
		case "export", "unexport":
			r.endRule()
			m.exportDirective(word == "export", rest)
			continue
		case "include", "-include", "sinclude":
			r.endRule()
			m.include(rest, word == "include")
			continue
		case "vpath":
			r.endRule()
			m.vpathDirective(rest)
			continue
		case "load":
			m.fatalf("the '%s' directive is not supported by this make", word)
		case "define", "undefine":
			m.fatalf("empty variable name")
		case "override":
			// "override" without an assignment (GNU treats it as a
			// rule line); nothing here.
		}
		if line[0] == prefix {
			m.fatalf("recipe commences before first target")
		}
		r.endRule()
		r.ruleLine(line)
	}
	r.endRule()
	if len(r.conds) > 0 {
		m.loc = Loc{r.file, len(r.lines) + 1}
		m.fatalf("missing 'endif'")
	}
}

// recipeText removes the recipe prefix that starts each continuation
// line of a recipe line.
func recipeText(s string, prefix byte) string {
	if !strings.Contains(s, "\n") {
		return s
	}
	parts := strings.Split(s, "\n")
	for i := 1; i < len(parts); i++ {
		if len(parts[i]) > 0 && parts[i][0] == prefix {
			parts[i] = parts[i][1:]
		}
	}
	return strings.Join(parts, "\n")
}

// defineBody reads the lines of a define up to its endef.
func (r *reader) defineBody() string {
	m := r.m
	start := m.loc
	depth := 0
	var body []string
	for r.pos < len(r.lines) {
		l := r.lines[r.pos]
		r.pos++
		w, rest := firstWord(l)
		switch w {
		case "define", "override", "export":
			if w == "define" || strings.HasPrefix(rest, "define") {
				depth++
			}
		case "endef":
			if depth == 0 {
				if strings.TrimSpace(stripComment(rest)) != "" {
					m.loc = Loc{r.file, r.pos}
					m.warnf("extraneous text after 'endef' directive")
				}
				return strings.Join(body, "\n")
			}
			depth--
		}
		body = append(body, l)
	}
	m.loc = start
	m.fatalf("missing 'endef', unterminated 'define'")
	return ""
}

// conditional handles ifdef, ifndef, ifeq, ifneq, else and endif.
func (r *reader) conditional(word, rest string) bool {
	m := r.m
	switch word {
	case "ifdef", "ifndef", "ifeq", "ifneq":
		if r.ignoring() {
			// Inside a false branch only the nesting counts.
			r.conds = append(r.conds, cond{active: false, taken: true})
			return true
		}
		v := r.test(word, rest)
		r.conds = append(r.conds, cond{active: v, taken: v})
		return true
	case "else":
		if len(r.conds) == 0 {
			m.fatalf("extraneous 'else'")
		}
		c := &r.conds[len(r.conds)-1]
		if c.sawElse {
			m.fatalf("only one 'else' per conditional")
		}
		outerIgnoring := false
		for _, o := range r.conds[:len(r.conds)-1] {
			if !o.active {
				outerIgnoring = true
			}
		}
		w2, rest2 := firstWord(rest)
		if w2 == "" {
			c.sawElse = true
			c.active = !c.taken && !outerIgnoring
			if c.active {
				c.taken = true
			}
			return true
		}
		switch w2 {
		case "ifdef", "ifndef", "ifeq", "ifneq":
		default:
			m.warnf("extraneous text after 'else' directive")
			c.sawElse = true
			c.active = !c.taken && !outerIgnoring
			if c.active {
				c.taken = true
			}
			return true
		}
		if c.taken || outerIgnoring {
			c.active = false
			return true
		}
		v := r.test(w2, rest2)
		c.active, c.taken = v, v
		return true
	case "endif":
		if trimSpace(rest) != "" {
			m.warnf("extraneous text after 'endif' directive")
		}
		if len(r.conds) == 0 {
			m.fatalf("extraneous 'endif'")
		}
		r.conds = r.conds[:len(r.conds)-1]
		return true
	}
	return false
}

// test evaluates one conditional's test.
func (r *reader) test(word, rest string) bool {
	m := r.m
	if word == "ifdef" || word == "ifndef" {
		name := trimSpace(m.expand(rest, m.global))
		if strings.ContainsAny(name, " \t") {
			m.fatalf("invalid syntax in conditional")
		}
		v := m.global.lookup(name)
		def := v != nil && v.Value != ""
		return def == (word == "ifdef")
	}
	a, b, extra, ok := condArgs(rest)
	if !ok {
		m.fatalf("invalid syntax in conditional")
	}
	if extra {
		m.warnf("extraneous text after '%s' directive", word)
	}
	eq := m.expand(a, m.global) == m.expand(b, m.global)
	return eq == (word == "ifeq")
}

// condArgs splits the arguments of ifeq/ifneq: (a,b) or "a" "b" or
// 'a' 'b'; extra reports text after them.
func condArgs(s string) (a, b string, extra, ok bool) {
	s = trimSpace(s)
	if s == "" {
		return "", "", false, false
	}
	if s[0] == '(' {
		body := s[1:]
		count := 0
		comma := -1
		for i := 0; i < len(body); i++ {
			switch body[i] {
			case '(':
				count++
			case ')':
				count--
			case ',':
				if count <= 0 && comma < 0 {
					comma = i
				}
			}
			if comma >= 0 {
				break
			}
		}
		if comma < 0 {
			return "", "", false, false
		}
		a = strings.TrimRight(body[:comma], " \t")
		rest := strings.TrimLeft(body[comma+1:], " \t")
		count = 0
		end := -1
		for i := 0; i < len(rest); i++ {
			if rest[i] == '(' {
				count++
			} else if rest[i] == ')' {
				if count == 0 {
					end = i
					break
				}
				count--
			}
		}
		if end < 0 {
			return "", "", false, false
		}
		return a, rest[:end], trimSpace(rest[end+1:]) != "", true
	}
	q := s[0]
	if q != '"' && q != '\'' {
		return "", "", false, false
	}
	e := strings.IndexByte(s[1:], q)
	if e < 0 {
		return "", "", false, false
	}
	a = s[1 : 1+e]
	s = strings.TrimLeft(s[e+2:], " \t")
	if s == "" || (s[0] != '"' && s[0] != '\'') {
		return "", "", false, false
	}
	q = s[0]
	e = strings.IndexByte(s[1:], q)
	if e < 0 {
		return "", "", false, false
	}
	return a, s[1 : 1+e], trimSpace(s[e+2:]) != "", true
}

// include reads the makefiles named by the words of rest.
func (m *Make) include(rest string, mustExist bool) {
	loc := m.loc
	for _, f := range m.globWords(fields(m.expand(rest, m.global))) {
		if !strings.HasPrefix(f, "/") {
			if _, err := os.Stat(f); err != nil {
				for _, d := range m.opts.includeDirs {
					if _, err := os.Stat(d + "/" + f); err == nil {
						f = d + "/" + f
						break
					}
				}
			}
		}
		err := m.readMakefile(f, !mustExist, loc)
		m.loc = loc
		if err == nil {
			continue
		}
		if errors.Is(err, fs.ErrNotExist) {
			m.missing = append(m.missing, missingInclude{name: f, loc: loc, mustExist: mustExist, err: err})
			continue
		}
		if mustExist {
			m.fatalf("%s: %s", f, errText(err))
		}
	}
}

// exportDirective handles 'export'/'unexport' without an assignment.
func (m *Make) exportDirective(export bool, rest string) {
	names := fields(m.expand(rest, m.global))
	if len(names) == 0 {
		m.exportAll = export
		return
	}
	for _, n := range names {
		v := m.global.lookup(n)
		if v == nil {
			// GNU defines it, empty and simple, so that the export mark
			// has a home.
			v = &Var{Name: n, Origin: OriginFile, loc: m.loc}
			m.global.vars[n] = v
		}
		if export {
			v.Export = 1
		} else {
			v.Export = -1
		}
	}
}

// endRule records the rule whose recipe was being read.
func (r *reader) endRule() {
	if r.rule != nil {
		r.m.recordRule(r.rule)
		r.rule = nil
	}
	r.noTargets = false
}
