package main

import (
	"context"
	"io"
	"path/filepath"
	"testing"
)

// BenchmarkShowJSONCaptured: show --json of the Zynq GEM fixture, no kernel involved.
func BenchmarkShowJSONCaptured(b *testing.B) {
	root := filepath.Join(showFixtures, "zynq7000-gem")
	args := []string{"show", "--json", "--root", root, "eth0"}
	b.ReportAllocs()
	for b.Loop() {
		if err := run(context.Background(), args, nil, io.Discard, io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
