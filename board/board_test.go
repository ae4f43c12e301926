package board

import (
	"reflect"
	"testing"
)

func TestProfiles(t *testing.T) {
	bs := All()
	if len(bs) < 11 {
		t.Fatalf("%d boards", len(bs))
	}
	seen := map[string]bool{}
	for _, b := range bs {
		if seen[b.Name] {
			t.Errorf("board %s twice", b.Name)
		}
		seen[b.Name] = true
		if b.CPUs == 0 || b.MaxMTU < 1500 || b.LinkMbps == 0 || len(b.Compatible) == 0 || b.GEM.Label == "" {
			t.Errorf("board %s is incomplete: %+v", b.Name, b)
		}
		if (b.SoC == "zynq-7000") == b.Jumbo() {
			t.Errorf("board %s: jumbo %v on %s", b.Name, b.Jumbo(), b.SoC)
		}
	}
}

func TestDetect(t *testing.T) {
	for _, tc := range []struct {
		compat []string
		want   string
	}{
		{[]string{"xlnx,zynq-zc702", "xlnx,zynq-7000"}, "zc702"},
		{[]string{"xlnx,zynqmp-zcu102-rev1.0", "xlnx,zynqmp-zcu102", "xlnx,zynqmp"}, "zcu102"},
		{[]string{"acme,custom-board", "xlnx,zynq-7000"}, "generic-zynq7000"},
		{[]string{"xlnx,zynqmp-sk-kv260-revB", "xlnx,zynqmp"}, "kv260"},
	} {
		if b := Detect(tc.compat); b == nil || b.Name != tc.want {
			t.Errorf("Detect(%v) = %v, want %s", tc.compat, b, tc.want)
		}
	}
	if b := Detect([]string{"raspberrypi,4-model-b"}); b != nil {
		t.Errorf("non-Zynq detected as %s", b.Name)
	}
	if _, err := Lookup("zc999"); err == nil {
		t.Error("Lookup of an unknown board succeeded")
	}
}

// The table is parsed once a process; what All, Lookup and Detect hand out is the
// caller's own: changing every field of it, down through its pointers and slices,
// leaves the next caller's copy as the file says.
func TestTableCopies(t *testing.T) {
	want, err := load()
	if err != nil {
		t.Fatal(err)
	}
	scribble := func(b *Board) {
		b.Name, b.Model, b.SoC, b.CPUs, b.LinkMbps, b.MaxMTU = "x", "x", "x", -1, -1, -1
		for i := range b.Compatible {
			b.Compatible[i] = "x"
		}
		b.GEM.Label, b.GEM.Address, b.GEM.PHYMode, b.GEM.PHYDriver = "x", "x", "x", "x"
		if b.GEM.PHYAddress != nil {
			*b.GEM.PHYAddress = -1
		}
		if b.EEPROM != nil {
			*b.EEPROM = EEPROM{Node: "x", MAC: -1, Serial: -1, SerialLen: -1}
		}
	}
	bs := All()
	for i := range bs {
		scribble(&bs[i])
	}
	b, err := Lookup("zcu102")
	if err != nil || b.EEPROM == nil || b.GEM.PHYAddress == nil {
		t.Fatalf("Lookup(zcu102) = %+v, %v: want its EEPROM and PHY address", b, err)
	}
	scribble(b)
	scribble(Detect([]string{"xlnx,zynq-zc702"}))
	if got := All(); !reflect.DeepEqual(got, want) {
		t.Errorf("after callers changed their copies, All() = %+v\nwant %+v", got, want)
	}
}
