package shell

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// declWord is one argument of declare and friends: a word that expanded
// to a flag or NAME[=value], or an assignment the parser recognised.
type declWord struct {
	text   string
	assign *syntax.Assign
}

func (s *Shell) declClause(c *syntax.DeclClause) {
	name := c.Variant.Value
	base := ""
	switch name {
	case "local":
		if len(s.funcStack) == 0 {
			s.berr("local", "can only be used in a function")
			s.lastStatus = 1
			return
		}
		base = "L"
	case "export":
		base = "x"
	case "readonly":
		base = "r"
	case "declare", "typeset":
		if len(s.funcStack) > 0 {
			base = "L"
		}
	case "nameref":
		base = "n"
	}
	s.substStatus = nil
	var words []declWord
	for _, a := range c.Args {
		if a.Naked && a.Name == nil && a.Value != nil {
			fs, err := s.fields(a.Value)
			if err != nil {
				s.expandError(err)
				return
			}
			for _, f := range fs {
				words = append(words, declWord{text: f})
			}
			continue
		}
		words = append(words, declWord{assign: a})
	}
	if s.opts.xtrace {
		var args []string
		args = append(args, name)
		for _, w := range words {
			if w.assign == nil {
				args = append(args, w.text)
			} else if w.assign.Naked {
				args = append(args, w.assign.Name.Value)
			} else if w.assign.Value != nil {
				v, _ := s.literal(w.assign.Value)
				args = append(args, w.assign.Name.Value+"="+v)
			}
		}
		s.trace(args)
	}
	s.lastStatus = s.declareWords(name, base, words)
	if s.lastStatus == 0 && s.substStatus != nil && name != "local" && name != "declare" && name != "typeset" && name != "export" && name != "readonly" {
		s.lastStatus = *s.substStatus
	}
}

