package plan

import "testing"

func TestNormalizeMAC(t *testing.T) {
	for _, in := range []string{"00:0a:35:aa:bb:01", "00:0A:35:AA:BB:01", "00-0a-35-aa-bb-01", "000a35aabb01", "000a.35aa.bb01", "0:a:35:aa:bb:1", " 00:0a:35:aa:bb:01\\n"[:18]} {
		if got, err := NormalizeMAC(in); err != nil || got != "00:0a:35:aa:bb:01" {
			t.Errorf("%q: %q %v", in, got, err)
		}
	}
	for _, in := range []string{"", "00:0a:35:aa:bb", "00:0a:35:aa:bb:01:02", "00:0a:35:aa:bb:1g", "000a35aabb0", "000a35aabb0x", "000a.35aa", "000:a:35:aa:bb:01", "00::0a:35:aa:bb"} {
		if got, err := NormalizeMAC(in); err == nil {
			t.Errorf("%q: %q, want an error", in, got)
		}
	}
}
