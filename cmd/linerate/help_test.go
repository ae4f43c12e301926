package main

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/zynqnet/linerate/internal/cli"
)

// eachCommand calls fn for every command and subcommand with its name as typed.
func eachCommand(fn func(name string, c *cli.Command)) {
	for _, c := range app().Commands {
		fn(c.Name, c)
		for _, s := range c.Subs {
			fn(c.Name+" "+s.Name, s)
		}
	}
}

// allFlags is every flag name any command takes (iperf3's options included).
func allFlags() map[string]bool {
	all := map[string]bool{"help": true, "h": true, "version": true, "v": true}
	eachCommand(func(_ string, c *cli.Command) {
		for _, f := range c.Flagged() {
			all[f.Name] = true
		}
		for _, o := range c.OwnFlags {
			all[o.Long] = true
			if o.Short != 0 {
				all[string(o.Short)] = true
			}
		}
	})
	return all
}

var flagRef = regexp.MustCompile(`(?:^|[\s(\[|'"])(--[a-z][a-z0-9-]*)`)

// TestFlagsHaveUsageAndHelpNamesRealFlags walks every command's flags: each has its usage
// text; every --flag a command's help or examples name is a flag linerate takes, and each
// example parses with its command's own flags.
func TestFlagsHaveUsageAndHelpNamesRealFlags(t *testing.T) {
	all := allFlags()
	n := 0
	eachCommand(func(name string, c *cli.Command) {
		if c.Summary == "" || len(c.Usage) == 0 {
			t.Errorf("%s: no summary or usage", name)
		}
		fs, _ := c.FlagSet()
		fs.VisitAll(func(f *flag.Flag) {
			n++
			if strings.TrimSpace(f.Usage) == "" {
				t.Errorf("linerate %s --%s has no usage text", name, f.Name)
			}
		})
		for _, o := range c.OwnFlags {
			if strings.TrimSpace(o.Help) == "" {
				t.Errorf("linerate %s --%s has no help", name, o.Long)
			}
		}
		for _, m := range flagRef.FindAllStringSubmatch(c.Help("linerate"), -1) {
			if !all[strings.TrimPrefix(m[1], "--")] {
				t.Errorf("linerate %s's help names %s, which no command takes", name, m[1])
			}
		}
		for _, e := range c.Examples {
			args := strings.Fields(strings.NewReplacer("'", "", `"`, "").Replace(e.Cmd))
			if strings.Join(args[:len(strings.Fields(name))], " ") != name {
				t.Errorf("%s: the example %q is not of this command", name, e.Cmd)
				continue
			}
			if c.Own != nil {
				continue
			}
			efs, _ := c.FlagSet()
			if idx := strings.Index(strings.Join(args, " "), " >"); idx >= 0 {
				args = strings.Fields(strings.Join(args, " ")[:idx])
			}
			if _, err := cli.Parse(efs, args[len(strings.Fields(name)):]); err != nil {
				t.Errorf("%s: the example %q does not parse: %v", name, e.Cmd, err)
			}
		}
	})
	if n < 100 {
		t.Errorf("only %d flags walked", n)
	}
}

// TestFlagErrorsInOneLine: a bad flag is one line naming the flag, the value and what it
// takes, in linerate's form, not Go's flag package's.
func TestFlagErrorsInOneLine(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"doctor", "--interval", "1"}, `linerate doctor: --interval "1": want a duration such as 3s, 500ms or 2m`},
		{[]string{"show", "--jsno"}, "linerate show: --jsno: no such flag"},
		{[]string{"show", "--ethtool-api", "magic"}, `linerate show: --ethtool-api "magic": want auto, netlink or ioctl`},
		{[]string{"gen", "eth0", "--count", "lots"}, `linerate gen: --count "lots": want a whole number, 0 or more`},
		{[]string{"gen", "eth0", "--dst"}, "linerate gen: --dst needs a value: --dst MAC"},
		{[]string{"gen", "eth0", "--cpus", "zero"}, `linerate gen: --cpus "zero": want a count of CPUs (1, 2, ...) or all`},
		{[]string{"sink", "eth0", "--stream", "70000"}, `linerate sink: --stream "70000": want 0..65535`},
		{[]string{"dts", "overlay", "--rx-ring", "0"}, `linerate dts overlay: --rx-ring "0": want 64 or more, a power of two`},
		{[]string{"autotune", "eth0", "--min-mbps", "-1"}, `linerate autotune: --min-mbps "-1": want a number, 0 or more`},
		{[]string{"validate", "--json=maybe"}, `linerate validate: --json "maybe": want true or false`},
	} {
		_, stderr, code := runCLI(t, c.args...)
		lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
		if code != 2 || len(lines) != 2 || lines[0] != c.want || !strings.HasPrefix(lines[1], "Run 'linerate ") {
			t.Errorf("%v: exit %d\n%s\nwant exit 2 and\n%s", c.args, code, stderr, c.want)
		}
	}
}