func (s *Shell) declareWords(name, base string, words []declWord) int {
	on := map[byte]bool{}
	off := map[byte]bool{}
	for _, c := range []byte(base) {
		on[c] = true
	}
	var targets []declWord
	for _, w := range words {
		if w.assign == nil && len(w.text) > 1 && (w.text[0] == '-' || w.text[0] == '+') && len(targets) == 0 {
			if w.text == "--" {
				continue
			}
			for _, c := range []byte(w.text[1:]) {
				if !strings.ContainsRune("aAirxgpfFnlut", rune(c)) {
					s.berr(name, "%s: invalid option", w.text)
					return 2
				}
				if w.text[0] == '-' {
					on[c] = true
				} else {
					off[c] = true
				}
			}
			continue
		}
		targets = append(targets, w)
	}
	if on['f'] && (name == "export" || on['x'] || off['x']) && len(targets) > 0 {
		// export -f name, declare -fx name: children get the function.
		status := 0
		for _, t := range targets {
			n := t.text
			if t.assign != nil && t.assign.Name != nil {
				n = t.assign.Name.Value
			}
			if s.funcs[n] == nil {
				s.berr(name, "%s: not a function", n)
				status = 1
				continue
			}
			if off['x'] || on['n'] {
				delete(s.exportFuncs, n)
			} else {
				s.exportFuncs[n] = true
			}
		}
		return status
	}
	if on['f'] || on['F'] {
		status := 0
		if len(targets) == 0 {
			for _, n := range slices.Sorted(maps.Keys(s.funcs)) {
				if on['F'] {
					s.out(1, "declare -f "+n+"\n")
				} else {
					_, text := s.describe(n)
					s.out(1, strings.TrimPrefix(text, n+" is a function\n")+"\n")
				}
			}
			return 0
		}
		for _, t := range targets {
			n := t.text
			if t.assign != nil {
				n = t.assign.Name.Value
			}
			if s.funcs[n] == nil {
				status = 1
				continue
			}
			if on['F'] {
				s.out(1, n+"\n")
			} else {
				_, text := s.describe(n)
				s.out(1, strings.TrimPrefix(text, n+" is a function\n")+"\n")
			}
		}
		return status
	}
	if on['p'] || len(targets) == 0 && (name != "local" || true) {
		return s.declarePrint(name, on, targets)
	}
	status := 0
	for _, t := range targets {
		var vname string
		var asg *syntax.Assign
		if t.assign != nil {
			asg = t.assign
			vname = asg.Name.Value
		} else {
			n, val, hasVal := strings.Cut(t.text, "=")
			vname = n
			appendOp := strings.HasSuffix(n, "+")
			if appendOp {
				vname = strings.TrimSuffix(n, "+")
			}
			base, _, _ := strings.Cut(vname, "[")
			if !validName(base) {
				s.berr(name, "`%s': not a valid identifier", t.text)
				status = 1
				continue
			}
			asg = &syntax.Assign{Name: &syntax.Lit{Value: base}, Append: appendOp}
			if !hasVal {
				asg.Naked = true
			} else {
				asg.Value = &syntax.Word{Parts: []syntax.WordPart{&syntax.SglQuoted{Value: val}}}
				if base != vname {
					idx := strings.TrimSuffix(strings.TrimPrefix(vname, base+"["), "]")
					asg.Index = &syntax.Word{Parts: []syntax.WordPart{&syntax.Lit{Value: idx}}}
				}
			}
			vname = base
		}
		if !validName(vname) {
			s.berr(name, "`%s': not a valid identifier", vname)
			status = 1
			continue
		}
		local := on['L'] && !on['g']
		cur, sc := s.env.lookup(vname)
		if local && sc != s.env.top {
			// A new local shadows outer variables.
			cur = expand.Variable{Local: true}
			if off['x'] || !on['x'] {
				cur.Exported = false
			}
			s.env.top.vars[vname] = cur
		}
		if cur.ReadOnly && (!asg.Naked || off['r']) {
			s.errf("%s: readonly variable", vname)
			status = 1
			continue
		}
		if on['a'] && cur.Kind != expand.Indexed {
			if cur.Kind == expand.Associative {
				s.errf("%s: %s: cannot convert associative to indexed array", name, vname)
				status = 1
				continue
			}
			nv := expand.Variable{Kind: expand.Indexed, Set: cur.Set, Local: cur.Local, Exported: cur.Exported, ReadOnly: cur.ReadOnly, List: []string{}}
			if cur.Set && cur.Kind == expand.String {
				nv.List = []string{cur.Str}
			}
			cur = nv
		}
		if on['A'] && cur.Kind != expand.Associative {
			if cur.Kind == expand.Indexed && cur.Set {
				s.errf("%s: %s: cannot convert indexed to associative array", name, vname)
				status = 1
				continue
			}
			cur = expand.Variable{Kind: expand.Associative, Local: cur.Local, Exported: cur.Exported, ReadOnly: cur.ReadOnly, Map: map[string]string{}}
		}
		if on['n'] {
			cur.Kind = expand.NameRef
		}
		if on['i'] {
			s.intAttr[vname] = true
		}
		if on['u'] {
			s.caseAttr[vname] = 'u'
		}
		if on['l'] {
			s.caseAttr[vname] = 'l'
		}
		if off['i'] {
			delete(s.intAttr, vname)
		}
		if on['x'] {
			cur.Exported = true
		}
		if off['x'] {
			cur.Exported = false
		}
		s.putVar(vname, cur, local)
		if !asg.Naked {
			if cur.Kind == expand.NameRef {
				v, err := s.literal(asg.Value)
				if err != nil {
					s.expandError(err)
					return 1
				}
				cur.Str, cur.Set = v, true
				s.putVar(vname, cur, local)
			} else if err := s.assignIn(asg, local); err != nil {
				s.assignError(err)
				status = 1
				continue
			}
		}
		if on['r'] {
			v, _ := s.env.lookup(vname)
			v.ReadOnly = true
			s.putVar(vname, v, local)
		}
	}
	return status
}

// putVar stores v in the current local scope or where the variable lives.
func (s *Shell) putVar(name string, v expand.Variable, local bool) {
	if local {
		s.env.top.vars[name] = v
		return
	}
	_, sc := s.env.lookup(name)
	if sc == nil {
		sc = s.env.global()
	}
	sc.vars[name] = v
}

// assignIn runs an assignment, bypassing the readonly check the caller
// already made.
func (s *Shell) assignIn(a *syntax.Assign, local bool) error {
	return s.assign(a, false)
}

func (s *Shell) declarePrint(name string, on map[byte]bool, targets []declWord) int {
	status := 0
	show := func(n string, v expand.Variable) {
		s.out(1, s.declareLine(n, v)+"\n")
	}
	if len(targets) == 0 {
		s.env.Each(func(n string, v expand.Variable) bool {
			if !v.Declared() {
				return true
			}
			switch {
			case on['x'] && !v.Exported, on['r'] && !v.ReadOnly, on['a'] && v.Kind != expand.Indexed, on['A'] && v.Kind != expand.Associative:
				return true
			}
			show(n, v)
			return true
		})
		return 0
	}
	for _, t := range targets {
		n := t.text
		if t.assign != nil {
			n = t.assign.Name.Value
		}
		v, sc := s.env.lookup(n)
		if sc == nil || !v.Declared() {
			s.errf("%s: %s: not found", name, n)
			status = 1
			continue
		}
		show(n, v)
	}
	return status
}

