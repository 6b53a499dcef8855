package js

import (
	"strings"
	"testing"
)

// util.getCallSite is getCallSites under its name before Node 22.12: the
// same frames behind one of its own ('deprecated', as in node), and a
// single ExperimentalWarning however often it is called.
func TestUtilGetCallSiteIsTheRenamedGetCallSites(t *testing.T) {
	v := newVM(t, nil)
	r := v.node(`
const util = require('util');
function where() { return util.getCallSite(); }
const a = where();
where();
console.log(util.getCallSite.name, a[0].functionName, a[1].functionName, typeof a[1].lineNumber);
`)
	if r.code != 0 || r.stdout != "deprecated deprecated where number\n" {
		t.Fatalf("code %d, stdout %q, stderr %q", r.code, r.stdout, trunc(r.stderr))
	}
	const warning = "ExperimentalWarning: The `util.getCallSite` API has been renamed to `util.getCallSites()`."
	if n := strings.Count(r.stderr, warning); n != 1 {
		t.Fatalf("%d warnings in stderr %q, want 1", n, r.stderr)
	}
}
