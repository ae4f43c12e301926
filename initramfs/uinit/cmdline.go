package main

import (
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"
)

// Config is what the kernel command line asks of the tester image:
//
//	linerate.iface=eth0        the port under test (default: eth0, else the first one)
//	linerate.ip=ADDR/LEN|dhcp  how to address it (default: no address)
//	linerate.peer=ADDR         the station: iperf3 server and reflector
//	linerate.run=JOB           shell (default), show, doctor, demo, e2e
//	linerate.after=WHAT        shell (default), poweroff, reboot
//	linerate.profile=NAME      a tune profile the job applies first (demo, e2e)
//	linerate.plan=NAME|FILE    the factory plan the validate job runs (qemu-zc702, zc702, ...)
//	linerate.station=URL       where validate POSTs its report (default: the plan's)
//	linerate.token=TOKEN       the station's bearer token for the report (station --tokens)
//	linerate.insecure_token=1  send that token over plain http too (validate --insecure-token)
type Config struct {
	Iface   string
	IP      string // "" none, "dhcp", or a prefix
	Prefix  netip.Prefix
	Peer    netip.Addr
	Run     string
	After   string
	Profile string
	Plan    string
	Station string
	Token   string // the station's bearer token (linerate.token=)
	// InsecureToken lets the token go to an http:// station (linerate.insecure_token=1).
	InsecureToken bool
	// Prompt is what the validate job asks the operator at the console, in order:
	// their id and/or the board's serial (linerate.prompt=operator,serial).
	Prompt []string
	// Ports are the board's other ports a multi-port plan tests, each addressed
	// (linerate.ports=eth1:ADDR/LEN,eth2:ADDR/LEN).
	Ports []PortConfig
}

// PortConfig is one more port to bring up and address.
type PortConfig struct {
	Iface  string
	Prefix netip.Prefix
}

// Jobs the image knows.
var Jobs = map[string]string{
	"shell":    "the serial console shell, with linerate on PATH",
	"show":     "linerate show of the port",
	"doctor":   "linerate doctor of the port",
	"demo":     "show and doctor of the port, then iperf3 to the peer both ways",
	"e2e":      "the end-to-end checks of make test: show --json, tune and revert, iperf3 both ways",
	"validate": "linerate validate of the factory plan (linerate.plan=): the verdict line, reports to the station",
	"capture":  "linerate snapshot of the port, printed on the console in base64 (scripts/capture-board keeps it)",
}

// Problem is a command-line value the uinit cannot use; it is printed on the console and
// the job falls back to the shell.
type Problem struct{ Key, Msg string }

func (p Problem) String() string { return "linerate." + p.Key + ": " + p.Msg }

