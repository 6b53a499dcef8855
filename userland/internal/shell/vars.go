package shell

import (
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// scope is one level of variables: the global scope, or a function call's
// locals. Lookups walk from the innermost scope out, as bash's dynamic
// scoping does.
type scope struct {
	vars   map[string]expand.Variable
	parent *scope
}

// env is the shell's variable store seen by the expander. It implements
// expand.WriteEnviron; the special parameters ($?, $#, $@, ...) are
// answered from the shell's state.
type env struct {
	sh  *Shell
	top *scope
}

func newScope(parent *scope) *scope {
	return &scope{vars: map[string]expand.Variable{}, parent: parent}
}

// clone copies the whole chain, so a subshell's changes stay its own.
func (s *scope) clone() *scope {
	if s == nil {
		return nil
	}
	c := &scope{vars: make(map[string]expand.Variable, len(s.vars)), parent: s.parent.clone()}
	for k, v := range s.vars {
		v.List = slices.Clone(v.List)
		v.Indexes = slices.Clone(v.Indexes)
		v.Map = maps.Clone(v.Map)
		c.vars[k] = v
	}
	return c
}

func (e *env) lookup(name string) (expand.Variable, *scope) {
	for s := e.top; s != nil; s = s.parent {
		if v, ok := s.vars[name]; ok {
			return v, s
		}
	}
	return expand.Variable{}, nil
}

// Get answers the expander, special parameters included.
func (e *env) Get(name string) expand.Variable {
	if v, ok := e.special(name); ok {
		return v
	}
	v, _ := e.lookup(name)
	if v.Kind == expand.NameRef {
		if t, _ := e.lookup(v.Str); t.Declared() {
			return t
		}
	}
	return v
}

func str(s string) expand.Variable {
	return expand.Variable{Set: true, Kind: expand.String, Str: s}
}

func (e *env) special(name string) (expand.Variable, bool) {
	sh := e.sh
	switch name {
	case "#":
		return str(strconv.Itoa(len(sh.frame.params))), true
	case "@", "*":
		return expand.Variable{Set: true, Kind: expand.Indexed, List: sh.frame.params}, true
	case "?":
		return str(strconv.Itoa(sh.lastStatus)), true
	case "$":
		return str(strconv.Itoa(sh.pid)), true
	case "BASHPID":
		return str(strconv.Itoa(sh.bashpid)), true
	case "PPID":
		return str(strconv.Itoa(sh.ppid)), true
	case "!":
		if sh.lastBg == 0 {
			return expand.Variable{}, true
		}
		return str(strconv.Itoa(sh.lastBg)), true
	case "-":
		return str(sh.optFlags()), true
	case "0":
		return str(sh.frame.arg0), true
	case "LINENO", linenoVar:
		return str(strconv.Itoa(int(sh.line))), true
	case "SECONDS":
		sh.sh.mu.Lock()
		start := sh.sh.secondsBase
		sh.sh.mu.Unlock()
		return str(strconv.Itoa(int(time.Since(start) / time.Second))), true
	case "RANDOM":
		return str(strconv.Itoa(sh.random())), true
	case "FUNCNAME":
		if len(sh.funcStack) == 0 {
			return expand.Variable{}, true
		}
		l := slices.Clone(sh.funcStack)
		slices.Reverse(l)
		l = append(l, "main")
		return expand.Variable{Set: true, Kind: expand.Indexed, List: l}, true
	case "BASH_LINENO":
		// The line each function on the stack was called from, the
		// innermost first, then 0 for the script.
		l := make([]string, 0, len(sh.callLines)+1)
		for i := len(sh.callLines) - 1; i >= 0; i-- {
			l = append(l, strconv.Itoa(int(sh.callLines[i])))
		}
		l = append(l, "0")
		return expand.Variable{Set: true, Kind: expand.Indexed, List: l}, true
	case "PIPESTATUS":
		l := make([]string, len(sh.pipeStatus))
		for i, s := range sh.pipeStatus {
			l[i] = strconv.Itoa(s)
		}
		return expand.Variable{Set: true, Kind: expand.Indexed, List: l}, true
	case "SHELLOPTS":
		return str(sh.shellopts()), true
	case "_":
		return str(sh.lastArg), true
	case "BASH_COMMAND":
		if sh.curCmd == nil {
			return str(""), true
		}
		return str(bashCommandText(sh.curCmd)), true
	case "BASH_SOURCE":
		l := slices.Clone(sh.bashSource)
		slices.Reverse(l)
		return expand.Variable{Set: true, Kind: expand.Indexed, List: l}, true
	case "BASH_SUBSHELL":
		return str(strconv.Itoa(sh.subshellLevel)), true
	}
	if len(name) > 0 && name[0] >= '1' && name[0] <= '9' {
		n, err := strconv.Atoi(name)
		if err == nil {
			if n <= len(sh.frame.params) {
				return str(sh.frame.params[n-1]), true
			}
			return expand.Variable{}, true
		}
	}
	return expand.Variable{}, false
}

// Each lists every set variable, innermost scope winning.
func (e *env) Each(f func(name string, vr expand.Variable) bool) {
	seen := map[string]bool{}
	for s := e.top; s != nil; s = s.parent {
		for _, k := range slices.Sorted(maps.Keys(s.vars)) {
			if seen[k] {
				continue
			}
			seen[k] = true
			if !f(k, s.vars[k]) {
				return
			}
		}
	}
}

// errReadonly reports an assignment to a read-only variable.
type errReadonly string

func (e errReadonly) Error() string { return string(e) + ": readonly variable" }

// Set assigns or unsets a variable in the scope that holds it (or the
// global scope), keeping attributes unless the caller changes them.
func (e *env) Set(name string, vr expand.Variable) error {
	if name == "SECONDS" && vr.Kind == expand.String {
		// SECONDS=n counts on from n.
		n, _ := strconv.Atoi(strings.TrimSpace(vr.Str))
		e.sh.sh.mu.Lock()
		e.sh.sh.secondsBase = time.Now().Add(-time.Duration(n) * time.Second)
		e.sh.sh.mu.Unlock()
		return nil
	}
	old, sc := e.lookup(name)
	if old.Kind == expand.NameRef && vr.Kind != expand.NameRef && old.Str != "" {
		return e.Set(old.Str, vr)
	}
	if sc == nil {
		sc = e.global()
	}
	if old.ReadOnly {
		return errReadonly(name)
	}
	if !vr.IsSet() && vr.Kind != expand.KeepValue && !vr.Declared() {
		delete(sc.vars, name)
		return nil
	}
	if vr.Kind == expand.KeepValue {
		old.Exported = old.Exported || vr.Exported
		old.ReadOnly = old.ReadOnly || vr.ReadOnly
		old.Local = old.Local || vr.Local
		sc.vars[name] = old
		return nil
	}
	vr.Exported = vr.Exported || old.Exported || (e.sh.opts.allexport && vr.Set)
	vr.Local = old.Local
	if vr.Kind == expand.String && old.Kind == expand.Indexed && old.Set {
		// a=x on an array sets element 0.
		l := slices.Clone(old.List)
		if len(l) == 0 {
			l = []string{vr.Str}
		} else {
			l[0] = vr.Str
		}
		vr.Kind, vr.List, vr.Str, vr.Indexes = expand.Indexed, l, "", old.Indexes
	}
	if vr.Kind == expand.String && old.Kind == expand.Associative && old.Set {
		m := maps.Clone(old.Map)
		m["0"] = vr.Str
		vr.Kind, vr.Map, vr.Str = expand.Associative, m, ""
	}
	e.sh.noteAssocKeys(name, old, vr)
	sc.vars[name] = vr
	return nil
}

func (e *env) global() *scope {
	s := e.top
	for s.parent != nil {
		s = s.parent
	}
	return s
}

// setStr assigns a plain string value.
func (e *env) setStr(name, value string) error { return e.Set(name, str(value)) }

// str returns a variable's value as a string ("" when unset).
func (e *env) str(name string) string {
	v := e.Get(name)
	switch v.Kind {
	case expand.Indexed:
		if len(v.List) > 0 && (v.Indexes == nil || v.Indexes[0] == 0) {
			return v.List[0]
		}
		return ""
	case expand.Associative:
		return v.Map["0"]
	}
	return v.Str
}

// environ returns the exported variables as NAME=value, for a child.
func (e *env) environ() []string {
	// The entries are cut from one string: a child's environment is
	// built for every program the shell starts, and in WebAssembly each
	// small allocation costs more than the copying.
	var names, vals []string
	size := 0
	add := func(name string, v expand.Variable) bool {
		if v.Exported && v.Set && v.Kind == expand.String {
			names, vals = append(names, name), append(vals, v.Str)
			size += len(name) + 1 + len(v.Str)
		}
		return true
	}
	if e.top.parent == nil {
		// Outside functions there is one scope: no shadowing to sort
		// out, and the result is sorted once below.
		names = make([]string, 0, len(e.top.vars))
		vals = make([]string, 0, len(e.top.vars))
		for name, v := range e.top.vars {
			add(name, v)
		}
	} else {
		e.Each(add)
	}
	var b strings.Builder
	b.Grow(size)
	for i, name := range names {
		b.WriteString(name)
		b.WriteByte('=')
		b.WriteString(vals[i])
	}
	all := b.String()
	out := make([]string, len(names), len(names)+len(e.sh.exportFuncs))
	off := 0
	for i, name := range names {
		n := len(name) + 1 + len(vals[i])
		out[i] = all[off : off+n]
		off += n
	}
	for name := range e.sh.exportFuncs {
		if kv, ok := e.sh.funcEnv(name); ok {
			out = append(out, kv)
		}
	}
	slices.Sort(out)
	return out
}

// validName reports whether s is a shell variable name.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// indexedSet sets element i of an indexed array value (sparse-aware).
func indexedSet(v expand.Variable, i int, val string) expand.Variable {
	if v.Kind != expand.Indexed {
		nv := expand.Variable{Set: true, Kind: expand.Indexed, Exported: v.Exported, ReadOnly: v.ReadOnly, Local: v.Local}
		if v.Kind == expand.String && v.Set {
			nv.List = []string{v.Str}
		}
		v = nv
	}
	v.Set = true
	idx := v.Indexes
	if idx == nil {
		if i < len(v.List) {
			l := slices.Clone(v.List)
			l[i] = val
			v.List = l
			return v
		}
		if i == len(v.List) {
			// Appending never changes the elements anyone else holds
			// (they keep their own length), so a+=(x) in a loop stays
			// linear.
			v.List = append(v.List, val)
			return v
		}
		idx = make([]int, len(v.List))
		for j := range idx {
			idx[j] = j
		}
	}
	l := slices.Clone(v.List)
	idx = slices.Clone(idx)
	pos, found := slices.BinarySearch(idx, i)
	if found {
		l[pos] = val
	} else {
		l = slices.Insert(l, pos, val)
		idx = slices.Insert(idx, pos, i)
	}
	v.List, v.Indexes = l, compactIndexes(idx)
	return v
}

// indexedUnset removes element i.
func indexedUnset(v expand.Variable, i int) expand.Variable {
	idx := v.Indexes
	if idx == nil {
		idx = make([]int, len(v.List))
		for j := range idx {
			idx[j] = j
		}
	} else {
		idx = slices.Clone(idx)
	}
	pos, found := slices.BinarySearch(idx, i)
	if !found {
		return v
	}
	v.List = slices.Delete(slices.Clone(v.List), pos, pos+1)
	v.Indexes = compactIndexes(slices.Delete(idx, pos, pos+1))
	return v
}

// compactIndexes returns nil for a dense 0..n-1 index list.
func compactIndexes(idx []int) []int {
	for j, x := range idx {
		if x != j {
			return idx
		}
	}
	return nil
}

// maxIndex is the index after the last element.
func nextIndex(v expand.Variable) int {
	if v.Kind != expand.Indexed {
		if v.Set && v.Kind == expand.String {
			return 1
		}
		return 0
	}
	if v.Indexes == nil {
		return len(v.List)
	}
	if len(v.Indexes) == 0 {
		return 0
	}
	return v.Indexes[len(v.Indexes)-1] + 1
}

// quoteValue quotes s the way declare -p and set print values.
func quoteValue(s string) string {
	if ansiCShouldQuote(s) {
		return ansiCQuote(s)
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range s {
		switch c {
		case '"', '\\', '$', '`':
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	b.WriteByte('"')
	return b.String()
}

// bashCommandText prints a simple command as bash shows it in
// $BASH_COMMAND: words as written, redirections with a space ("2> f").
func bashCommandText(st *syntax.Stmt) string {
	var b strings.Builder
	_ = syntax.NewPrinter(syntax.SingleLine(true)).Print(&b, st)
	out := b.String()
	return redirSpace.ReplaceAllString(out, "$1 $2")
}

var redirSpace = regexp.MustCompile(`(\d?(?:>>|>|<)(?:&)?)([^ &>])`)
