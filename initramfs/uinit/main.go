// Command uinit is the tester image's boot-time program, run by u-root's init: it loads
// the GEM driver where it is a module, brings the port up as the kernel command line
// says, runs the job named there with its results on the serial console, and then powers
// off, reboots, or leaves the operator at a shell with linerate on PATH. It never returns:
// a uinit that returns takes init down and panics the kernel.
package main

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/zynqnet/linerate/internal/consolecap"
)

const linerate = "/bbin/linerate"

func say(format string, a ...any) {
	fmt.Printf("LINERATE-UINIT: "+format+"\n", a...)
}

func main() {
	start := time.Now()
	defer func() {
		if r := recover(); r != nil {
			say("internal error: %v; here is a shell", r)
			shellForever()
		}
	}()
	b, err := os.ReadFile("/proc/cmdline")
	if err != nil {
		say("cannot read /proc/cmdline (%v): here is a shell", err)
		shellForever()
	}
	cfg, probs := ParseCmdline(string(b))
	for _, p := range probs {
		say("kernel command line: %s", p)
	}
	if len(probs) > 0 {
		say("the job is not run; fix the kernel command line (see 'linerate' README, serial console section)")
	}
	loadModules()
	iface := pickIface(cfg.Iface)
	say("port %s, job %s, then %s", iface, cfg.Run, cfg.After)
	if err := configure(cfg, iface); err != nil {
		say("%s: %v", iface, err)
		if cfg.Run != "shell" {
			say("the job needs the port: here is a shell")
			cfg.Run, cfg.After = "shell", "shell"
		}
	}
	// The other ports of a multi-port plan: up, addressed; one that fails is said, and
	// the plan fails that port.
	for _, p := range cfg.Ports {
		if err := configure(Config{IP: "static", Prefix: p.Prefix}, p.Iface); err != nil {
			say("%s: %v", p.Iface, err)
		}
	}
	// Kernel messages would land in the middle of the job's output on the serial console
	// (a late probe on the ZCU102 split an iperf3 JSON line): only emergencies reach the
	// console while the job runs, as dmesg -n 1; the kernel log stays in dmesg.
	restoreLog := func() {}
	if cfg.Run != "shell" {
		if old, err := os.ReadFile("/proc/sys/kernel/printk"); err == nil {
			os.WriteFile("/proc/sys/kernel/printk", []byte("1"), 0)
			restoreLog = func() { os.WriteFile("/proc/sys/kernel/printk", old, 0) }
		}
	}
	// Tuning the live device tree asks for (linerate,* properties on the GEM node).
	if hasDTTuning(iface) {
		step("dt-tune", "tune", iface, "--from-dt")
	}
	rc := runJob(cfg, iface)
	say("job %s finished (rc %d) %.1fs after uinit started", cfg.Run, rc, time.Since(start).Seconds())
	restoreLog() // after() never returns: the operator's shell gets the kernel's messages again
	after(cfg.After)
}

// hasDTTuning reports whether the interface's device-tree node carries linerate,*
// properties (on the device's of_node, where macb has it, or the interface's).
func hasDTTuning(iface string) bool {
	for _, p := range []string{"/device/of_node", "/of_node"} {
		ents, err := os.ReadDir("/sys/class/net/" + iface + p)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "linerate,") {
				return true
			}
		}
	}
	return false
}

// pickIface is the named interface, else eth0, else the first non-loopback one.
func pickIface(want string) string {
	if want != "" {
		return want
	}
	if _, err := os.Stat("/sys/class/net/eth0"); err == nil {
		return "eth0"
	}
	ents, _ := os.ReadDir("/sys/class/net")
	for _, e := range ents {
		if e.Name() != "lo" {
			return e.Name()
		}
	}
	return "eth0"
}

// loadModules loads every kernel module in the image, each after what it depends on
// (modules.dep), with finit_module.
func loadModules() {
	rel, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return
	}
	dir := filepath.Join("/lib/modules", strings.TrimSpace(string(rel)))
	f, err := os.Open(filepath.Join(dir, "modules.dep"))
	if err != nil {
		return // a kernel with the driver built in
	}
	defer f.Close()
	deps := map[string][]string{}
	var order []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		mod, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		deps[mod] = strings.Fields(rest)
		order = append(order, mod)
	}
	loaded := map[string]bool{}
	var load func(m string, depth int)
	load = func(m string, depth int) {
		if loaded[m] || depth > 32 {
			return
		}
		loaded[m] = true
		for _, d := range deps[m] {
			load(d, depth+1)
		}
		if err := insmod(filepath.Join(dir, m)); err != nil {
			say("module %s: %v", filepath.Base(m), err)
		} else {
			say("module %s loaded", filepath.Base(m))
		}
	}
	// PHY drivers first: phylib binds a PHY's driver when the MAC's MDIO bus finds it, and
	// one that is not loaded by then leaves it to the Generic PHY for good.
	slices.SortStableFunc(order, func(a, b string) int {
		return cmp.Compare(phyFirst(a), phyFirst(b))
	})
	for _, m := range order {
		load(m, 0)
	}
}

// phyFirst orders PHY drivers (drivers/net/phy/, but phylib and phylink themselves,
// which the MAC needs anyway) before the rest.
func phyFirst(mod string) int {
	if strings.Contains(mod, "/drivers/net/phy/") && !strings.Contains(mod, "/libphy.ko") && !strings.Contains(mod, "/phylink.ko") {
		return 0
	}
	return 1
}

