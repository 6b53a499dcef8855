package main

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// maxNoIndexFiles bounds the files one diff --no-index compares.
const maxNoIndexFiles = 1 << 16

// diffNoIndex is git diff --no-index A B: two files or two directories
// of the filesystem, compared as git does outside a repository (exit 1
// when they differ).
func diffNoIndex(e *env, f diffFormat, quiet bool, paths []string) error {
	if len(paths) != 2 {
		return usagef("%s", strings.TrimSuffix(usageTexts["diff --no-index"], "\n"))
	}
	a, b := paths[0], paths[1]
	for _, p := range paths {
		if p == "/dev/null" || p == "-" {
			continue
		}
		if _, err := os.Lstat(p); err != nil {
			return noIndexAccessError(p)
		}
	}
	ia, ib := isDir(a), isDir(b)
	switch {
	case ia && !ib && b != "/dev/null":
		return noIndexAccessError(path.Join(a, path.Base(b)))
	case ib && !ia && a != "/dev/null":
		b = path.Join(b, path.Base(a))
		if _, err := os.Lstat(b); err != nil {
			return noIndexAccessError(b)
		}
	}
	var changes []fileChange
	var names [][2]string // the a and b names of each change, "" for a missing side
	add := func(pa, pb string) error {
		ea, oka, err := fsEntry(pa)
		if err != nil {
			return err
		}
		eb, okb, err := fsEntry(pb)
		if err != nil {
			return err
		}
		switch {
		case !oka && !okb:
			return nil
		case oka && okb && ea.hash == eb.hash && ea.mode == eb.mode:
			return nil
		}
		c := fileChange{}
		na, nb := "", ""
		if oka {
			c.from, na = &ea, pa
		}
		if okb {
			c.to, nb = &eb, pb
		}
		switch {
		case !oka:
			c.path = pb
		case !okb:
			c.path = pa
		default:
			c.path, c.aPath = pb, pa
		}
		changes = append(changes, c)
		names = append(names, [2]string{na, nb})
		return nil
	}
	if ia && ib {
		rels := map[string]bool{}
		for _, root := range []string{a, b} {
			err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return nil
				}
				if len(rels) > maxNoIndexFiles {
					return fatalf("too many files to compare")
				}
				r, _ := filepath.Rel(root, p)
				rels[filepath.ToSlash(r)] = true
				return nil
			})
			if err != nil {
				return err
			}
		}
		for _, r := range slices.Sorted(mapKeys(rels)) {
			if err := add(path.Join(a, r), path.Join(b, r)); err != nil {
				return err
			}
		}
	} else if err := add(a, b); err != nil {
		return err
	}
	if len(changes) == 0 {
		return nil
	}
	if !quiet {
		if err := writeNoIndex(e, f, changes, names); err != nil {
			return err
		}
	}
	return &exitError{code: 1}
}

func noIndexAccessError(p string) error {
	return &exitError{code: 1, msg: fmt.Sprintf("error: Could not access '%s'", p)}
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// fsEntry reads a file as git would store it; /dev/null is no file.
func fsEntry(p string) (entry, bool, error) {
	if p == "/dev/null" {
		return entry{}, false, nil
	}
	return readEntry(p, p)
}

// writeNoIndex writes the formats for diff --no-index, whose names are
// the two sides' paths ("/dev/null" for a missing side in the stat and
// the name list, as git prints them).
func writeNoIndex(e *env, f diffFormat, changes []fileChange, names [][2]string) error {
	w := e.stdout
	orNull := func(s string) string {
		if s == "" {
			return "/dev/null"
		}
		return s
	}
	statName := func(i int) string {
		na, nb := orNull(names[i][0]), orNull(names[i][1])
		if na == nb {
			return quotePath(na)
		}
		return renameName(na, nb)
	}
	if f.nameOnly {
		for i := range changes {
			fmt.Fprintln(w, quotePath(orNull(names[i][1])))
		}
	}
	if f.nameStatus {
		for i, c := range changes {
			code, name := "M", names[i][0]
			switch {
			case c.from == nil:
				code, name = "A", names[i][1]
			case c.to == nil:
				code = "D"
			}
			fmt.Fprintf(w, "%s\t%s\n", code, quotePath(name))
		}
	}
	var stats []fileStat
	if f.stat || f.shortstat || f.numstat {
		for i, c := range changes {
			s, err := statOf(fileChange{path: c.path, from: c.from, to: c.to})
			if err != nil {
				return err
			}
			s.path = statName(i)
			stats = append(stats, s)
		}
	}
	if f.numstat {
		for _, s := range stats {
			if s.binary {
				fmt.Fprintf(w, "-\t-\t%s\n", s.path)
			} else {
				fmt.Fprintf(w, "%d\t%d\t%s\n", s.added, s.del, s.path)
			}
		}
	}
	if f.stat {
		writeStat(w, stats)
	} else if f.shortstat {
		writeStatSummary(w, stats)
	}
	if f.patch {
		if f.stat || f.shortstat || f.numstat {
			fmt.Fprintln(w)
		}
		for _, c := range changes {
			if err := writePatch(w, c); err != nil {
				return err
			}
		}
	}
	return nil
}
