// Command hello is a user's own wasm32-wasi program: it exercises args,
// environment, the working directory, files, directories, stdin, a timer
// and the exit status through an ordinary Go toolchain build.
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"syscall"
	"time"
)

func main() {
	fmt.Printf("args=%q\n", os.Args[1:])
	wd, err := os.Getwd()
	fmt.Printf("wd=%s %v\n", wd, err)
	if err := os.WriteFile("hello.out", []byte("written"), 0o644); err != nil {
		fmt.Println("write:", err)
	}
	b, err := os.ReadFile("hello.out")
	fmt.Printf("read=%s %v\n", b, err)
	// A hard link made by a correct libc (no workaround involved).
	_ = os.Remove("hello.link")
	err = os.Link("hello.out", "hello.link")
	var nlink uint64
	if st, serr := os.Stat("hello.out"); serr == nil {
		nlink = st.Sys().(*syscall.Stat_t).Nlink
	}
	fmt.Printf("link=%v %d\n", err, nlink)
	ents, err := os.ReadDir(".")
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	fmt.Printf("dir=%v %v\n", names, err)
	in, err := io.ReadAll(os.Stdin)
	fmt.Printf("stdin=%q %v\n", in, err)
	start := time.Now()
	time.Sleep(20 * time.Millisecond)
	fmt.Printf("slept=%v\n", time.Since(start) >= 20*time.Millisecond)
	if _, err := os.Stat("/etc/passwd"); err != nil {
		fmt.Println("stat:", err)
	}
	os.Exit(3)
}
