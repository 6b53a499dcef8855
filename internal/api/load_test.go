package api_test

import (
	"context"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/api"
	"github.com/secexec/secexec/internal/api/loadtest"
)

// TestLoadNoLostOutputs: concurrent clients creating VMs and running
// execs get every output back, with no errors. Not a timing test: the
// figures are printed, not asserted.
func TestLoadNoLostOutputs(t *testing.T) {
	s := newServer(t, api.Config{MaxVMs: 4, MaxConcurrent: 4})
	rep, err := loadtest.Run(context.Background(), loadtest.Options{URL: s.url, Token: alice, Clients: 4, Duration: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(rep)
	if rep.Errors != 0 || rep.Lost != 0 || rep.Execs < rep.Clients || rep.VMs != 4 {
		t.Fatalf("%v", rep)
	}
	var list struct{ VMs []any }
	s.do(alice, "GET", "/v1/vms", nil).json(t, &list)
	if len(list.VMs) != 0 {
		t.Fatalf("%d VMs left behind", len(list.VMs))
	}
	if _, err := loadtest.Run(context.Background(), loadtest.Options{}); err == nil {
		t.Fatal("options without a URL were accepted")
	}
}
