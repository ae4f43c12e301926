package nic

import (
	"encoding/json"
	"testing"
)

// Every name in ErrorCounterNames is a LinkStats field by its JSON (sysfs) name, and
// ErrorCounters reads that field.
func TestErrorCounters(t *testing.T) {
	var s LinkStats
	var asMap map[string]uint64
	b, _ := json.Marshal(s)
	json.Unmarshal(b, &asMap)
	for i, n := range ErrorCounterNames {
		if _, ok := asMap[n]; !ok {
			t.Fatalf("%s is not a LinkStats field", n)
		}
		asMap[n] = uint64(i + 1)
	}
	b, _ = json.Marshal(asMap)
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	got := s.ErrorCounters()
	if len(got) != len(ErrorCounterNames) {
		t.Fatalf("%d counters, want %d", len(got), len(ErrorCounterNames))
	}
	for i, n := range ErrorCounterNames {
		if got[n] != uint64(i+1) {
			t.Errorf("%s = %d, want %d", n, got[n], i+1)
		}
	}
}
