package bootjs

import (
	"context"
	"strings"
	"testing"
)

func TestBuild(t *testing.T) {
	b, err := Build(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Source) < 10000 || !strings.Contains(b.Source, "__secexec_start") {
		t.Fatalf("bundle of %d bytes", len(b.Source))
	}
	b2, err := Build(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if b2.Digest != b.Digest || b2.Source != b.Source {
		t.Fatal("cached bundle differs")
	}
}
