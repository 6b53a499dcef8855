//go:build !wasip1

package main

// diffCase is one run of make on a directory, compared with GNU make's.
type diffCase struct {
	name string
	// files are written before the run: a name starting with "+x " is
	// executable.
	files map[string]string
	// pre runs in the directory first (to set file times, say).
	pre string
	// args are make's arguments.
	args string
	// post runs after make (to show files); make's status is kept.
	post string
	// stderrLines, if set, compares only the first lines of stderr.
	stderrLines int
}

// mk is a fixture holding only a Makefile.
func mk(text string) map[string]string { return map[string]string{"Makefile": text} }

// old sets the named files' times to 2020, so that what make writes is
// newer.
const old = "touch -t 202001010000 "

var diffCases = []diffCase{
	// Rules and recipes.
	{name: "simple", files: mk("all:\n\techo hello\n"), args: ""},
	{name: "silent-at", files: mk("all:\n\t@echo quiet\n\techo loud\n"), args: ""},
	{name: "default-goal-first", files: mk(".x:\n\techo dot\nfirst second:\n\t@echo $@\n"), args: ""},
	{name: "named-goals", files: mk("a:\n\t@echo A\nb:\n\t@echo B\n"), args: "b a b"},
	{name: "creates-file", files: mk("out.txt: in.txt\n\tcp in.txt out.txt\n"), pre: "echo data > in.txt", args: "", post: "cat out.txt"},
	{name: "up-to-date", files: map[string]string{"Makefile": "out: in\n\tcp in out\n", "in": "x\n", "out": "x\n"}, pre: old + "in", args: ""},
	{name: "nothing-to-be-done", files: mk("all:\n"), args: ""},
	{name: "empty-recipe-up-to-date", files: mk("all: ;\n"), args: ""},
	{name: "rebuild-when-newer", files: map[string]string{"Makefile": "out: in\n\tcp in out\n", "in": "new\n", "out": "old\n"}, pre: old + "out", args: "", post: "cat out"},
	{name: "chain", files: mk("all: b\n\t@echo all from $^\nb: c\n\t@echo b from $<\nc:\n\t@echo c\n"), args: ""},
	{name: "multiple-targets", files: mk("a b c:\n\t@echo making $@\nall: a b c\n"), args: "all"},
	{name: "double-colon", files: mk("all:: \n\t@echo one\nall::\n\t@echo two\n"), args: ""},
	{name: "order-only", files: mk("out: in | dir\n\t@echo $@ from $^ order $|\nin:\n\t@echo in\ndir:\n\t@echo dir\n"), args: ""},
	{name: "semicolon-recipe", files: mk("all: ; @echo inline $@\n"), args: ""},
	{name: "continuation-recipe", files: mk("all:\n\t@echo one \\\n\t  two \\\nthree\n\t@echo 'a\\\n\tb'\n"), args: ""},
	{name: "continuation-var", files: mk("X = a \\\n    b   \\\n   c\nall:\n\t@echo [$(X)]\n"), args: ""},
	{name: "comments", files: mk("# top\nX = 1 # trailing\nY = a\\#b\nall: # c\n\t@echo [$(X)] [$(Y)] # passed to shell\n"), args: ""},
	{name: "recipeprefix", files: mk(".RECIPEPREFIX = >\nall:\n> @echo custom prefix\n"), args: ""},
	{name: "blank-lines-in-recipe", files: mk("all:\n\t@echo a\n\n# comment\n\t@echo b\n"), args: ""},
	{name: "oneshell", files: mk(".ONESHELL:\nall:\n\t@x=1\n\techo $$x\n\tcd /\n\tpwd\n"), args: ""},
	{name: "silent-target", files: mk(".SILENT: a\nall: a\n\techo all\na:\n\techo a\n"), args: ""},
	{name: "silent-all", files: mk(".SILENT:\nall:\n\techo hidden\n"), args: ""},
	{name: "phony", files: map[string]string{"Makefile": ".PHONY: clean\nclean:\n\t@echo cleaning\n", "clean": ""}, args: "clean"},
	{name: "not-phony-exists", files: map[string]string{"Makefile": "clean:\n\t@echo cleaning\n", "clean": ""}, args: "clean"},
	{name: "default-goal-var", files: mk(".DEFAULT_GOAL := b\na:\n\t@echo a\nb:\n\t@echo b\n"), args: ""},
	{name: "multiple-rules-deps", files: mk("all: a\nall: b\n\t@echo $^ first $<\na b:\n\t@:\n"), args: ""},
	{name: "override-recipe-warning", files: mk("all:\n\t@echo one\nall:\n\t@echo two\n"), args: ""},
	{name: "circular", files: mk("a: b\n\t@echo a\nb: a\n\t@echo b\n"), args: ""},

	// Variables.
	{name: "flavors", files: mk("A = $(B)\nB = later\nC := $(B)x\nB = changed\nD ?= d\nD ?= e\nE = e\nE += f\nF := f\nF += $(E)\n::= nope\nG ::= g\nall:\n\t@echo $(A) $(C) $(D) $(E) $(F) $(G)\n"), args: ""},
	{name: "shell-assign", files: mk("X != echo one; echo two\nall:\n\t@echo [$(X)]\n"), args: ""},
	{name: "braces-and-single", files: mk("X = x\nY = y\nall:\n\t@echo ${X} $(Y) $X$$X\n"), args: ""},
	{name: "subst-ref", files: mk("S = a.c b.c c.h\nall:\n\t@echo $(S:.c=.o) $(S:%.c=o/%.o) ${S:.h=}\n"), args: ""},
	{name: "cmdline-var", files: mk("X = file\nall:\n\t@echo $(X) $(origin X)\n"), args: "X=cmd"},
	{name: "cmdline-override", files: mk("override X = forced\nall:\n\t@echo $(X)\n"), args: "X=cmd"},
	{name: "env-var", files: mk("all:\n\t@echo $(FROMENV) $(origin FROMENV)\n"), pre: "export FROMENV=env", args: ""},
	{name: "env-overrides-e", files: mk("FROMENV = file\nall:\n\t@echo $(FROMENV)\n"), pre: "export FROMENV=env", args: "-e"},
	{name: "target-specific", files: mk("X = global\nall: a b\na: X = for-a\na b:\n\t@echo $@ $(X)\nb: X += more\n"), args: ""},
	{name: "target-specific-inherit", files: mk("all: X = top\nall: dep\n\t@echo all $(X)\ndep:\n\t@echo dep $(X)\n"), args: ""},
	{name: "pattern-specific", files: mk("X = g\n%.o: X = pat\nall: a.o\n\t@echo all $(X)\na.o:\n\t@echo $@ $(X)\n"), args: ""},
	{name: "define", files: mk("define LINES\n@echo one\n@echo two\nendef\nall:\n\t$(LINES)\n"), args: ""},
	{name: "define-ops", files: mk("X = x\ndefine A :=\n$(X)-a\nendef\ndefine B +=\nmore\nendef\nall:\n\t@echo $(A) [$(B)]\n"), args: ""},
	{name: "export", files: mk("export A = exported\nB = not\nexport C\nC = late\nall:\n\t@echo \"[$$A] [$$B] [$$C]\"\n"), args: ""},
	{name: "unexport", files: mk("unexport FROMENV\nall:\n\t@echo \"[$$FROMENV]\"\n"), pre: "export FROMENV=env", args: ""},
	{name: "export-all", files: mk(".EXPORT_ALL_VARIABLES:\nX = 1\nall:\n\t@echo \"[$$X]\"\n"), args: ""},
	{name: "curdir-make", files: mk("all:\n\t@echo $(notdir $(CURDIR)) $(MAKE) $(MAKELEVEL) $(SHELL) [$(MAKEFLAGS)]\n"), args: "-s"},
	{name: "automatic-vars", files: mk("all: x/a.c b.c b.c | o\n\t@echo '$$@=$@ $$<=$< $$^=$^ $$+=$+ $$|=$| $$(<D)=$(<D) $$(<F)=$(<F) $$(^D)=$(^D) $$(@F)=$(@F)'\nx/a.c b.c o:\n\t@:\n"), args: ""},
	{name: "question-newer", files: map[string]string{"Makefile": "t: a b\n\t@echo newer: $?\n", "a": "", "b": "", "t": ""}, pre: old + "a t && touch b", args: ""},
	{name: "undefine", files: mk("X = 1\nundefine X\nall:\n\t@echo [$(X)] $(origin X)\n"), args: ""},
	{name: "recursive-self", files: mk("X = $(X) more\nall:\n\t@echo $(X)\n"), args: ""},

	// Conditionals.
	{name: "ifeq-forms", files: mk("A = yes\nifeq ($(A),yes)\nR1 = paren\nendif\nifeq \"$(A)\" \"yes\"\nR2 = dq\nendif\nifneq ('$(A)','no')\nR3 = sq\nendif\nifeq (a ,a)\nR4 = trail\nendif\nifeq ( a,a)\nR5 = lead\nelse\nR5 = not-lead\nendif\nall:\n\t@echo $(R1) $(R2) $(R3) $(R4) $(R5)\n"), args: ""},
	{name: "ifdef-else-if", files: mk("E =\nD = 1\nifdef E\nR = e\nelse ifdef D\nR = d\nelse\nR = none\nendif\nifndef NOPE\nS = undefined\nendif\nall:\n\t@echo $(R) $(S)\n"), args: ""},
	{name: "nested-conditionals", files: mk("A = 1\nifeq ($(A),1)\n ifeq ($(B),)\n  R = inner\n else\n  R = no\n endif\nelse\n ifeq (x,x)\n  R = wrong\n endif\nendif\nall:\n\t@echo $(R)\n"), args: ""},
	{name: "conditional-in-recipe", files: mk("all:\n\t@echo a\nifeq (a,a)\n\t@echo b\nelse\n\t@echo c\nendif\n\t@echo d\n"), args: ""},
	{name: "missing-endif", files: mk("ifeq (a,a)\nall:\n"), args: ""},
	{name: "extraneous-else", files: mk("all:\nelse\n"), args: ""},
	{name: "two-elses", files: mk("ifeq (a,b)\nelse\nelse\nendif\n"), args: ""},

	// Functions.
	{name: "text-functions", files: mk("L = c.c a.o b.c a.o\nall:\n\t@echo '$(subst .,_,$(L))|$(patsubst %.c,%.o,$(L))|$(strip  a   b  )|$(findstring b,abc)$(findstring z,abc)|$(filter %.c,$(L))|$(filter-out %.c,$(L))|$(sort $(L))'\n"), args: ""},
	{name: "word-functions", files: mk("L = one two three four\nall:\n\t@echo '$(word 2,$(L))|$(words $(L))|$(wordlist 2,3,$(L))|$(wordlist 3,9,$(L))|$(firstword $(L))|$(lastword $(L))|$(word 9,$(L))'\n"), args: ""},
	{name: "file-name-functions", files: mk("F = src/a.c b.h /x/y.tar.gz noext d/\nall:\n\t@echo '$(dir $(F))|$(notdir $(F))|$(suffix $(F))|$(basename $(F))|$(addsuffix .x,a b)|$(addprefix p/,a b)|$(join a b c,1 2)'\n"), args: ""},
	{name: "wildcard", files: map[string]string{"Makefile": "all:\n\t@echo $(wildcard *.c) [$(wildcard nope*)] $(wildcard sub/*.h) $(wildcard Makefile)\n", "b.c": "", "a.c": "", ".h.c": "", "sub/x.h": ""}, args: ""},
	{name: "path-functions", files: map[string]string{"Makefile": "all:\n\t@echo $(notdir $(abspath a/../b/./c)) $(notdir $(realpath real)) [$(realpath nope)] $(abspath /x/../y)\n", "real": ""}, args: ""},
	{name: "if-or-and", files: mk("all:\n\t@echo '$(if x,then,else)|$(if ,then,else)|$(if  ,then)|$(or ,,b,c)|$(and a,b,c)|$(and a,,c)'\n"), args: ""},
	{name: "foreach-call", files: mk("pair = $(1)-$(2)\nall:\n\t@echo '$(foreach x,a b c,<$(x)>)|$(call pair,x,y)|$(call pair,only)'\n"), args: ""},
	{name: "value-origin-flavor", files: mk("R = $(X)\nS := s\nall:\n\t@echo '$(value R)|$(origin R) $(origin S) $(origin NONE) $(origin CC) $(origin @)|$(flavor R) $(flavor S) $(flavor NONE)'\n"), args: ""},
	{name: "eval", files: mk("define RULE\n$(1):\n\t@echo rule $(1)\nendef\n$(foreach t,x y,$(eval $(call RULE,$(t))))\nall: x y\n"), args: "all"},
	{name: "shell-function", files: mk("X := $(shell printf 'a\\nb\\n\\n')\nall:\n\t@echo [$(X)] $(shell exit 3)$(.SHELLSTATUS)\n"), args: ""},
	{name: "info-warning", files: mk("$(info parse info)\n$(warning parse warning)\nall:\n\t$(info recipe info)@echo done\n"), args: ""},
	{name: "error", files: mk("all:\n\t@echo no\n$(error stopped here)\n"), args: ""},
	{name: "word-bad-arg", files: mk("all:\n\t@echo $(word x,a b)\n"), args: ""},

	// Pattern rules.
	{name: "pattern-rule", files: map[string]string{"Makefile": "all: a.out b.out\n%.out: %.in\n\tcp $< $@\n", "a.in": "A\n", "b.in": "B\n"}, args: "", post: "cat a.out b.out"},
	{name: "pattern-stem", files: map[string]string{"Makefile": "all: dir/x.o\n%.o: %.c\n\t@echo $* $< $@ $(*D) $(*F)\n", "dir/x.c": ""}, args: ""},
	{name: "static-pattern", files: map[string]string{"Makefile": "OBJS = a.o b.o\nall: $(OBJS)\n$(OBJS): %.o: %.c\n\t@echo $@ from $< stem $*\n", "a.c": "", "b.c": ""}, args: ""},
	{name: "pattern-shortest-stem", files: map[string]string{"Makefile": "all: lib/a.x\n%.x:\n\t@echo generic $*\nlib/%.x:\n\t@echo specific $*\n"}, args: ""},
	{name: "suffix-rule", files: map[string]string{"Makefile": ".SUFFIXES: .txt .up\n.txt.up:\n\ttr a-z A-Z < $< > $@\nall: f.up\n", "f.txt": "hello\n"}, args: "", post: "cat f.up"},
	{name: "chained-intermediate", files: map[string]string{"Makefile": "all: a.z\n%.y: %.x\n\tcp $< $@\n%.z: %.y\n\tcp $< $@\n", "a.x": "x\n"}, args: "", post: "ls"},
	{name: "intermediate-stays-deleted", files: map[string]string{"Makefile": "all: a.z\n%.y: %.x\n\tcp $< $@\n%.z: %.y\n\tcp $< $@\n", "a.x": "x\n"}, args: "", pre: old + "a.x", post: "make; touch -t 202101010000 a.z; touch -t 202201010000 a.x; make; ls"},
	{name: "pattern-missing-source", files: mk("all: a.out\n%.out: %.in\n\tcp $< $@\n"), args: ""},

	// Errors and exit statuses.
	{name: "no-rule", files: mk("all:\n"), args: "nosuch"},
	{name: "no-rule-needed-by", files: mk("all: missing\n\t@echo all\n"), args: ""},
	{name: "no-makefile", files: map[string]string{"x": ""}, args: ""},
	{name: "no-makefile-target", files: map[string]string{"x": ""}, args: "foo"},
	{name: "failing-command", files: mk("all:\n\t@echo before\n\t@exit 3\n\t@echo after\n"), args: ""},
	{name: "ignored-error", files: mk("all:\n\t-@false\n\t@echo after\n"), args: ""},
	{name: "ignore-option", files: mk("all:\n\t@false\n\t@echo after\n"), args: "-i"},
	{name: "keep-going", files: mk("all: a b\n\t@echo all\na:\n\t@false\nb:\n\t@echo b\n"), args: "-k"},
	{name: "keep-going-no-rule", files: mk("all: x y\n\t@echo all\ny:\n\t@echo y\n"), args: "-k"},
	{name: "stop-on-first-error", files: mk("all: a b\na:\n\t@false\nb:\n\t@echo b\n"), args: ""},
	{name: "delete-on-error", files: mk(".DELETE_ON_ERROR:\nout:\n\techo partial > $@; false\n"), args: "", post: "ls"},
	{name: "keep-on-error", files: mk("out:\n\techo partial > $@; false\n"), args: "", post: "ls"},
	{name: "missing-separator", files: mk("all:\n\t@echo\nthis is wrong\n"), args: ""},
	{name: "eight-spaces", files: mk("all:\n        echo spaces\n"), args: ""},
	{name: "recipe-before-target", files: mk("\techo nothing\nall:\n"), args: ""},
	{name: "include-missing", files: mk("include nothere.mk\nall:\n\t@echo all\n"), args: ""},
	{name: "include", files: map[string]string{"Makefile": "include inc.mk\n-include nope.mk\nall:\n\t@echo $(FROM_INC) $(words $(MAKEFILE_LIST))\n", "inc.mk": "FROM_INC = included\n"}, args: ""},
	{name: "include-remade", files: mk("include gen.mk\nall:\n\t@echo $(GEN)\ngen.mk:\n\techo 'GEN = generated' > $@\n"), args: "", post: "cat gen.mk"},
	{name: "command-not-found", files: mk("all:\n\tnosuchcommand-xyz arg\n"), args: ""},
	{name: "exit-status-recipe-shell", files: mk("all:\n\t@sh -c 'exit 7'\n"), args: ""},

	// Options.
	{name: "dry-run", files: mk("all: dep\n\t@echo all\n\ttouch created\ndep:\n\techo dep\n"), args: "-n", post: "ls"},
	{name: "silent-option", files: mk("all:\n\techo shown-once\n"), args: "-s"},
	{name: "always-make", files: map[string]string{"Makefile": "out: in\n\t@echo rebuilding $@\n", "in": "", "out": ""}, pre: old + "in", args: "-B"},
	{name: "question-up-to-date", files: map[string]string{"Makefile": "out: in\n\t@echo rebuilding\n", "in": "", "out": ""}, pre: old + "in", args: "-q"},
	{name: "question-stale", files: map[string]string{"Makefile": "out: in\n\t@echo rebuilding\n", "in": ""}, args: "-q"},
	{name: "file-option", files: map[string]string{"other.mk": "all:\n\t@echo from other $(MAKEFILE_LIST)\n"}, args: "-f other.mk"},
	{name: "directory-option", files: map[string]string{"sub/Makefile": "all:\n\t@echo in sub $(notdir $(CURDIR))\n"}, args: "-C sub"},
	{name: "directory-option-silent", files: map[string]string{"sub/Makefile": "all:\n\t@echo in sub\n"}, args: "-s -C sub"},
	{name: "jobs-chain", files: mk("all: c\n\t@echo all\nc: b\n\t@echo c\nb: a\n\t@echo b\na:\n\t@echo a\n"), args: "-j4"},
	{name: "jobs-files", files: mk("all: a b c d\na b c d:\n\t@echo $@ > $@\n"), args: "-j3", post: "cat a b c d"},
	{name: "jobs-failure", files: mk("all: a\n\t@echo never\na:\n\t@exit 2\n"), args: "-j2"},
	{name: "recursive-make", files: map[string]string{"Makefile": "all:\n\t@$(MAKE) -C sub X=1\n", "sub/Makefile": "all:\n\t@echo sub $(X) $(MAKELEVEL)\n"}, args: ""},
	{name: "recursive-make-silent", files: map[string]string{"Makefile": "all:\n\t$(MAKE) -s -C sub\n", "sub/Makefile": "all:\n\t@echo sub\n"}, args: "--no-print-directory"},
	{name: "recursive-failure", files: map[string]string{"Makefile": "all:\n\t@$(MAKE) -C sub\n", "sub/Makefile": "all:\n\t@false\n"}, args: ""},
	{name: "recursive-dry-run", files: map[string]string{"Makefile": "all:\n\t$(MAKE) -C sub\n", "sub/Makefile": "all:\n\ttouch made\n"}, args: "-n", post: "ls sub"},
	{name: "makeflags-in-makefile", files: mk("MAKEFLAGS += -s\nall:\n\techo quiet-by-makeflags\n"), args: ""},
	{name: "makecmdgoals", files: mk("all a b:\n\t@echo $@ of [$(MAKECMDGOALS)]\n"), args: "a b"},

	// More directives, special targets and options.
	{name: "grouped-targets", files: mk("all: x y\nx y &:\n\t@echo once for $@\n\ttouch x y\n"), args: "", post: "ls"},
	{name: "file-function", files: mk("$(file >out.txt,first)\n$(file >>out.txt,second)\nX := $(file <out.txt)\nall:\n\t@echo $(words $(X)) $(lastword $(X))\n"), args: "", post: "cat out.txt"},
	{name: "print-directory", files: mk("all:\n\t@echo hi\n"), args: "-w"},
	{name: "directory-failure", files: map[string]string{"sub/Makefile": "all:\n\t@false\n"}, args: "-C sub"},
	{name: "directory-missing", files: mk("all:\n"), args: "-C nonexist"},
	{name: "plus-under-dry-run", files: mk("all:\n\t+@echo runs\n\t@echo printed\n"), args: "-n"},
	{name: "ignore-special", files: mk(".IGNORE:\nall:\n\tfalse\n\t@echo after\n"), args: ""},
	{name: "precious-intermediate", files: map[string]string{"Makefile": ".PRECIOUS: %.y\nall: a.z\n%.y: %.x\n\tcp $< $@\n%.z: %.y\n\tcp $< $@\n", "a.x": "x\n"}, args: "", post: "ls"},
	{name: "secondary", files: map[string]string{"Makefile": ".SECONDARY:\nall: a.z\n%.y: %.x\n\t@cp $< $@\n%.z: %.y\n\t@cp $< $@\n", "a.x": "x\n"}, args: "", post: "ls"},
	{name: "sinclude", files: mk("sinclude nope.mk\n-include nope2.mk\nall:\n\t@echo ok\n"), args: ""},
	{name: "include-dir-option", files: map[string]string{"Makefile": "include inc.mk\nall:\n\t@echo $(V)\n", "d/inc.mk": "V = from-d\n"}, args: "-I d"},
	{name: "override-define", files: mk("override define X\nfrom-file\nendef\nall:\n\t@echo $(X)\n"), args: "X=cmd"},
	{name: "export-define", files: mk("export define X\nexported\nendef\nall:\n\t@echo \"[$$X]\"\n"), args: ""},
	{name: "question-phony", files: mk(".PHONY: all\nall:\n\t@echo x\n"), args: "-q"},
	{name: "default-rule", files: mk("all: a b\n\t@echo all\n.DEFAULT:\n\t@echo default for $@\n"), args: ""},
	{name: "multi-target-pattern", files: map[string]string{"Makefile": "all: a.h a.c\n%.h %.c: %.in\n\t@echo making $@ and more from $<\n\ttouch $*.h $*.c\n", "a.in": ""}, args: "", post: "ls"},
	{name: "newer-prereqs", files: map[string]string{"Makefile": "t: a b c\n\t@echo '$$?' = $?\n", "a": "", "b": "", "c": "", "t": ""}, pre: old + "a c t", args: ""},
	{name: "suffixes-cleared", files: map[string]string{"Makefile": ".SUFFIXES:\n.SUFFIXES: .in .out\n.in.out:\n\t@echo suffix $< $@ $*\n", "x.in": ""}, args: "x.out"},
	{name: "dollar-escapes", files: mk("all: a$$b\n\t@echo '$^' $$HOME_NOT_SET '$$$$'\na$$b:\n\t@echo made 'a$$b'\n"), args: ""},
	{name: "shell-stderr", files: mk("X := $(shell echo out; echo err >&2)\nall:\n\t@echo [$(X)]\n"), args: ""},
	{name: "direct-exec-quotes", files: mk("all:\n\techo 'a  b'   c\n\techo plain   words\n\tprintf '%s\\n' x\n"), args: ""},
	{name: "multiple-goals-keep-going", files: mk("a:\n\t@false\nb:\n\t@echo b\n"), args: "-k a b"},
	{name: "empty-makefile", files: mk("# nothing\n"), args: ""},
	{name: "nested-paren-ifeq", files: mk("X = a b\nifeq ($(filter a,$(X)),a)\nR = yes\nendif\nall:\n\t@echo $(R)\n"), args: ""},
	{name: "warning-in-recipe", files: mk("all:\n\t@echo one\n\t$(warning in recipe)@echo two\n"), args: ""},
	{name: "error-in-recipe", files: mk("all: dep\n\t@echo all\ndep:\n\t@echo dep $(error boom)\n"), args: ""},
	{name: "target-export", files: mk("all: export TV = tv\nall:\n\t@echo \"[$$TV]\"\n"), args: ""},
	{name: "unexport-all", files: mk("export A = a\nunexport\nall:\n\t@echo \"[$$A]\"\n"), args: ""},
	{name: "define-recipe-prefixes", files: mk("define STEPS\n-@false\n@echo after-ignored\nendef\nall:\n\t$(STEPS)\n"), args: ""},
	{name: "oneshell-failure", files: mk(".ONESHELL:\nall:\n\t@false\n\techo last\n"), args: ""},
	{name: "oneshell-error", files: mk(".ONESHELL:\nall:\n\t@echo a\n\texit 4\n"), args: ""},
	{name: "shellflags", files: mk(".SHELLFLAGS = -ec\nall:\n\t@false; echo not-reached\n"), args: ""},
	{name: "jobs-keep-going", files: mk("all: a b c\n\t@echo all\na:\n\t@exit 1\nb:\n\t@echo b > b.txt\nc:\n\t@echo c > c.txt\n"), args: "-k -j2", post: "cat b.txt c.txt"},
	{name: "silent-with-error", files: mk("all:\n\techo visible? ; exit 5\n"), args: "-s"},
	{name: "terminal-match-anything", files: map[string]string{"Makefile": "%:: %.src\n\t@echo from $< to $@\n", "x.src": ""}, args: "x"},
	{name: "double-colon-times", files: map[string]string{"Makefile": "t:: a\n\t@echo rule-a\nt:: b\n\t@echo rule-b\n", "a": "", "b": "", "t": ""}, pre: old + "a t && touch b", args: ""},
	{name: "recursive-jobs", files: map[string]string{"Makefile": "all:\n\t@$(MAKE) -C sub\n", "sub/Makefile": "all: a b\na b:\n\t@echo $@ > $@\n"}, args: "-j2", post: "cat sub/a sub/b"},
	{name: "recursive-keep-going", files: map[string]string{"Makefile": "all: s1 s2\ns1:\n\t@$(MAKE) -C sub1\ns2:\n\t@$(MAKE) -C sub2\n", "sub1/Makefile": "all:\n\t@exit 1\n", "sub2/Makefile": "all:\n\t@echo two\n"}, args: "-k"},
	{name: "cmdline-var-recursive", files: map[string]string{"Makefile": "X = file\nall:\n\t@$(MAKE) -s -C sub\n", "sub/Makefile": "all:\n\t@echo sub X=$(X) $(origin X)\n"}, args: "X=cmd"},
	{name: "makelevel-env", files: map[string]string{"Makefile": "all:\n\t@echo level $$MAKELEVEL $(MAKELEVEL)\n"}, args: ""},
	{name: "variable-name-expansion", files: mk("n = X\n$(n)_v = computed\nall:\n\t@echo $(X_v) $($(n)_v)\n"), args: ""},
	{name: "whitespace-value", files: mk("X = a   b  \nY := $(X)|\nE :=\nS := $(E) $(E)\nall:\n\t@echo '[$(Y)]' '[$(S)]'\n"), args: ""},
	{name: "conditional-assign-env", files: mk("FROMENV ?= makefile\nNOTENV ?= makefile\nall:\n\t@echo $(FROMENV) $(NOTENV)\n"), pre: "export FROMENV=env", args: ""},
	{name: "append-cmdline", files: mk("X += file\nall:\n\t@echo [$(X)]\n"), args: "X=cmd"},
	{name: "override-append", files: mk("override X += file\nall:\n\t@echo [$(X)]\n"), args: "X=cmd"},
	{name: "call-nested", files: mk("rev = $(if $(1),$(call rev,$(wordlist 2,$(words $(1)),$(1))) $(firstword $(1)))\nall:\n\t@echo $(strip $(call rev,a b c d))\n"), args: ""},
	{name: "eval-assign", files: mk("$(eval X := 1)\n$(foreach v,A B,$(eval $(v) = val-$(v)))\nall:\n\t@echo $(X) $(A) $(B)\n"), args: ""},
	{name: "patsubst-escaped", files: mk("all:\n\t@echo '$(patsubst a\\%%,x%,a%b a%c d)' '$(filter \\%x,%x y)'\n"), args: ""},
	{name: "sort-dups", files: mk("all:\n\t@echo $(sort c b a b c aa)\n"), args: ""},
	{name: "wordlist-errors", files: mk("all:\n\t@echo $(wordlist 0,2,a b)\n"), args: ""},
	{name: "insufficient-args", files: mk("all:\n\t@echo $(word 1)\n"), args: ""},
	{name: "unterminated-ref", files: mk("X = $(foo\nall:\n\t@echo $(X)\n"), args: ""},
	{name: "mixed-rules", files: mk("a %.o:\n\t@echo x\n"), args: ""},
	{name: "both-colon-kinds", files: mk("a:\n\t@echo 1\na::\n\t@echo 2\n"), args: ""},
	{name: "vars-in-rule-line", files: mk("T = one two\nD = dep\n$(T): $(D)\n\t@echo $@ needs $<\n$(D):\n\t@echo $@\n"), args: "two"},
	{name: "colon-in-var-target", files: mk("R = x: y\n$(R)\n\t@echo $@ from $<\ny:\n\t@echo y\n"), args: "x"},
	{name: "static-pattern-mismatch", files: mk("all: a.o b.x\na.o b.x: %.o: %.c\n\t@echo $@\n"), args: ""},
	{name: "long-options", files: map[string]string{"sub/build.mk": "all:\n\t@echo long $(MAKEFLAGS)\n"}, args: "--directory=sub --file=build.mk --jobs=1 --silent --keep-going"},
	{name: "eval-option", files: mk("all:\n\t@echo $(X)\n"), args: "--eval 'X = from-eval' -E '$(info evaluated)'"},
	{name: "no-silent", files: mk("all:\n\techo loud\n"), args: "-s --no-silent"},
	{name: "include-stale-remade", files: map[string]string{"Makefile": "include gen.mk\nall:\n\t@echo [$(GEN)] $(MAKE_RESTARTS)\ngen.mk: src\n\techo 'GEN = v2' > $@\n", "gen.mk": "GEN = v1\n", "src": ""}, pre: old + "gen.mk", args: "", post: "make"},
	{name: "include-remake-fails", files: mk("include gen.mk\nall:\n\t@echo [$(GEN)]\ngen.mk:\n\t@exit 1\n"), args: ""},
	{name: "optional-include-remake-fails", files: mk("-include gen.mk\nall:\n\t@echo [$(GEN)]\ngen.mk:\n\t@exit 1\n"), args: ""},
	{name: "include-remade-under-dry-run", files: mk("include gen.mk\nall:\n\t@echo [$(GEN)]\ngen.mk:\n\techo 'GEN = x' > $@\n"), args: "-n", post: "cat gen.mk"},
	{name: "include-from-pattern", files: map[string]string{"Makefile": "-include conf.mk\nall:\n\t@echo [$(CONF)]\n%.mk: %.in\n\tsed 's/^/CONF = /' $< > $@\n", "conf.in": "configured\n"}, args: ""},
	{name: "env-redefined-stays-exported", files: mk("FOO = file\nBAR += more\nundefine BAZ\nall:\n\t@echo \"[$$FOO] [$$BAR] [$$BAZ] [$$QUX]\"\n"), pre: "export FOO=env BAR=env BAZ=env QUX=q", args: ""},
	{name: "shell-function-environment", files: mk("export E = e\nX := $(shell echo \"[$$E]\")\nall: a\n\t@echo $(X) $(shell echo \"[$$E] [$$MAKELEVEL]\")\na:\n\t@echo a\n"), args: ""},
	// GNU's option list is not copied: only the first two lines count.
	{name: "bad-option", files: mk("all:\n"), args: "--definitely-not", stderrLines: 2},
}