// TestHelpCommand: 'linerate help CMD' is CMD's --help; help of a subcommand; unknown
// names are usage errors.
func TestHelpCommand(t *testing.T) {
	eachCommand(func(name string, c *cli.Command) {
		args := strings.Fields(name)
		h, _, code := runCLI(t, append([]string{"help"}, args...)...)
		direct, _, code2 := runCLI(t, append(args, "--help")...)
		if code != 0 || code2 != 0 || h != direct || !strings.Contains(h, "Usage: linerate "+c.Usage[0][:strings.IndexAny(c.Usage[0]+" ", " ")]) {
			t.Errorf("help %s (%d) and %s --help (%d) differ or lack the usage:\n%s\n---\n%s", name, code, name, code2, h, direct)
		}
	})
	if _, _, code := runCLI(t, "help", "nosuch"); code != 2 {
		t.Errorf("help of an unknown command: exit %d", code)
	}
	top, _, _ := runCLI(t, "help")
	for _, c := range app().Commands {
		if !strings.Contains(top, "  "+c.Name+" ") {
			t.Errorf("the list lacks %s", c.Name)
		}
	}
}

// TestCompletionBash loads the bash script and asks it to complete, as bash does at a
// Tab: commands, subcommands, a command's flags, a flag's words, and the live values the
// script asks linerate for (a 'linerate' on PATH that is this test binary): the
// kernel's interfaces, the built-in plans and profiles, the registry's knobs, the boards.
func TestCompletionBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	script, _, code := runCLI(t, "completion", "bash")
	if code != 0 {
		t.Fatal("completion bash failed")
	}
	dir := t.TempDir()
	f := filepath.Join(dir, "linerate.bash")
	os.WriteFile(f, []byte(script), 0o644)
	// linerate __complete KIND, as the script asks it.
	os.WriteFile(filepath.Join(dir, "linerate"), []byte("#!/bin/sh\nLINERATE_RUN_ARGS=\"[\\\"$1\\\",\\\"$2\\\"]\" exec "+os.Args[0]+" -test.run='^$'\n"), 0o755)
	t.Setenv("PATH", dir+":"+os.Getenv("PATH"))
	ifaces, _ := os.ReadDir("/sys/class/net")
	var anIface string
	for _, e := range ifaces {
		anIface = e.Name()
	}
	for _, c := range []struct {
		words string
		want  []string
		not   string
	}{
		{"linerate sw", []string{"sweep"}, "show"},
		{"linerate dts ", []string{"overlay", "merge", "show", "apply"}, ""},
		{"linerate dts overlay --rx", []string{"--rx-ring", "--rx-watermark"}, "--json"},
		{"linerate show --eth", []string{"--ethtool-api"}, ""},
		{"linerate show --ethtool-api n", []string{"netlink"}, "ioctl"},
		{"linerate doctor --profile ", []string{"throughput", "latency"}, ""},
		{"linerate help tu", []string{"tune"}, ""},
		{"linerate iperf3 --bid", []string{"--bidir"}, ""},
		{"linerate show ", []string{"lo", anIface}, ""},
		{"linerate tune ", []string{"lo"}, ""},
		{"linerate tune eth0 --profile ", []string{"throughput", "latency", "balanced", "zc702", "zcu102"}, ""},
		{"linerate validate ", []string{"qemu-zc702", "zcu102", "qemu-zcu102-4port"}, ""},
		{"linerate sweep eth0 --knob rings.", []string{"rings.rx", "rings.tx"}, "mtu"},
		{"linerate sweep eth0 --knob features.g", []string{"features.gro", "features.gso"}, ""},
		{"linerate rfc2544 eth0 --loop ", []string{"lo"}, ""},
		{"linerate board z", []string{"zc702", "zcu102"}, ""},
		{"linerate profile ", []string{"list", "show"}, ""},
		{"linerate profile show ", []string{"balanced", "zcu102"}, "list"},
		{"linerate dts overlay --board zc", []string{"zc702", "zcu102"}, ""},
		{"linerate gen eth0 --duration ", nil, "lo"},
	} {
		words := strings.Split(c.words, " ")
		sh := "source " + f + "; COMP_WORDS=(" + quoteWords(words) + "); COMP_CWORD=" + strconv.Itoa(len(words)-1) + "; _linerate; printf '%s\\n' \"${COMPREPLY[@]}\""
		out, err := exec.Command(bash, "-c", sh).CombinedOutput()
		if err != nil {
			t.Fatalf("%q: %v\n%s", c.words, err, out)
		}
		got := strings.Fields(string(out))
		for _, w := range c.want {
			if !contains(got, w) {
				t.Errorf("%q completes to %v, want %s among them", c.words, got, w)
			}
		}
		if c.not != "" && contains(got, c.not) {
			t.Errorf("%q completes to %v, not %s", c.words, got, c.not)
		}
	}
}

