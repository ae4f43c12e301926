package board

import "testing"

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
