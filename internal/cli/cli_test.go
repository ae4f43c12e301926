package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/zynqnet/linerate/internal/badinput"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (go test ./internal/cli -update writes it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from testdata/%s (go test ./internal/cli -update, then read the diff):\n%s", name, name, got)
	}
}

// testApp is a program of the shapes linerate's commands take: flags of every kind
// (value, bool, duration, choice, repeated), a command with subcommands, one that
// parses its own arguments, a hidden one.
func testApp(ran *[]string) *App {
	show := &Command{Name: "show", Summary: "read what decides an interface's throughput", Usage: []string{"show [IFACE...] [--json]"},
		About:    "Reads every interface, or those named.\n\nA second paragraph, written over two lines as the help shows it\nand as the manual page joins it.\n\n  show eth0   an indented line, kept",
		Examples: []Example{Ex("show eth0 --json", "eth0 as JSON"), Ex("show", "")},
		Flags: func(fs *flag.FlagSet) Run {
			js := fs.Bool("json", false, "print JSON")
			root := fs.String("root", "", "read a captured tree under `DIR`")
			iv := fs.Duration("interval", 2*time.Second, "sample twice, `D` apart")
			api := Choice(fs, "ethtool-api", "auto", "how ethtool's answers are read", "auto", "netlink", "ioctl")
			n := fs.Int("count", 1, "how many samples")
			return func(ctx context.Context, args []string, io IO) error {
				*ran = append(*ran, strings.Join(append([]string{"show", *root, iv.String(), *api, strings.Repeat("n", *n)}, args...), " ")+map[bool]string{true: " json"}[*js])
				return nil
			}
		}}
	overlay := &Command{Name: "overlay", Summary: "write a GEM overlay", Usage: []string{"dts overlay BOARD"},
		Flags: func(fs *flag.FlagSet) Run {
			out := fs.String("o", "", "write it to `FILE`")
			return func(ctx context.Context, args []string, io IO) error {
				if len(args) != 1 {
					return Usagef("give one BOARD")
				}
				*ran = append(*ran, "overlay "+args[0]+" "+*out)
				return nil
			}
		}}
	own := &Command{Name: "iperf3", Summary: "an iperf3 that parses its own options", Usage: []string{"iperf3 -c HOST | -s"},
		OwnHelp: func(int) string {
			return "Usage: iperf3 [-s|-c host] [options]\n  -c, --client <host>   run in client mode\n"
		},
		OwnFlags: []OwnFlag{{Long: "client", Short: 'c', Help: "client"}, {Long: "server", Short: 's', Help: "server"}, {Long: "sctp", Refused: "no SCTP"}},
		Own: func(ctx context.Context, args []string, io IO) error {
			*ran = append(*ran, "iperf3 "+strings.Join(args, " "))
			return nil
		}}
	limits := &Command{Name: "limits", Summary: "the population's limits", Usage: []string{"station limits --type BOARD"},
		Flags: func(fs *flag.FlagSet) Run {
			typ := fs.String("type", "", "the board `TYPE`")
			return func(ctx context.Context, args []string, io IO) error {
				*ran = append(*ran, "station limits "+*typ)
				return nil
			}
		}}
	station := &Command{Name: "station", Summary: "the line's station", Usage: []string{"station [--listen ADDR]", "station limits --type BOARD"}, Subs: []*Command{limits},
		Flags: func(fs *flag.FlagSet) Run {
			listen := fs.String("listen", ":8080", "HTTP `ADDR`")
			return func(ctx context.Context, args []string, io IO) error {
				*ran = append(*ran, "station "+*listen+" "+strings.Join(args, " "))
				return nil
			}
		}}
	return &App{Prog: "lr", About: "lr brings an Ethernet port to line rate.", Commands: []*Command{show, station,
		{Name: "dts", Summary: "device-tree overlays", Usage: []string{"dts COMMAND"}, About: "Overlays for the GEM nodes.", Subs: []*Command{overlay}},
		own,
		{Name: "secret", Summary: "not listed", Hidden: true, Usage: []string{"secret"}, Flags: func(fs *flag.FlagSet) Run {
			return func(context.Context, []string, IO) error { return nil }
		}}}}
}

