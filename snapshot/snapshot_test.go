package snapshot

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zynqnet/linerate/nic"
)

// record reads a fixture tree through a recorder, as linerate snapshot reads a board.
func record(t testing.TB, root string) (*nic.Sample, Sample) {
	t.Helper()
	k, err := nic.OpenCaptured(root)
	if err != nil {
		t.Fatal(err)
	}
	rk := nic.NewRecordingKernel(k)
	r := &nic.Reader{Root: root, Kernel: rk, Recorder: nic.NewRecorder()}
	s, err := r.Sample()
	if err != nil {
		t.Fatal(err)
	}
	return s, Sample{Entries: r.Recorder.Entries(), Kernel: rk.Captured()}
}

func archive(t testing.TB, root string) ([]byte, *nic.Sample) {
	t.Helper()
	s, rec := record(t, root)
	var buf bytes.Buffer
	m := &Manifest{Version: "test", Created: time.Unix(1700000000, 0).UTC(), IntervalNS: int64(2 * time.Second), Interfaces: []string{"eth0"}}
	if err := Write(&buf, m, []Sample{rec, rec}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), s
}

// TestRoundTrip: what a recorder saw, archived and extracted, reads back identically.
func TestRoundTrip(t *testing.T) {
	for _, fx := range []string{"zynq7000-gem", "pcie-igb"} {
		t.Run(fx, func(t *testing.T) {
			data, want := archive(t, filepath.Join("../testdata/show", fx))
			dir := t.TempDir()
			m, err := Extract(bytes.NewReader(data), dir)
			if err != nil {
				t.Fatal(err)
			}
			if m.Interval() != 2*time.Second || len(m.Samples) != 2 || m.Format != Format {
				t.Errorf("manifest = %+v", m)
			}
			for _, s := range m.Samples {
				root := filepath.Join(dir, s)
				k, err := nic.OpenCaptured(root)
				if err != nil {
					t.Fatal(err)
				}
				got, err := (&nic.Reader{Root: root, Kernel: k}).Sample()
				if err != nil {
					t.Fatal(err)
				}
				// Only the ethtool_api label differs: "captured (captured (netlink))".
				for i := range got.Interfaces {
					got.Interfaces[i].EthtoolAPI = want.Interfaces[i].EthtoolAPI
				}
				gj, _ := json.Marshal(got)
				wj, _ := json.Marshal(want)
				if string(gj) != string(wj) {
					t.Errorf("%s reads back differently:\n got %s\nwant %s", s, gj, wj)
				}
			}
		})
	}
}

// build makes an archive from raw entries, for hostile cases.
func build(t testing.TB, manifest string, entries ...tar.Header) []byte {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	if manifest != "" {
		tw.WriteHeader(&tar.Header{Name: "manifest.json", Mode: 0o644, Size: int64(len(manifest)), Typeflag: tar.TypeReg})
		tw.Write([]byte(manifest))
	}
	for _, h := range entries {
		h := h
		tw.WriteHeader(&h)
		if h.Size > 0 {
			tw.Write(make([]byte, h.Size))
		}
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

const goodManifest = `{"format":1,"samples":["sample0","sample1"],"interfaces":["eth0"]}`

func TestExtractRejects(t *testing.T) {
	valid, _ := archive(t, "../testdata/show/zynq7000-gem")
	for name, tc := range map[string]struct {
		data []byte
		want string
	}{
		"garbage":         {[]byte("not an archive at all"), "not a gzip'd snapshot"},
		"truncated":       {valid[:len(valid)/2], "truncated or corrupt"},
		"newer format":    {build(t, `{"format":2,"samples":["sample0","sample1"]}`), "newer than this linerate reads"},
		"no manifest":     {build(t, "", tar.Header{Name: "sample0/x", Size: 1, Typeflag: tar.TypeReg, Mode: 0o644}), "manifest.json must come first"},
		"escape by path":  {build(t, goodManifest, tar.Header{Name: "../evil", Size: 1, Typeflag: tar.TypeReg, Mode: 0o644}), "not a local path"},
		"escape by link":  {build(t, goodManifest, tar.Header{Name: "sample0/l", Linkname: "../../etc", Typeflag: tar.TypeSymlink}), "leads outside its sample"},
		"absolute link":   {build(t, goodManifest, tar.Header{Name: "sample0/l", Linkname: "/etc/passwd", Typeflag: tar.TypeSymlink}), "leads outside its sample"},
		"other sample":    {build(t, goodManifest, tar.Header{Name: "sample7/x", Size: 1, Typeflag: tar.TypeReg, Mode: 0o644}), "outside the samples"},
		"device node":     {build(t, goodManifest, tar.Header{Name: "sample0/dev", Typeflag: tar.TypeChar}), "not a file, directory or symlink"},
		"huge file":       {build(t, goodManifest, tar.Header{Name: "sample0/big", Size: MaxFileBytes + 1, Typeflag: tar.TypeReg, Mode: 0o644}), "beyond"},
		"no kernel.json":  {build(t, goodManifest, tar.Header{Name: "sample0/", Typeflag: tar.TypeDir, Mode: 0o755}), "has no linerate/kernel.json"},
		"three samples":   {build(t, `{"format":1,"samples":["a","b","c"]}`), "want 2"},
		"bad sample name": {build(t, `{"format":1,"samples":["..","b"]}`), "bad sample name"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Extract(bytes.NewReader(tc.data), t.TempDir())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one saying %q", err, tc.want)
			}
		})
	}
}

