package aospkg_test

import (
	"fmt"
	"log"

	"github.com/secexec/secexec/software/aospkg"
)

// List a container's commands and read one module.
func ExampleOpenFile() {
	p, err := aospkg.OpenFile("package.aospkg")
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()
	for _, c := range p.Commands() {
		e, _ := p.Lookup(c.Entry)
		fmt.Printf("%s -> /%s (%d bytes, mode %o)\n", c.Command, c.Entry, e.Size, e.Mode)
	}
	wasm, err := p.ReadFile(p.Commands()[0].Entry)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%q\n", wasm[:4])
}