func TestHelpGolden(t *testing.T) {
	a := testApp(new([]string))
	golden(t, "help.txt", a.Help())
	for _, names := range [][]string{{"show"}, {"dts"}, {"dts", "overlay"}, {"iperf3"}, {"station"}} {
		h, err := a.HelpOf(names)
		if err != nil {
			t.Fatal(err)
		}
		golden(t, "help-"+strings.Join(names, "-")+".txt", h)
		for _, l := range strings.Split(h, "\n") {
			if len([]rune(l)) > Width {
				t.Errorf("help %v: a line over %d columns: %q", names, Width, l)
			}
		}
	}
	for _, names := range [][]string{{"nope"}, {"show", "x"}, {"dts", "nope"}} {
		if _, err := a.HelpOf(names); !errors.Is(err, ErrUsage) {
			t.Errorf("help %v: %v, want a usage error", names, err)
		}
	}
}

func TestCompletionGolden(t *testing.T) {
	a := testApp(new([]string))
	for _, sh := range []string{"bash", "zsh"} {
		s, err := a.Completion(sh)
		if err != nil {
			t.Fatal(err)
		}
		golden(t, "completion."+sh, s)
	}
	if _, err := a.Completion("fish"); err == nil || !strings.Contains(err.Error(), `completion "fish": want bash or zsh`) {
		t.Errorf("fish: %v", err)
	}
}

func TestManGolden(t *testing.T) {
	a := testApp(new([]string))
	pages := a.ManPages("v1.2.3", time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC))
	var names []string
	for n := range pages {
		names = append(names, n)
	}
	sort.Strings(names)
	if strings.Join(names, " ") != "lr-dts-overlay.1 lr-dts.1 lr-iperf3.1 lr-secret.1 lr-show.1 lr-station-limits.1 lr-station.1 lr.1" {
		t.Errorf("pages %v", names)
	}
	for _, n := range []string{"lr.1", "lr-show.1", "lr-dts-overlay.1", "lr-iperf3.1"} {
		golden(t, "man-"+n, string(pages[n]))
	}
	dir := t.TempDir()
	if n, err := a.WriteManPages(filepath.Join(dir, "man"), "v1", time.Now()); err != nil || n != len(pages) {
		t.Errorf("wrote %d: %v", n, err)
	}
}

// TestMainAndFlagErrors: the command line as a user meets it: flags before, between and
// after arguments, --name=value, "--"; each bad flag a usage error in one line naming the
// flag, what it was given and what it takes, then where the usage is.
func TestMainAndFlagErrors(t *testing.T) {
	var ran []string
	a := testApp(&ran)
	run := func(args ...string) (string, string, error) {
		var out, errOut bytes.Buffer
		err := a.Main(context.Background(), args, IO{Stdout: &out, Stderr: &errOut}, nil)
		return out.String(), errOut.String(), err
	}
	for _, args := range [][]string{
		{"show", "eth0", "--json", "--root", "/tmp/b", "eth1"},
		{"show", "--interval=500ms", "-ethtool-api", "ioctl", "--count", "3", "--", "--json"},
		{"dts", "overlay", "zc702", "-o", "x.dtbo"},
		{"iperf3", "-c", "198.18.0.1", "--bogus"},
		{"secret"},
		{"station", "--listen", ":9090"},
		{"station"},
		{"station", "limits", "--type", "zc702"},
	} {
		if _, e, err := run(args...); err != nil {
			t.Errorf("%v: %v %s", args, err, e)
		}
	}
	golden(t, "ran.txt", strings.Join(ran, "\n")+"\n")
	var b strings.Builder
	for _, args := range [][]string{
		{"show", "--nope"},
		{"show", "--interval", "1"},
		{"show", "--count", "many"},
		{"show", "--json=maybe"},
		{"show", "--ethtool-api", "sysfs"},
		{"show", "--root"},
		{"dts"},
		{"dts", "nope"},
		{"dts", "overlay"},
		{"nope"},
		{},
	} {
		out, e, err := run(args...)
		if !errors.Is(err, ErrUsage) || !badinput.Is(err) || Code(err) != 2 {
			t.Errorf("%v: %v (code %d), want a usage error (exit 2)", args, err, Code(err))
		}
		b.WriteString("$ lr " + strings.Join(args, " ") + "\n" + out + e)
	}
	golden(t, "errors.txt", b.String())
	for _, args := range [][]string{{"--help"}, {"show", "--help"}, {"show", "-h"}, {"dts", "help"}} {
		if out, _, err := run(args...); err != nil || !strings.HasPrefix(out, "lr brings") && !strings.HasPrefix(out, "Usage: lr ") {
			t.Errorf("%v: %v\n%s", args, err, out)
		}
	}
}
