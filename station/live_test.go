package station

import (
	"fmt"
	"net/http/httptest"
	"testing"
	"time"
)

// TestLiveFloodKeepsRealBoards: 1,100 fake starts from one poster, then 20 more posters
// of 60 each, do not push a real board (one start, long ago) out of the boards in test,
// so it can still be shown lost; each source keeps at most maxLivePerSource, the list
// at most maxLive.
func TestLiveFloodKeepsRealBoards(t *testing.T) {
	var l liveBoards
	none := func() map[string]*portSample { return nil }
	t0 := time.Now().Add(-time.Hour)
	l.note(LiveEvent{ID: "real-1", Serial: "REAL", Event: "start", Budget: 60}, "token line1", "10.0.0.9:4000", t0, none)
	for i := range 1100 {
		l.note(LiveEvent{ID: fmt.Sprintf("fake-%d", i), Event: "start", Budget: 600}, "address 10.9.9.9", "10.9.9.9:1", t0.Add(time.Duration(i+1)*time.Second), none)
	}
	for p := range 20 {
		for i := range 60 {
			l.note(LiveEvent{ID: fmt.Sprintf("p%d-%d", p, i), Event: "start", Budget: 600}, fmt.Sprintf("address 10.8.0.%d", p), "x", t0.Add(time.Duration(2000+p*60+i)*time.Second), none)
		}
	}
	per := map[string]int{}
	for _, b := range l.boards {
		per[b.source]++
	}
	if len(l.boards) > maxLive || per["address 10.9.9.9"] > maxLivePerSource || per["address 10.8.0.3"] < 45 {
		t.Errorf("%d boards, %d from the flooder, %d from a poster of 60 (the full list takes from the biggest source)", len(l.boards), per["address 10.9.9.9"], per["address 10.8.0.3"])
	}
	var real *Live
	for _, b := range l.list(time.Now()) {
		if b.ID == "real-1" {
			real = &b
		}
	}
	if real == nil || real.State != "lost" {
		t.Fatalf("the real board was pushed out of the boards in test (or not lost): %+v", real)
	}
	// The source: the write token's name, else the address without its port.
	s := &Server{}
	req := httptest.NewRequest("POST", "/api/live", nil)
	req.RemoteAddr = "10.1.2.3:5555"
	if got := s.sourceOf(req); got != "address 10.1.2.3" {
		t.Errorf("source %q", got)
	}
}