func (s *Shell) declareLine(n string, v expand.Variable) string {
	flags := ""
	switch v.Kind {
	case expand.Indexed:
		flags += "a"
	case expand.Associative:
		flags += "A"
	}
	if s.intAttr[n] {
		flags += "i"
	}
	if v.Kind == expand.NameRef {
		flags += "n"
	}
	if v.ReadOnly {
		flags += "r"
	}
	if v.Exported {
		flags += "x"
	}
	switch s.caseAttr[n] {
	case 'l':
		flags += "l"
	case 'u':
		flags += "u"
	}
	if flags == "" {
		flags = "-"
	}
	line := "declare -" + flags + " " + n
	if !v.IsSet() {
		return line
	}
	switch v.Kind {
	case expand.Indexed:
		var b strings.Builder
		b.WriteString("=(")
		for i, x := range v.List {
			idx := i
			if v.Indexes != nil {
				idx = v.Indexes[i]
			}
			if i > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "[%d]=%s", idx, quoteValue(x))
		}
		b.WriteString(")")
		return line + b.String()
	case expand.Associative:
		var b strings.Builder
		b.WriteString("=(")
		for _, k := range s.assocOrder(n, v.Map) {
			fmt.Fprintf(&b, "[%s]=%s ", assocKeyQuote(k), quoteValue(v.Map[k]))
		}
		b.WriteString(")")
		return line + b.String()
	}
	return line + "=" + quoteValue(v.Str)
}

func assocKeyQuote(k string) string {
	for _, c := range k {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return quoteValue(k)
		}
	}
	return k
}

// assocBuckets is the size of bash 5.2's hash table for an associative
// array (ASSOC_HASH_BUCKETS).
const assocBuckets = 1024

// assocHash is bash's hash_string, 32-bit FNV-1.
func assocHash(k string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(k); i++ {
		h *= 16777619
		h ^= uint32(k[i])
	}
	return h
}

// noteAssocKeys numbers the keys nw (associative, for variable name) has
// and old had not, in the order they were inserted: the literal's order
// for an array literal being assigned, else sorted.
func (s *Shell) noteAssocKeys(name string, old, nw expand.Variable) {
	if nw.Kind != expand.Associative || len(nw.Map) == 0 {
		return
	}
	var fresh []string
	for k := range nw.Map {
		if _, had := old.Map[k]; old.Kind != expand.Associative || !had {
			fresh = append(fresh, k)
		}
	}
	if len(fresh) == 0 {
		return
	}
	pos := map[string]int{}
	for i, k := range s.pendingKeys {
		if _, seen := pos[k]; !seen {
			pos[k] = i
		}
	}
	slices.SortFunc(fresh, func(a, b string) int {
		pa, oka := pos[a]
		pb, okb := pos[b]
		switch {
		case oka && okb:
			return pa - pb
		case oka:
			return -1
		case okb:
			return 1
		}
		return strings.Compare(a, b)
	})
	sh := s.sh
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.assocSeq == nil {
		sh.assocSeq = map[string]uint64{}
	}
	for _, k := range fresh {
		sh.seqN++
		sh.assocSeq[name+"\x00"+k] = sh.seqN
	}
}

// assocOrder is the order bash lists an associative array's keys in:
// its hash table's, bucket by bucket, the latest inserted first within a
// bucket.
func (s *Shell) assocOrder(name string, m map[string]string) []string {
	keys := slices.Sorted(maps.Keys(m))
	sh := s.sh
	sh.mu.Lock()
	seq := make(map[string]uint64, len(keys))
	for _, k := range keys {
		seq[k] = sh.assocSeq[name+"\x00"+k]
	}
	sh.mu.Unlock()
	slices.SortStableFunc(keys, func(a, b string) int {
		ba, bb := assocHash(a)%assocBuckets, assocHash(b)%assocBuckets
		switch {
		case ba != bb:
			return int(ba) - int(bb)
		case seq[a] != seq[b]:
			if seq[a] > seq[b] {
				return -1
			}
			return 1
		}
		return 0
	})
	return keys
}

var _ = strconv.Itoa
