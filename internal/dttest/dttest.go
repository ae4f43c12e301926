// Package dttest gives tests device trees as a board has them: the kernel-built DTBs of
// make kernels, and a tree laid out as the kernel shows the live one.
package dttest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/u-root/u-root/pkg/dt"
)

// KernelDTB returns a board's DTB ("zc702" or "zcu102") from the kernel builds of make
// kernels (scripts/build-kernel-zc702, scripts/fetch-kernel-zcu102), cached under
// $LINERATE_CACHE or /var/cache/linerate. Without it the test skips (fails in CI, where
// make test builds the kernels first).
func KernelDTB(t testing.TB, board string) []byte {
	t.Helper()
	cache := os.Getenv("LINERATE_CACHE")
	if cache == "" {
		cache = "/var/cache/linerate"
	}
	pattern := map[string]string{"zc702": "kernel-zc702-*/zynq-zc702.dtb", "zcu102": "kernel-zcu102/zcu102.dtb"}[board]
	m, _ := filepath.Glob(filepath.Join(cache, pattern))
	if len(m) == 0 {
		if os.Getenv("CI") != "" {
			t.Fatalf("no %s DTB under %s: make test builds the kernels first (make kernels)", board, cache)
		}
		t.Skipf("no %s DTB under %s: run make kernels", board, cache)
	}
	b, err := os.ReadFile(m[0])
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// WriteLive lays n out under dir as the kernel shows the live tree (/proc/device-tree,
// /sys/firmware/devicetree/base): a directory per node, a file per property, and the
// "name" file the kernel adds.
func WriteLive(t testing.TB, dir string, n *dt.Node) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	base, _, _ := strings.Cut(n.Name, "@")
	write := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o444); err != nil {
			t.Fatal(err)
		}
	}
	write("name", append([]byte(base), 0))
	for _, p := range n.Properties {
		write(p.Name, p.Value)
	}
	for _, c := range n.Children {
		WriteLive(t, filepath.Join(dir, c.Name), c)
	}
}
