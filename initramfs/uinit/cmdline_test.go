package main

import (
	"strings"
	"testing"
)

func TestParseCmdline(t *testing.T) {
	c, probs := ParseCmdline(`console=ttyPS0,115200 linerate.ip=198.18.5.2/24 linerate.peer=198.18.5.1 linerate.run=demo linerate.after=reboot linerate.profile="zc702"` + "\n")
	if len(probs) != 0 || c.Run != "demo" || c.After != "reboot" || c.Prefix.String() != "198.18.5.2/24" || c.Peer.String() != "198.18.5.1" || c.Profile != "zc702" {
		t.Errorf("cfg %+v, problems %v", c, probs)
	}
	c, probs = ParseCmdline("linerate.run=validate linerate.ip=dhcp linerate.plan=qemu-zc702 linerate.station=http://198.18.5.1:8080/api/reports linerate.token=0123456789abcdef linerate.insecure_token=1")
	if len(probs) != 0 || c.Run != "validate" || c.Plan != "qemu-zc702" || c.Station != "http://198.18.5.1:8080/api/reports" || c.Token != "0123456789abcdef" || !c.InsecureToken {
		t.Errorf("validate: %+v %v", c, probs)
	}
	if c, probs = ParseCmdline("linerate.serial=ZC702-0042_b.1 linerate.fixture=bench-3 linerate.prompt=operator,serial linerate.operator=ann linerate.ports=eth1:198.18.6.2/24,eth2:198.18.7.2/24"); len(probs) != 0 || strings.Join(c.Prompt, ",") != "operator,serial" ||
		len(c.Ports) != 2 || c.Ports[1].Iface != "eth2" || c.Ports[1].Prefix.String() != "198.18.7.2/24" {
		t.Errorf("a serial: %+v %v", c, probs)
	}
	c, probs = ParseCmdline("quiet")
	if len(probs) != 0 || c.Run != "shell" || c.After != "shell" {
		t.Errorf("defaults: %+v %v", c, probs)
	}
	for _, tc := range []struct{ cmdline, want string }{
		{"linerate.run=demo linerate.ip=198.18.5.2/24", "linerate.peer: job demo needs the station's address"},
		{"linerate.run=e2e linerate.peer=198.18.5.1", "linerate.ip: job e2e needs an address"},
		{"linerate.ip=10.0.0.5", `linerate.ip: "10.0.0.5" is neither dhcp nor ADDR/LEN`},
		{"linerate.run=fly", `linerate.run: unknown job "fly"`},
		{"linerate.insecure_token=yes", `linerate.insecure_token: "yes": want 1`},
		{"linerate.after=explode", `linerate.after: "explode": want shell, poweroff or reboot`},
		{"linerate.peer=", "linerate.peer: has no value"},
		{"linerate.colour=blue", "linerate.colour: unknown parameter"},
		{"linerate.serial=a/b", `linerate.serial: "a/b": want up to 64 letters`},
		{"linerate.fixture=a;b", `linerate.fixture: "a;b": want up to 64 letters`},
		{"linerate.prompt=mac", `linerate.prompt: "mac": want operator and/or serial`},
		{"linerate.prompt=serial,serial", `linerate.prompt: "serial,serial": want operator and/or serial`},
		{"linerate.operator=a;b", `linerate.operator: "a;b": want up to 64 letters`},
		{"linerate.ports=eth1", `linerate.ports: "eth1": want IFACE:ADDR/LEN`},
		{"linerate.ports=eth1:10.0.0.1", `linerate.ports: "eth1:10.0.0.1"`},
		{`linerate.serial="x y"`, `linerate.serial: "x y"`},
		{"linerate.run=validate linerate.ip=dhcp", "linerate.plan: job validate needs a plan"},
		{"linerate.run=validate linerate.plan=zc702", "linerate.ip: job validate needs an address"},
		{"linerate.station=198.18.5.1", "linerate.station: \"198.18.5.1\": want the station's report URL"},
	} {
		c, probs := ParseCmdline(tc.cmdline)
		var msgs []string
		for _, p := range probs {
			msgs = append(msgs, p.String())
		}
		if !strings.Contains(strings.Join(msgs, "\n"), tc.want) || c.Run != "shell" || c.After != "shell" {
			t.Errorf("%q: run %s, problems %q; want %q and the shell", tc.cmdline, c.Run, msgs, tc.want)
		}
	}
}

func FuzzParseCmdline(f *testing.F) {
	f.Add(`linerate.ip=1.2.3.4/24 linerate.run="demo" linerate.peer=::1`)
	f.Fuzz(func(t *testing.T, s string) {
		c, probs := ParseCmdline(s)
		if len(probs) > 0 && (c.Run != "shell" || c.After != "shell") {
			t.Fatalf("problems %v but job %s", probs, c.Run)
		}
	})
}
