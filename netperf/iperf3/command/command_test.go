package command

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zynqnet/linerate/internal/badinput"
)

// TestParseAsGetopt: the command line is read as iperf3's getopt_long reads it.
func TestParseAsGetopt(t *testing.T) {
	cases := []struct {
		args  string
		check func(o *options) bool
	}{
		{"-c h -t1", func(o *options) bool { return o.host == "h" && o.timeSecs == 1 }},
		{"-c h -uR", func(o *options) bool { return o.udp && o.reverse }},
		{"-ch -uRt2", func(o *options) bool { return o.host == "h" && o.udp && o.reverse && o.timeSecs == 2 }},
		{"-c h -b10M -l1400", func(o *options) bool { return o.bitrate == "10M" && o.length == "1400" }},
		{"--client=h --time=2 --parallel 3", func(o *options) bool { return o.host == "h" && o.timeSecs == 2 && o.parallel == 3 }},
		{"-c h --bandwidth 5M --len 100", func(o *options) bool { return o.bitrate == "5M" && o.length == "100" }},
		{"-c h --timestamps", func(o *options) bool { return o.timestampsSet && o.timestamps == "" }},
		{"-c h --timestamps=%T", func(o *options) bool { return o.timestampsSet && o.timestamps == "%T" }},
		{"-c h -d", func(o *options) bool { return o.verbose }},
		{"-c h --debug=2", func(o *options) bool { return o.verbose && o.debug == "2" }},
		{"-s -1D", func(o *options) bool { return o.server && o.oneOff && o.daemon }},
		{"-s -p5202 -B 10.0.0.1%eth0", func(o *options) bool { return o.port == 5202 && o.bind == "10.0.0.1%eth0" }},
		{"-c h -4 -fm -i 0.5 -O 2 -Z -N -w 256K -M 1400", func(o *options) bool {
			return o.v4 && o.format == "m" && o.interval == 0.5 && o.omit == 2 && o.zeroCopy && o.noDelay && o.window == "256K" && o.mss == 1400
		}},
		{"-c h -S 0x20 --cport 40000 -A 0,1 -C cubic -T lab --extra-data x", func(o *options) bool {
			return o.tos == "0x20" && o.cport == 40000 && o.affinity == "0,1" && o.congestion == "cubic" && o.title == "lab" && o.extraData == "x"
		}},
		{"-c h -- ", func(o *options) bool { return o.host == "h" }},
		{"-c h -F /etc/hostname -t 3", func(o *options) bool { return o.file == "/etc/hostname" && o.timeSeen }},
	}
	for _, c := range cases {
		o, err := parse(strings.Fields(c.args))
		if err == nil {
			err = o.check()
		}
		if err != nil || !c.check(o) {
			t.Errorf("%q: %+v, %v", c.args, o, err)
		}
	}
	bad := []struct{ args, want string }{
		{"-c h -x", "unrecognized option '-x'"},
		{"-c h --foo", "unrecognized option '--foo'"},
		{"-c h -t", "option '-t' requires an argument"},
		{"-c h extra", `unexpected argument "extra"`},
		{"-c h --sctp", "--sctp: not supported: linerate's iperf3 speaks TCP and UDP only"},
		{"-c h -L 5", "-L/--flowlabel: not supported"},
		{"-c h --username u", "--username and --rsa-public-key-path go together"},
		{"-c h -4 -6", "-4 and -6: give one"},
		{"-s -c h", "cannot be both server and client"},
		{"-c h -fx", `-f "x": want one of k m g t K M G T`},
		{"-c h -t x", "-t"},
		{"-c h -P 0", "-P 0: want 1..128"},
	}
	for _, c := range bad {
		o, err := parse(strings.Fields(c.args))
		if err == nil {
			err = o.check()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || !badinput.Is(err) {
			t.Errorf("%q: %v, want a usage error with %q", c.args, err, c.want)
		}
	}
}

func TestTOSAndDSCP(t *testing.T) {
	for _, c := range []struct {
		tos, dscp string
		want      int
	}{{"52", "", 52}, {"064", "", 52}, {"0x34", "", 52}, {"", "EF", 184}, {"", "46", 184}, {"", "af41", 136}, {"", "CS1", 32}} {
		if got, err := tosValue(c.tos, c.dscp); err != nil || got != c.want {
			t.Errorf("-S %q --dscp %q: %d %v, want %d", c.tos, c.dscp, got, err, c.want)
		}
	}
	for _, c := range [][2]string{{"256", ""}, {"-1", ""}, {"x", ""}, {"", "64"}, {"", "XX"}} {
		if _, err := tosValue(c[0], c[1]); err == nil {
			t.Errorf("-S %q --dscp %q accepted", c[0], c[1])
		}
	}
}

func TestStrftime(t *testing.T) {
	tm := time.Date(2026, 11, 30, 8, 5, 9, 0, time.UTC)
	for f, want := range map[string]string{"%c ": "Mon Nov 30 08:05:09 2026 ", "%T": "08:05:09", "%F %H:%M": "2026-11-30 08:05", "%s": "1796025909", "100%%": "100%", "%j %e": "334 30"} {
		if got := strftime(f, tm); got != want {
			t.Errorf("%q: %q, want %q", f, got, want)
		}
	}
}

func TestHostDevAndAffinity(t *testing.T) {
	if h, d := hostDev("10.0.0.2%eth1"); h != "10.0.0.2" || d != "eth1" {
		t.Errorf("host%%dev: %q %q", h, d)
	}
	if h, d := hostDev("fe80::1"); h != "fe80::1" || d != "" {
		t.Errorf("IPv6 without dev: %q %q", h, d)
	}
	if l, s, has, err := affinityValue("2,3"); l != 2 || s != 3 || !has || err != nil {
		t.Errorf("-A 2,3: %d %d %v %v", l, s, has, err)
	}
	if l, _, has, err := affinityValue("1"); l != 1 || has || err != nil {
		t.Errorf("-A 1: %d %v %v", l, has, err)
	}
	if _, _, _, err := affinityValue("a,b"); err == nil || !errors.Is(err, err) {
		t.Errorf("-A a,b accepted")
	}
}
