package main

import (
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/zynqnet/linerate/nic"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

const showFixtures = "../../testdata/show"

// golden compares got with testdata/show/golden/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	goldenIn(t, filepath.Join(showFixtures, "golden"), name, got)
}

// goldenIn compares got with dir/name, or rewrites it with -update.
func goldenIn(t *testing.T, dir, name, got string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if *update {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from golden file (go test -update rewrites it):\n--- want\n%s\n--- got\n%s", p, want, got)
	}
}

func TestShowGolden(t *testing.T) {
	for _, fx := range []string{"zynq7000-gem", "pcie-igb"} {
		t.Run(fx, func(t *testing.T) {
			root := filepath.Join(showFixtures, fx)
			out, errOut, code := runCLI(t, "show", "--root", root)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			golden(t, fx+".txt", out)
			out, errOut, code = runCLI(t, "show", "--json", "--root", root)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			golden(t, fx+".json", out)
		})
	}
}

// copyTree copies a fixture so a test can break it.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "root")
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v: %s", err, out)
	}
	return dst
}

func TestShowRootMissingFiles(t *testing.T) {
	for _, tc := range []struct {
		remove string
		want   string
	}{
		{"linerate/kernel.json", "missing %s/linerate/kernel.json"},
		{"proc/interrupts", "missing %s/proc/interrupts (interrupt counts)"},
		{"sys/class/net/eth0/queues", "missing %s/sys/class/net/eth0/queues"},
		{"sys/devices/system/cpu/online", "missing %s/sys/devices/system/cpu/online"},
	} {
		t.Run(tc.remove, func(t *testing.T) {
			root := copyTree(t, filepath.Join(showFixtures, "zynq7000-gem"))
			if err := os.RemoveAll(filepath.Join(root, tc.remove)); err != nil {
				t.Fatal(err)
			}
			out, errOut, code := runCLI(t, "show", "--root", root)
			if code != 2 || out != "" {
				t.Errorf("exit %d, stdout %q; want exit 2 and nothing on stdout", code, out)
			}
			if want := strings.ReplaceAll(tc.want, "%s", root); !strings.Contains(errOut, want) {
				t.Errorf("stderr %q does not say %q", errOut, want)
			}
		})
	}
}