// splitCmdline splits /proc/cmdline into words, keeping double-quoted values whole as
// the kernel does.
func splitCmdline(s string) []string {
	var out []string
	var cur strings.Builder
	quoted := false
	for _, r := range s {
		switch {
		case r == '"':
			quoted = !quoted
		case (r == ' ' || r == '\t' || r == '\n') && !quoted:
			if cur.Len() > 0 {
				out = append(out, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteRune(r)
		}
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

// ParseCmdline reads the linerate.* parameters; problems make the job the shell.
func ParseCmdline(s string) (Config, []Problem) {
	c := Config{Run: "shell", After: "shell"}
	var probs []Problem
	for _, w := range splitCmdline(s) {
		k, v, hasV := strings.Cut(w, "=")
		key, ok := strings.CutPrefix(k, "linerate.")
		switch {
		case !ok:
		case !hasV || v == "":
			probs = append(probs, Problem{key, "has no value"})
		default:
			if msg := c.set(key, v); msg != "" {
				probs = append(probs, Problem{key, msg})
			}
		}
	}
	probs = append(probs, c.missing()...)
	if len(probs) > 0 {
		// The operator must see the problem and fix it: stay at the shell.
		c.Run, c.After = "shell", "shell"
	}
	return c, probs
}

// set takes one parameter's value; what is wrong with it is said, "" when nothing.
func (c *Config) set(key, v string) string {
	switch key {
	case "iface":
		c.Iface = v
	case "ip":
		c.IP = v
		if v != "dhcp" {
			p, err := netip.ParsePrefix(v)
			if err != nil {
				c.IP = ""
				return fmt.Sprintf("%q is neither dhcp nor ADDR/LEN (e.g. 198.18.0.2/24)", v)
			}
			c.Prefix = p
		}
	case "peer":
		a, err := netip.ParseAddr(v)
		if err != nil {
			return fmt.Sprintf("%q is not an IP address", v)
		}
		c.Peer = a
	case "run":
		if _, ok := Jobs[v]; !ok {
			return fmt.Sprintf("unknown job %q (known: %s)", v, strings.Join(jobNames(), ", "))
		}
		c.Run = v
	case "after":
		switch v {
		case "shell", "poweroff", "reboot":
			c.After = v
		default:
			return fmt.Sprintf("%q: want shell, poweroff or reboot", v)
		}
	case "profile":
		c.Profile = v
	case "plan":
		c.Plan = v
	case "station":
		if !strings.HasPrefix(v, "http://") && !strings.HasPrefix(v, "https://") {
			return fmt.Sprintf("%q: want the station's report URL, http://ADDR:PORT/api/reports", v)
		}
		c.Station = v
	case "token":
		c.Token = v
	case "insecure_token":
		if v != "1" && v != "0" {
			return fmt.Sprintf("%q: want 1 (send the token over http too) or 0", v)
		}
		c.InsecureToken = v == "1"
	case "ports":
		c.Ports = nil
		for _, p := range strings.Split(v, ",") {
			name, addr, ok := strings.Cut(p, ":")
			pfx, err := netip.ParsePrefix(addr)
			if !ok || err != nil || name == "" || len(name) > 15 || strings.ContainsAny(name, "/ ") {
				c.Ports = nil
				return fmt.Sprintf("%q: want IFACE:ADDR/LEN[,IFACE:ADDR/LEN...] (eth1:198.18.6.2/24)", p)
			}
			c.Ports = append(c.Ports, PortConfig{name, pfx})
		}
	case "fixture":
		if len(v) > 64 || strings.Trim(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != "" {
			return fmt.Sprintf("%q: want up to 64 letters, digits, '.', '_' or '-'", v)
		}
	case "prompt":
		c.Prompt = nil
		for _, w := range strings.Split(v, ",") {
			if (w != "serial" && w != "operator") || slices.Contains(c.Prompt, w) {
				c.Prompt = nil
				return fmt.Sprintf("%q: want operator and/or serial, comma-separated (what the validate job asks at the console)", v)
			}
			c.Prompt = append(c.Prompt, w)
		}
	case "operator":
		// validate reads it from /proc/cmdline itself; checked here so a bad one is said
		// at boot.
		if len(v) > 64 || strings.Trim(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != "" {
			return fmt.Sprintf("%q: want up to 64 letters, digits, '.', '_' or '-'", v)
		}
	case "serial":
		// validate reads it from /proc/cmdline itself (its source: the kernel command
		// line); checked here so a bad one is said at boot.
		if len(v) > 64 || strings.Trim(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != "" {
			return fmt.Sprintf("%q: want up to 64 letters, digits, '.', '_' or '-'", v)
		}
	default:
		return "unknown parameter (known: iface, ip, peer, run, after, profile, plan, station, token, serial, fixture, operator, prompt, ports)"
	}
	return ""
}

// missing is what the job needs and the command line did not give.
func (c *Config) missing() []Problem {
	var probs []Problem
	if c.Run == "demo" || c.Run == "e2e" {
		if !c.Peer.IsValid() {
			probs = append(probs, Problem{"peer", fmt.Sprintf("job %s needs the station's address: linerate.peer=ADDR", c.Run)})
		}
		if c.IP == "" {
			probs = append(probs, Problem{"ip", fmt.Sprintf("job %s needs an address on the port: linerate.ip=ADDR/LEN or linerate.ip=dhcp", c.Run)})
		}
	}
	if c.Run == "validate" {
		if c.Plan == "" {
			probs = append(probs, Problem{"plan", "job validate needs a plan: linerate.plan=NAME (built in) or a file in the image"})
		}
		if c.IP == "" {
			probs = append(probs, Problem{"ip", "job validate needs an address on the port: linerate.ip=ADDR/LEN or linerate.ip=dhcp"})
		}
	}
	return probs
}

func jobNames() []string {
	var out []string
	for k := range Jobs {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