func quoteWords(ws []string) string {
	var q []string
	for _, w := range ws {
		q = append(q, "'"+w+"'")
	}
	return strings.Join(q, " ")
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// TestCompletionZsh: the zsh script parses (zsh -n) and zsh's completion system loads
// it and knows the function.
func TestCompletionZsh(t *testing.T) {
	zsh, err := exec.LookPath("zsh")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("zsh is not installed (make test installs it)")
		}
		t.Skip("no zsh (make test installs it)")
	}
	script, _, _ := runCLI(t, "completion", "zsh")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "_linerate"), []byte(script), 0o644)
	if out, err := exec.Command(zsh, "-n", filepath.Join(dir, "_linerate")).CombinedOutput(); err != nil {
		t.Fatalf("zsh -n: %v\n%s", err, out)
	}
	out, err := exec.Command(zsh, "-f", "-c", "fpath=("+dir+" $fpath); autoload -U compinit; compinit -u -d "+filepath.Join(dir, "dump")+"; autoload -U _linerate; whence -w _linerate; print -l ${_comps[linerate]}").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "_linerate: function") || !strings.Contains(string(out), "_linerate") {
		t.Fatalf("zsh did not load the completion: %v\n%s", err, out)
	}
}

// TestManPages: 'linerate help --man DIR' writes a page for linerate and one per command,
// which man reads without warnings, names every flag, has EXIT STATUS and FILES, and
// at 80 columns (a serial console) has no line over 80 (the iperf3 page too).
func TestManPages(t *testing.T) {
	man, err := exec.LookPath("man")
	if err != nil {
		t.Skip("no man (make test installs man-db)")
	}
	dir := filepath.Join(t.TempDir(), "man")
	if out, errOut, code := runCLI(t, "help", "--man", dir); code != 0 || !strings.Contains(out, "manual pages") {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	read := func(page string) (string, error) {
		cmd := exec.Command(man, "-l", "-P", "cat", page)
		cmd.Env = append(os.Environ(), "MANWIDTH=80", "MAN_KEEP_STDERR=1", "LC_ALL=C.UTF-8")
		out, err := cmd.CombinedOutput()
		text := string(out)
		for _, l := range strings.Split(text, "\n") {
			if n := utf8.RuneCountInString(l); n > 80 {
				t.Errorf("%s at 80 columns: a line of %d: %q", filepath.Base(page), n, l)
			}
		}
		for _, sec := range []string{"\nEXIT STATUS\n", "\nFILES\n"} {
			if !strings.Contains(text, sec) {
				t.Errorf("%s has no%s section", filepath.Base(page), strings.TrimRight(sec, "\n"))
			}
		}
		return text, err
	}
	if _, err := read(filepath.Join(dir, "linerate.1")); err != nil {
		t.Errorf("linerate.1: %v", err)
	}
	eachCommand(func(name string, c *cli.Command) {
		page := filepath.Join(dir, "linerate-"+strings.ReplaceAll(name, " ", "-")+".1")
		text, err := read(page)
		if err != nil || !strings.Contains(text, "NAME") || !strings.Contains(text, "linerate-"+strings.ReplaceAll(name, " ", "-")) {
			t.Errorf("man -l %s: %v\n%s", page, err, text)
			return
		}
		if strings.Contains(text, "warning") {
			t.Errorf("%s: roff warnings:\n%s", page, text)
		}
		for _, f := range c.Flagged() {
			if !strings.Contains(text, strings.Fields(f.Term)[0]) {
				t.Errorf("%s lacks %s", page, f.Term)
			}
		}
	})
	if _, err := os.Stat(filepath.Join(dir, "linerate.1")); err != nil {
		t.Error("no linerate.1")
	}
}
