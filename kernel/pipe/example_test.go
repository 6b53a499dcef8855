package pipe_test

import (
	"context"
	"fmt"

	"github.com/secexec/secexec/kernel/pipe"
)

// A VM shares one budget among its pipes; the writer can finish a large
// output before anyone reads, as a shell's command substitution needs.
func ExampleNewPair() {
	ctx := context.Background()
	budget := pipe.NewBudget(pipe.DefaultBudget)
	r, w := pipe.NewPair(pipe.Options{Budget: budget})

	out := make([]byte, 200<<10) // larger than a Linux pipe's 64 KiB
	n, err := w.Write(ctx, out)
	fmt.Println(n, err, budget.Used())
	w.Close()

	buf := make([]byte, 64<<10)
	total := 0
	for {
		n, err := r.Read(ctx, buf)
		if n == 0 || err != nil {
			break // end of file
		}
		total += n
	}
	r.Close()
	fmt.Println(total, budget.Used())
	// Output:
	// 204800 <nil> 139264
	// 204800 0
}