func TestShowRootBadCapture(t *testing.T) {
	for name, content := range map[string]string{
		"not json":     "{\"format\": 1, \"links\": [",
		"newer format": `{"format": 99, "links": []}`,
		"wrong type":   `{"format": 1, "links": {"a": 1}}`,
		"no ethtool":   `{"format": 1, "links": [{"name": "eth0", "index": 2}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			root := copyTree(t, filepath.Join(showFixtures, "zynq7000-gem"))
			os.WriteFile(filepath.Join(root, "linerate/kernel.json"), []byte(content), 0o644)
			_, errOut, code := runCLI(t, "show", "--root", root, "eth0")
			if code != 2 || !strings.Contains(errOut, "linerate show: ") || !strings.Contains(errOut, "kernel.json") || strings.Contains(errOut, "panic") {
				t.Errorf("exit %d, stderr %q: want a clear error", code, errOut)
			}
		})
	}
}

func TestShowUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"show", "--bogus"},
		{"show", "--ethtool-api", "carrier-pigeon"},
	} {
		wantBadInput(t, args, "")
	}
	if _, errOut, code := runCLI(t, "nosuchcommand"); code != 2 || errOut != "linerate: unknown command \"nosuchcommand\"\nRun 'linerate --help' for the commands.\n" {
		t.Errorf("unknown command: exit %d, %q", code, errOut)
	}
	if _, errOut, code := runCLI(t); code != 2 || !strings.Contains(errOut, "Usage: linerate COMMAND") {
		t.Errorf("no command: exit %d, %q: want the commands", code, errOut)
	}
	out, _, code := runCLI(t, "show", "--help")
	if code != 0 || !strings.HasPrefix(out, "Usage: linerate show") {
		t.Errorf("show --help: exit %d, %q", code, out)
	}
}

func TestVersion(t *testing.T) {
	out, _, code := runCLI(t, "version")
	if code != 0 || !strings.HasPrefix(out, "linerate ") {
		t.Errorf("version: exit %d, %q", code, out)
	}
}

func TestDoctorGolden(t *testing.T) {
	for fx, wantCode := range map[string]int{"zynq7000-gem": 0, "pcie-igb": 1} {
		t.Run(fx, func(t *testing.T) {
			root := filepath.Join(showFixtures, fx)
			out, errOut, code := runCLI(t, "doctor", "--root", root)
			if code != wantCode {
				t.Fatalf("exit %d, want %d: %s", code, wantCode, errOut)
			}
			golden(t, "doctor-"+fx+".txt", out)
			out, _, _ = runCLI(t, "doctor", "--json", "--root", root)
			golden(t, "doctor-"+fx+".json", out)
		})
	}
}

// wantBadInput runs the CLI and checks what every bad input gives: exit 2, nothing on
// stdout, one line naming the input (with want in it), then where the usage is; never
// the whole usage.
func wantBadInput(t *testing.T, args []string, want string) {
	t.Helper()
	out, errOut, code := runCLI(t, args...)
	lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
	hint := "Run 'linerate " + args[0] + " --help' for its usage."
	if code != 2 || out != "" || len(lines) != 2 || lines[1] != hint || !strings.HasPrefix(lines[0], "linerate "+args[0]+": ") || !strings.Contains(lines[0], want) {
		t.Errorf("%v: exit %d, stdout %q, stderr %q: want exit 2, one line saying %q and %q", args, code, out, errOut, want, hint)
	}
}

const captures = "../../testdata/captures"

// TestCapturesGolden: show and doctor over the snapshots captured on the emulated ZC702
// and ZCU102 (the real macb driver's answers; testdata/captures/README.md).
func TestCapturesGolden(t *testing.T) {
	for _, b := range []string{"zc702", "zcu102"} {
		t.Run(b, func(t *testing.T) {
			snap := filepath.Join(captures, b+".tar.gz")
			for _, tc := range []struct {
				name string
				args []string
			}{
				{"show.txt", []string{"show", "--from", snap}},
				{"show.json", []string{"show", "--json", "--from", snap}},
				{"doctor.txt", []string{"doctor", "--from", snap}},
				{"doctor.json", []string{"doctor", "--json", "--from", snap}},
			} {
				out, errOut, code := runCLI(t, tc.args...)
				if code != 0 {
					t.Fatalf("%v: exit %d: %s", tc.args, code, errOut)
				}
				goldenIn(t, filepath.Join(captures, "golden"), b+"-"+tc.name, out)
			}
		})
	}
}

// TestFixtureMatchesCapture: the hand-assembled ZC702 tree the synthetic rule cases
// mutate speaks the real driver's language: the same ethtool -S names, in the same
// order, as the emulated ZC702's macb, and the same queues.
func TestFixtureMatchesCapture(t *testing.T) {
	var fx, real []nic.Interface
	if err := json.Unmarshal([]byte(mustCLI(t, "show", "--json", "--root", filepath.Join(showFixtures, "zynq7000-gem"), "eth0")), &fx); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(mustCLI(t, "show", "--json", "--from", filepath.Join(captures, "zc702.tar.gz"), "eth0")), &real); err != nil {
		t.Fatal(err)
	}
	names := func(i nic.Interface) (out []string) {
		for _, c := range i.Stats.Driver {
			out = append(out, c.Name)
		}
		return out
	}
	if a, b := names(fx[0]), names(real[0]); !reflect.DeepEqual(a, b) {
		t.Errorf("driver statistics differ:\nfixture %v\ncapture %v", a, b)
	}
	if fx[0].Driver.Name != real[0].Driver.Name || fx[0].NumRxQueues != real[0].NumRxQueues || fx[0].NumTxQueues != real[0].NumTxQueues ||
		fx[0].Rings.RXMax != real[0].Rings.RXMax || fx[0].Rings.TXMax != real[0].Rings.TXMax || *fx[0].MaxMTU != *real[0].MaxMTU {
		t.Errorf("fixture %+v\ncapture %+v", fx[0], real[0])
	}
}

func mustCLI(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, errOut)
	}
	return out
}

// TestStationBadInput: a station given a bad address or a port it cannot reflect on
// says so in one line, exit 2, and prints nothing that looks like it started.
func TestStationBadInput(t *testing.T) {
	data := t.TempDir()
	wantBadInput(t, []string{"station", "--listen", "nonsense", "--data", data, "--iperf3", "off"}, "--listen nonsense")
	wantBadInput(t, []string{"station", "--listen", "127.0.0.1:0", "--data", data, "--iperf3", "nonsense"}, `--iperf3 "nonsense"`)
	wantBadInput(t, []string{"station", "--listen", "127.0.0.1:0", "--data", data, "--iperf3", ":70000"}, `--iperf3 ":70000"`)
	wantBadInput(t, []string{"station", "--listen", "127.0.0.1:0", "--data", data, "--iperf3", "off", "--reflect", "nope0"}, `--reflect nope0: interface "nope0" not found`)
}
