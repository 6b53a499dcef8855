// Command hello prints data the linker puts in many data segments, so
// the merge test can check that a merged module still runs the same.
package main

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"unicode"
)

var table = map[string]int{"alpha": 1, "beta": 2, "gamma": 3, "delta": 4}

func main() {
	keys := make([]string, 0, len(table))
	for k := range table {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Println(strings.Join(keys, ","), unicode.IsUpper('É'), len(os.Args))
}