func FuzzExtract(f *testing.F) {
	valid, _ := archive(f, "../testdata/show/zynq7000-gem")
	f.Add(valid)
	f.Add(build(f, goodManifest, tar.Header{Name: "sample0/l", Linkname: "../x", Typeflag: tar.TypeSymlink}))
	f.Add([]byte{0x1f, 0x8b})
	f.Fuzz(func(t *testing.T, b []byte) {
		extractConfined(t, b)
	})
}

// extractConfined extracts b into a directory beside an empty "outside" one and checks
// the property that holds for any input: nothing exists outside the directory after it,
// accepted or not; what was accepted reads back without a panic.
func extractConfined(t *testing.T, b []byte) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "extract")
	os.Mkdir(dir, 0o755)
	os.Mkdir(filepath.Join(parent, "outside"), 0o755)
	m, err := Extract(bytes.NewReader(b), dir)
	if left := outsideOf(t, parent, dir); len(left) > 0 {
		t.Fatalf("extraction wrote outside its directory: %v (err %v)", left, err)
	}
	if err != nil {
		return
	}
	for _, s := range m.Samples {
		root := filepath.Join(dir, s)
		if k, err := nic.OpenCaptured(root); err == nil {
			(&nic.Reader{Root: root, Kernel: k}).Sample()
		}
	}
}

// FuzzExtractEntries fuzzes the archive's entries rather than its gzip bytes, so the
// fuzzer reaches chains of links, directories and files: each line of script is an entry,
// "d NAME", "f NAME" or "l NAME TARGET".
func FuzzExtractEntries(f *testing.F) {
	f.Add("d sample0/\nl sample0/s .\nl sample0/s/s/q ../../outside\nf sample0/q/pwned")
	f.Add("l sample0/a b\nl sample0/b ../sample0/a\nf sample0/a/x")
	f.Add("d sample0/a/b/c\nl sample0/p a/b/c\nl sample0/p/q ../../../..\nf sample0/p/q/x")
	f.Add("l sample1/x ../sample0\nl sample0/y ../../outside\nd sample0/y/z/")
	f.Fuzz(func(t *testing.T, script string) {
		var hs []tar.Header
		for _, line := range strings.Split(script, "\n") {
			fs := strings.Fields(line)
			switch {
			case len(fs) == 2 && fs[0] == "d":
				hs = append(hs, tar.Header{Name: fs[1], Typeflag: tar.TypeDir, Mode: 0o755})
			case len(fs) == 2 && fs[0] == "f":
				hs = append(hs, tar.Header{Name: fs[1], Size: 1, Typeflag: tar.TypeReg, Mode: 0o644})
			case len(fs) == 3 && fs[0] == "l":
				hs = append(hs, tar.Header{Name: fs[1], Linkname: fs[2], Typeflag: tar.TypeSymlink})
			}
		}
		if len(hs) > 64 {
			return
		}
		extractConfined(t, build(t, goodManifest, hs...))
	})
}

