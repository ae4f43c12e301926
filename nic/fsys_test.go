package nic

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestParseInterrupts(t *testing.T) {
	data := []byte("           CPU0       CPU1       \n" +
		" 27:    1572866          3     GIC-0  54 Level     eth0\n" +
		" 126:    2301447          0  IR-PCI-MSIX-0000:03:00.0    1-edge      enp3s0f0-TxRx-0\n" +
		" 40:          5          6   PCI-MSI 512000-edge      ahci[0000:00:1f.2], eth1\n" +
		"IPI0:          0          0  CPU wakeup interrupts\n" +
		"Err:          0\n")
	got, err := parseInterrupts(data)
	if err != nil {
		t.Fatal(err)
	}
	want := []interruptLine{
		{irq: 27, perCPU: []uint64{1572866, 3}, chip: "GIC-0", names: []string{"54", "Level", "eth0"}},
		{irq: 126, perCPU: []uint64{2301447, 0}, chip: "IR-PCI-MSIX-0000:03:00.0", names: []string{"1-edge", "enp3s0f0-TxRx-0"}},
		{irq: 40, perCPU: []uint64{5, 6}, chip: "PCI-MSI", names: []string{"512000-edge", "ahci[0000:00:1f.2]", "eth1"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseInterrupts =\n%+v\nwant\n%+v", got, want)
	}
}

func TestIRQNameMatches(t *testing.T) {
	for _, tc := range []struct {
		action, iface string
		want          bool
	}{
		{"eth0", "eth0", true},
		{"eth0-rx-0", "eth0", true},
		{"i40e-eth0-TxRx-0", "eth0", true},
		{"eth0:txrx", "eth0", true},
		{"eth01", "eth0", false},
		{"veth0", "eth0", false},
		{"xeth0-", "eth0", false},
	} {
		if got := irqNameMatches(tc.action, tc.iface); got != tc.want {
			t.Errorf("irqNameMatches(%q, %q) = %v", tc.action, tc.iface, got)
		}
	}
}

func TestCPUListAndMask(t *testing.T) {
	for in, want := range map[string][]int{"0-1": {0, 1}, "0,2-3": {0, 2, 3}, "5": {5}, "": nil} {
		got, err := ParseCPUList(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ParseCPUList(%q) = %v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"a", "3-1", "1-", "-1", "0-99999999"} {
		if _, err := ParseCPUList(bad); err == nil {
			t.Errorf("ParseCPUList(%q) accepted", bad)
		}
	}
	for in, want := range map[string][]int{"0": nil, "3": {0, 1}, "00000003": {0, 1}, "00000001,00000100": {8, 32}, "zz": nil} {
		if got := MaskCPUs(in); !reflect.DeepEqual(got, want) {
			t.Errorf("MaskCPUs(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestEthtoolFeaturesGrouping(t *testing.T) {
	raw := []RawFeature{
		{Name: "tx-scatter-gather", HW: true, Wanted: true, Active: true},
		{Name: "tx-checksum-ipv4", HW: false},
		{Name: ""},
		{Name: "tx-checksum-ip-generic", HW: true, Wanted: true, Active: true},
		{Name: "rx-gro", HW: true, Wanted: true, Active: false},
		{Name: "rx-checksum", HW: true, NoChange: true, Active: true},
		{Name: "highdma", HW: false, Active: true},
	}
	var got []string
	for _, f := range EthtoolFeatures(raw) {
		s := f.Name + "=" + onoff(f.On)
		if f.Fixed {
			s += " fixed"
		}
		if f.Requested != nil {
			s += " requested " + onoff(*f.Requested)
		}
		if f.Group != "" {
			s += " in " + f.Group
		}
		got = append(got, s)
	}
	want := []string{
		"rx-checksumming=on fixed",
		"tx-checksumming=on",
		"tx-checksum-ipv4=off fixed in tx-checksumming",
		"tx-checksum-ip-generic=on in tx-checksumming",
		"scatter-gather=on",
		"tcp-segmentation-offload=off",
		"generic-segmentation-offload=off",
		"generic-receive-offload=off requested on",
		"large-receive-offload=off",
		"rx-vlan-offload=off",
		"tx-vlan-offload=off",
		"ntuple-filters=off",
		"receive-hashing=off",
		"highdma=on fixed",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("EthtoolFeatures =\n%q\nwant\n%q", got, want)
	}
	if EthtoolFeatures(nil) != nil {
		t.Error("nil features must stay nil (null in JSON)")
	}
}

func onoff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func TestOrderedJSONRoundTrip(t *testing.T) {
	cs := Counters{{"z", 1}, {"a", 18446744073709551615}, {"m", 0}}
	b, err := json.Marshal(cs)
	if err != nil || string(b) != `{"z":1,"a":18446744073709551615,"m":0}` {
		t.Fatalf("Counters JSON = %s, %v", b, err)
	}
	var back Counters
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, cs) {
		t.Errorf("round trip = %v, %v", back, err)
	}
	req := true
	fs := Features{{Name: "b", On: true}, {Name: "a", Fixed: true, Group: "b", Requested: &req}}
	b, _ = json.Marshal(fs)
	var fb Features
	if err := json.Unmarshal(b, &fb); err != nil || !reflect.DeepEqual(fb, fs) {
		t.Errorf("features round trip = %+v, %v (%s)", fb, err, b)
	}
	for _, bad := range []string{`[1]`, `{"a":-1}`, `{"a":"x"}`, `{"a":1.5}`, `{"a":1`} {
		if err := json.Unmarshal([]byte(bad), &back); err == nil {
			t.Errorf("Counters accepted %s", bad)
		}
	}
}

func FuzzParseInterrupts(f *testing.F) {
	f.Add([]byte("  CPU0 CPU1\n 27: 1 2 GIC-0 54 Level eth0\nErr: 0\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, b []byte) {
		lines, err := parseInterrupts(b)
		if err != nil {
			return
		}
		for _, l := range lines {
			for _, n := range l.names {
				irqNameMatches(n, "eth0")
			}
		}
	})
}

func FuzzCPUList(f *testing.F) {
	f.Add("0-3,5")
	f.Add("ffffffff,00000001")
	f.Fuzz(func(t *testing.T, s string) {
		ParseCPUList(s)
		MaskCPUs(s)
	})
}

// FuzzParseCaptured: a capture file is input from another machine; it may be rejected,
// never crash the reader, and what is accepted must read back through a Reader.
func FuzzParseCaptured(f *testing.F) {
	f.Add([]byte(`{"format":1,"links":[{"name":"eth0","index":2}],"ethtool":{"eth0":{"driver_stats":{"a":1}}}}`))
	f.Add([]byte(`{"format":1,"links":[{"name":"eth0"},{"name":"eth0"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseCaptured(b)
		if err != nil {
			return
		}
		r := &Reader{Root: t.TempDir(), Kernel: NewCapturedKernel(c)}
		r.Read()
	})
}
