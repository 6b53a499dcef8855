package shell

import (
	"os"
	"strings"
)

func (s *Shell) noJobControl(args []string) int {
	s.berr(args[0], "no job control")
	return 1
}

func (s *Shell) disown(args []string) int {
	specs := args[1:]
	if len(specs) == 0 {
		specs = []string{"%+"}
	}
	for _, a := range specs {
		if strings.HasPrefix(a, "-") {
			continue
		}
		j := s.sh.findJob(a)
		if j == nil {
			s.berr("disown", "%s: no such job", a)
			return 1
		}
		s.sh.mu.Lock()
		for i, x := range s.sh.jobs {
			if x == j {
				s.sh.jobs = append(s.sh.jobs[:i], s.sh.jobs[i+1:]...)
				break
			}
		}
		s.sh.mu.Unlock()
	}
	return 0
}

// tildeDir abbreviates the home directory as ~, as dirs prints.
func (s *Shell) tildeDir(d string) string {
	home := s.env.str("HOME")
	if home != "" && home != "/" && (d == home || strings.HasPrefix(d, home+"/")) {
		return "~" + d[len(home):]
	}
	return d
}

func (s *Shell) printDirs() {
	l := []string{s.tildeDir(s.dir)}
	for i := len(s.dirStack) - 1; i >= 0; i-- {
		l = append(l, s.tildeDir(s.dirStack[i]))
	}
	s.out(1, strings.Join(l, " ")+"\n")
}

func (s *Shell) dirs(args []string) int {
	if len(args) > 1 && args[1] == "-c" {
		s.dirStack = nil
		return 0
	}
	s.printDirs()
	return 0
}

func (s *Shell) pushd(args []string) int {
	if len(args) < 2 {
		if len(s.dirStack) == 0 {
			s.berr("pushd", "no other directory")
			return 1
		}
		top := s.dirStack[len(s.dirStack)-1]
		cur := s.dir
		if st := s.cd([]string{"cd", top}); st != 0 {
			return st
		}
		s.dirStack[len(s.dirStack)-1] = cur
		s.printDirs()
		return 0
	}
	cur := s.dir
	target := args[1]
	if fi, err := os.Stat(s.abs(target)); err != nil || !fi.IsDir() {
		msg := "No such file or directory"
		if err == nil {
			msg = "Not a directory"
		}
		s.berr("pushd", "%s: %s", target, msg)
		return 1
	}
	if st := s.cd([]string{"cd", target}); st != 0 {
		return st
	}
	s.dirStack = append(s.dirStack, cur)
	s.printDirs()
	return 0
}

func (s *Shell) popd(args []string) int {
	if len(s.dirStack) == 0 {
		s.berr("popd", "directory stack empty")
		return 1
	}
	top := s.dirStack[len(s.dirStack)-1]
	if st := s.cd([]string{"cd", top}); st != 0 {
		return st
	}
	s.dirStack = s.dirStack[:len(s.dirStack)-1]
	s.printDirs()
	return 0
}

// match is a pattern match honouring shopt nocasematch.
func (s *Shell) match(pat, str string) bool {
	if s.shopt["nocasematch"] {
		return matchPattern(strings.ToLower(pat), strings.ToLower(str))
	}
	return matchPattern(pat, str)
}
