package main

import "sort"

// Origin is where a variable's value came from, as $(origin) names it.
type Origin int

// The origins, in increasing priority of the assignments that may
// replace them (an assignment never replaces a value of higher priority
// unless it is an override).
const (
	OriginUndefined Origin = iota
	OriginDefault
	OriginEnvironment
	OriginFile
	OriginEnvOverride
	OriginCommandLine
	OriginOverride
	OriginAutomatic
)

// String is the origin's name in $(origin)'s words.
func (o Origin) String() string {
	switch o {
	case OriginDefault:
		return "default"
	case OriginEnvironment:
		return "environment"
	case OriginFile:
		return "file"
	case OriginEnvOverride:
		return "environment override"
	case OriginCommandLine:
		return "command line"
	case OriginOverride:
		return "override"
	case OriginAutomatic:
		return "automatic"
	}
	return "undefined"
}

// Var is one make variable.
type Var struct {
	Name      string
	Value     string
	Recursive bool // '=' (expanded on use) rather than ':=' (expanded once)
	Origin    Origin
	// Export is 1 for export, -1 for unexport, 0 when not said.
	Export int
	// expanding is set while a recursive variable expands itself, to
	// catch self-reference.
	expanding bool
	// appendTo marks a target-specific '+=' whose value is added to the
	// variable of the enclosing scope rather than replacing it.
	appendTo bool
	// loc is where it was defined, for the self-reference error.
	loc Loc
	// fromEnv marks a variable that came from the environment: it stays
	// exported when a makefile assigns it.
	fromEnv bool
	// private marks a target-specific variable its prerequisites do
	// not inherit.
	private bool
}

// Scope is a set of variables with a parent: the global scope, or a
// target's (and its pattern's) variables in front of the scope of the
// target that needed it.
type Scope struct {
	vars   map[string]*Var
	parent *Scope
	// owner is the target whose own (target- or pattern-specific)
	// variables these are; nil for the global scope and helpers.
	owner *File
}

func newScope(parent *Scope) *Scope { return &Scope{vars: map[string]*Var{}, parent: parent} }

// lookup finds name in s or its parents. A private target-specific
// variable is seen only by its own target, not by the prerequisites
// that inherit the target's scope.
func (s *Scope) lookup(name string) *Var {
	var self *File
	for c := s; c != nil; c = c.parent {
		if c.owner != nil && self == nil {
			self = c.owner
		}
		if v, ok := c.vars[name]; ok {
			if v.private && c.owner != nil && c.owner != self {
				continue
			}
			return v
		}
	}
	return nil
}

// names returns every variable name visible from s, sorted.
func (s *Scope) names() []string {
	seen := map[string]bool{}
	for c := s; c != nil; c = c.parent {
		for n := range c.vars {
			seen[n] = true
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
