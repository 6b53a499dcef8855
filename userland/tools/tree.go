package main

import (
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

type treeOptions struct {
	all, dirsOnly, noReport, classify bool
	maxDepth                          int // 0: unlimited
	ignore                            []string
}

// treeCounts are the totals of the report line.
type treeCounts struct{ dirs, files int }

// runTree is tree 2.1's default listing with -a, -d, -L, -I, -F and
// --noreport: names sorted bytewise (the C.UTF-8 collation), symbolic
// links shown with their targets and not followed, and its report line
// (which counts a non-empty top directory as one of the directories).
func runTree(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	opts, roots, err := getopt(args[1:], "adFL:I:", []string{"noreport", "dirsfirst"})
	if err != nil {
		fmt.Fprintf(stderr, "tree: %s\n", err)
		return 2
	}
	var o treeOptions
	for _, op := range opts {
		switch op.name {
		case "a":
			o.all = true
		case "d":
			o.dirsOnly = true
		case "F":
			o.classify = true
		case "noreport":
			o.noReport = true
		case "L":
			n, err := strconv.Atoi(op.arg)
			if err != nil || n < 1 {
				fmt.Fprintln(stderr, "tree: Invalid level, must be greater than 0.")
				return 1
			}
			o.maxDepth = n
		case "I":
			o.ignore = append(o.ignore, strings.Split(op.arg, "|")...)
		}
	}
	if len(roots) == 0 {
		roots = []string{"."}
	}
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	var total treeCounts
	status := 0
	for _, root := range roots {
		fi, err := os.Stat(root)
		if err != nil || !fi.IsDir() {
			fmt.Fprintf(w, "%s  [error opening dir]\n", root)
			status = 2
			continue
		}
		name := root
		if o.classify && !strings.HasSuffix(name, "/") {
			name += "/"
		}
		fmt.Fprintln(w, name)
		var c treeCounts
		listTree(w, root, "", 1, o, &c)
		if c.dirs+c.files > 0 {
			c.dirs++
		}
		total.dirs += c.dirs
		total.files += c.files
	}
	if !o.noReport {
		d, f := "directories", "files"
		if total.dirs == 1 {
			d = "directory"
		}
		if total.files == 1 {
			f = "file"
		}
		if o.dirsOnly {
			fmt.Fprintf(w, "\n%d %s\n", total.dirs, d)
		} else {
			fmt.Fprintf(w, "\n%d %s, %d %s\n", total.dirs, d, total.files, f)
		}
	}
	return status
}

func treeIgnored(name string, patterns []string) bool {
	for _, p := range patterns {
		if m, _ := path.Match(p, name); m {
			return true
		}
	}
	return false
}

// treeEntry is one listed name with what tree shows for it.
type treeEntry struct {
	name   string
	isDir  bool // a directory, or a symbolic link to one
	link   string
	isLink bool
	mode   fs.FileMode
}

func listTree(w *bufio.Writer, dir, prefix string, depth int, o treeOptions, c *treeCounts) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	var entries []treeEntry
	for _, de := range des {
		name := de.Name()
		if !o.all && strings.HasPrefix(name, ".") {
			continue
		}
		if treeIgnored(name, o.ignore) {
			continue
		}
		e := treeEntry{name: name, mode: de.Type()}
		full := filepath.Join(dir, name)
		if de.Type()&fs.ModeSymlink != 0 {
			e.isLink = true
			e.link, _ = os.Readlink(full)
			if fi, err := os.Stat(full); err == nil {
				e.isDir = fi.IsDir()
				e.mode = fi.Mode()
			} else {
				e.mode = 0
			}
		} else {
			e.isDir = de.IsDir()
			if fi, err := de.Info(); err == nil {
				e.mode = fi.Mode()
			}
		}
		if e.mode.IsRegular() {
			// The permission bits, which WASI's stat leaves out.
			if perm, ok := permOf(full, true); ok {
				e.mode = e.mode.Type() | perm
			}
		}
		if o.dirsOnly && !e.isDir {
			continue
		}
		entries = append(entries, e)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].name < entries[j].name })
	for i, e := range entries {
		// tree draws the vertical line with no-break spaces after it.
		branch, more := "├── ", "│\u00a0\u00a0 "
		if i == len(entries)-1 {
			branch, more = "└── ", "    "
		}
		line := prefix + branch + e.name
		if e.isLink {
			target := e.link
			if o.classify {
				target += classifySuffix(e.mode, e.isDir)
			}
			line += " -> " + target
		} else if o.classify {
			line += classifySuffix(e.mode, e.isDir)
		}
		w.WriteString(line + "\n")
		if e.isDir {
			c.dirs++
			if !e.isLink && (o.maxDepth == 0 || depth < o.maxDepth) {
				listTree(w, filepath.Join(dir, e.name), prefix+more, depth+1, o, c)
			}
		} else {
			c.files++
		}
	}
}

// classifySuffix is -F's mark: / directory, * executable, | FIFO,
// = socket.
func classifySuffix(mode fs.FileMode, isDir bool) string {
	switch {
	case isDir:
		return "/"
	case mode&fs.ModeNamedPipe != 0:
		return "|"
	case mode&fs.ModeSocket != 0:
		return "="
	case mode.IsRegular() && mode&0o111 != 0:
		return "*"
	}
	return ""
}
