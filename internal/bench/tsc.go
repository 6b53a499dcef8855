package bench

import (
	"context"

	"github.com/secexec/secexec"
)

// tscProject is the small TypeScript project the tsc row checks: two
// modules, an interface, generics and node's fs types, no errors.
const tscProject = "/tmp/bench-tsc"

var tscFiles = map[string]string{
	"tsconfig.json": `{"compilerOptions": {"strict": true, "noEmit": true, "target": "es2022", "module": "nodenext", "types": []}, "include": ["src"]}`,
	"src/shapes.ts": `export interface Shape { kind: "circle" | "square"; size: number }
export function area(s: Shape): number {
  return s.kind === "circle" ? Math.PI * s.size ** 2 : s.size ** 2;
}
export function largest<T extends Shape>(xs: readonly T[]): T | undefined {
  return xs.reduce<T | undefined>((best, x) => (best === undefined || area(x) > area(best) ? x : best), undefined);
}
`,
	"src/main.ts": `import { area, largest, type Shape } from "./shapes.js";
const shapes: Shape[] = [{ kind: "circle", size: 1 }, { kind: "square", size: 2 }];
const big = largest(shapes);
console.log(big ? area(big).toFixed(2) : "none");
`,
}

// writeTSProject writes the tsc row's project into the VM.
func writeTSProject(ctx context.Context, vm *secexec.VM) error {
	if err := vm.FS().MkdirAll(ctx, tscProject+"/src", 0o755); err != nil {
		return err
	}
	for name, src := range tscFiles {
		if err := vm.FS().WriteFile(ctx, tscProject+"/"+name, []byte(src), 0o644); err != nil {
			return err
		}
	}
	return nil
}