// TestExtractSymlinkChain: links whose targets each read as inside the sample, chained
// so that on disk one leads out of the extraction directory; a later entry written
// through it would land outside. Extraction refuses, and nothing exists outside.
func TestExtractSymlinkChain(t *testing.T) {
	parent := t.TempDir()
	outside := filepath.Join(parent, "outside")
	if err := os.Mkdir(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(parent, "extract")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data := build(t, goodManifest,
		tar.Header{Name: "sample0/", Typeflag: tar.TypeDir, Mode: 0o755},
		tar.Header{Name: "sample0/s", Linkname: ".", Typeflag: tar.TypeSymlink},
		// Read as text: sample0/s/s/../../outside = sample0/outside. On disk the link
		// lands at sample0/q, and ../../outside from there is parent/outside.
		tar.Header{Name: "sample0/s/s/q", Linkname: "../../outside", Typeflag: tar.TypeSymlink},
		tar.Header{Name: "sample0/q/pwned", Size: 1, Typeflag: tar.TypeReg, Mode: 0o644},
		tar.Header{Name: "sample0/q/sub/", Typeflag: tar.TypeDir, Mode: 0o755},
	)
	if _, err := Extract(bytes.NewReader(data), dir); err == nil {
		t.Fatal("the archive was accepted")
	}
	if left := outsideOf(t, parent, dir); len(left) > 0 {
		t.Fatalf("extraction wrote outside its directory: %v", left)
	}
}

// outsideOf lists what exists under parent but outside dir, beyond the empty folder
// "outside" the tests make there.
func outsideOf(t testing.TB, parent, dir string) []string {
	var left []string
	filepath.WalkDir(parent, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == parent || p == filepath.Join(parent, "outside") {
			return nil
		}
		if p == dir {
			return filepath.SkipDir
		}
		left = append(left, p)
		return nil
	})
	return left
}

// TestExtractDeepAndWide: an archive of a few kilobytes whose one entry is a path
// 200,000 levels deep, or whose entries make more directories than entries are allowed,
// is refused; and Open leaves nothing in the temporary directory after any of them.
func TestExtractDeepAndWide(t *testing.T) {
	deep := strings.Repeat("a/", 200000) + "x"
	var wide []tar.Header
	for i := 0; i < 2000; i++ {
		wide = append(wide, tar.Header{Name: "sample0/" + strings.Repeat("d/", 63)[:120] + strconv.Itoa(i) + "/f", Typeflag: tar.TypeReg, Mode: 0o644})
	}
	arch, tmp := t.TempDir(), t.TempDir()
	t.Setenv("TMPDIR", tmp)
	for name, tc := range map[string]struct {
		data []byte
		want string
	}{
		"deep":        {build(t, goodManifest, tar.Header{Name: "sample0/" + deep, Size: 1, Typeflag: tar.TypeReg, Mode: 0o644}), "levels deep"},
		"deep dir":    {build(t, goodManifest, tar.Header{Name: "sample0/" + deep + "/", Typeflag: tar.TypeDir, Mode: 0o755}), "levels deep"},
		"64 levels":   {build(t, goodManifest, tar.Header{Name: "sample0/" + strings.Repeat("b/", 63) + "y", Size: 1, Typeflag: tar.TypeReg, Mode: 0o644}), "65 levels deep"},
		"wide, whole": {build(t, goodManifest, wide...), "has no linerate/kernel.json"},
	} {
		t.Run(name, func(t *testing.T) {
			if len(tc.data) > 1<<20 {
				t.Fatalf("the archive is %d bytes", len(tc.data))
			}
			p := filepath.Join(arch, "a.tar.gz")
			os.WriteFile(p, tc.data, 0o644)
			_, _, _, err := Open(p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one saying %q", err, tc.want)
			}
			if left, _ := os.ReadDir(tmp); len(left) != 0 {
				t.Errorf("left in the temporary directory: %v", left)
			}
		})
	}
}