// console is where jobs print: the serial console uinit inherited from init.
var console io.Writer = os.Stdout

// stepInput is the steps' standard input: nothing, or the console for a step that asks
// the operator.
var stepInput io.Reader

// step runs one linerate command between markers and returns its exit code.
func step(name string, args ...string) (int, []byte) {
	fmt.Fprintf(console, "==== LINERATE BEGIN %s: linerate %s ====\n", name, strings.Join(args, " "))
	var out bytes.Buffer
	cmd := exec.Command(linerate, args...)
	cmd.Stdin = stepInput
	cmd.Stdout = io.MultiWriter(console, &out)
	cmd.Stderr = console
	rc := 0
	if err := cmd.Run(); err != nil {
		rc = 1
		if ee, ok := err.(*exec.ExitError); ok {
			rc = ee.ExitCode()
		} else {
			fmt.Fprintf(console, "cannot run %s: %v\n", linerate, err)
		}
	}
	fmt.Fprintf(console, "==== LINERATE END %s rc=%d ====\n", name, rc)
	return rc, out.Bytes()
}

// mbps reads the received bit rate out of an iperf3 -J document.
func mbps(doc []byte) float64 {
	var v struct {
		End struct {
			SumReceived struct {
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"sum_received"`
		} `json:"end"`
	}
	if json.Unmarshal(doc, &v) != nil {
		return 0
	}
	return v.End.SumReceived.BitsPerSecond / 1e6
}

func runJob(cfg Config, iface string) int {
	peer := cfg.Peer.String()
	switch cfg.Run {
	case "shell":
		return 0
	case "validate":
		args := []string{"validate", cfg.Plan}
		if cfg.Station != "" {
			args = append(args, "--station", cfg.Station)
		}
		if cfg.Token != "" {
			// Through the environment: the step's line on the console names the variable,
			// not the token.
			os.Setenv("LINERATE_STATION_TOKEN", cfg.Token)
			args = append(args, "--station-token", "@LINERATE_STATION_TOKEN")
			if cfg.InsecureToken {
				args = append(args, "--insecure-token")
			}
		}
		// The operator types (or a barcode scanner reads) their id and the board's serial
		// at the console, as linerate.prompt= asks.
		for _, w := range cfg.Prompt {
			args = append(args, "--ask-"+w)
			stepInput = os.Stdin
		}
		rc, _ := step("validate", args...)
		return rc
	case "show":
		// The GEM nodes as the running kernel has them (linerate,* properties included).
		step("dts-live", "dts", "show", "--live")
		rc, _ := step("show", "show", iface)
		return rc
	case "doctor":
		rc, _ := step("doctor", "doctor", "--interval", "2s", iface)
		return rc
	case "demo":
		worst := 0
		note := func(rc int) {
			if rc > worst {
				worst = rc
			}
		}
		if cfg.Profile != "" {
			rc, _ := step("tune", "tune", iface, "--profile", cfg.Profile)
			note(rc)
		}
		rc, _ := step("show", "show", iface)
		note(rc)
		step("doctor", "doctor", "--interval", "2s", iface) // findings are information here
		rc, up := step("iperf3-upload", "iperf3", "-c", peer, "-t", "5", "-J")
		note(rc)
		rc, down := step("iperf3-download", "iperf3", "-c", peer, "-t", "5", "-R", "-J")
		note(rc)
		fmt.Fprintf(console, "LINERATE DEMO %s: board to station %.1f Mbit/s, station to board %.1f Mbit/s\n",
			map[bool]string{true: "PASS", false: "FAIL"}[worst == 0], mbps(up), mbps(down))
		return worst
	case "capture":
		rc, _ := capture(iface)
		return rc
	case "e2e":
		return e2e(iface, peer)
	}
	return 0
}

// capture takes a snapshot of the port (what doctor and show read, twice) and prints it
// on the console between consolecap's markers, so a board with nothing but a serial
// line hands its state to a bring-up engineer ('linerate snapshot --from-console').
func capture(iface string) (int, error) {
	const file = "/tmp/linerate-capture.tar.gz"
	if rc, _ := step("snapshot", "snapshot", "-o", file, "--interval", "2s", iface); rc != 0 {
		return rc, nil
	}
	b, err := os.ReadFile(file)
	if err == nil {
		err = consolecap.Write(console, b)
	}
	if err != nil {
		fmt.Fprintf(console, "capture: %v\n", err)
		return 1, err
	}
	return 0, nil
}

// shellForever runs the default shell on the console and starts it again when it ends.
func shellForever() {
	for {
		fmt.Println("LINERATE-UINIT: shell on the console; linerate is on PATH ('linerate --help')")
		sh := "/bin/defaultsh"
		if _, err := os.Stat(sh); err != nil {
			sh = "/bbin/gosh"
		}
		cmd := exec.Command(sh)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
		// The shell hands its commands pipes, not the console: tell linerate its text is
		// for a person at the console (80 columns, kernel messages held off meanwhile).
		cmd.Env = append(os.Environ(), "LINERATE_CONSOLE=1")
		if err := cmd.Run(); err != nil {
			fmt.Printf("LINERATE-UINIT: shell ended: %v\n", err)
			time.Sleep(time.Second)
		}
	}
}
