package station

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/zynqnet/linerate/plan"
)

// LiveEvent is a board's live event (plan.LiveEvent).
type LiveEvent = plan.LiveEvent

// Live is a board in test, as /api/live and the page show it.
type Live struct {
	LiveEvent
	Started time.Time `json:"started"` // the station's clock at the board's first event
	Updated time.Time `json:"updated"`
	Elapsed float64   `json:"elapsed_s"`
	// State is "booting" (the station netboots it: from its DHCP request until its
	// tester image's first event), "testing", or "lost" once the plan's budget (and
	// lostGrace) has passed without its report.
	State  string `json:"state"`
	Remote string `json:"remote"`
	// Booted is when the board asked the station's DHCP for an address (netboot).
	Booted  *time.Time `json:"booted,omitempty"`
	booting bool
	// source is who posted it (the write token's name, or the address without a token),
	// for the bound per source.
	source string
	// samples are the station's ports' counters at the board's first event: the port it
	// came in by, and the one of each of its ports' stations.
	samples map[string]*portSample
}

// lostGrace is how long past its budget a board may take to deliver its report before
// it is lost: a board that reached the station with its live events makes its first
// delivery attempt as its run ends.
var lostGrace = 15 * time.Second

// maxLive bounds the boards in test a station keeps, maxLivePerSource those of one
// source (a write token, or an address without one): a poster of fake starts pushes out
// only its own, and when the list is full the biggest source gives up its board seen
// longest ago, so a real board's few events are never pushed out by a flood.
const (
	maxLive          = 1024
	maxLivePerSource = 64
)

// liveBoards are the boards in test of this station.
type liveBoards struct {
	mu     sync.Mutex
	boards map[string]*Live
}

// checkLive is the door for a live event: the same rules as a report's.
func checkLive(e *LiveEvent) error {
	if !SafeID(e.ID) {
		return fmt.Errorf("id: want 1..%d of A-Z a-z 0-9 . _ -", MaxIDLen)
	}
	for name, v := range map[string]string{"board": e.Board, "serial": e.Serial, "mac": e.MAC, "fixture": e.Fixture, "plan": e.Plan, "step": e.Step} {
		if len(v) > MaxText || !plain(v) {
			return fmt.Errorf("%s: want at most %d characters without control characters", name, MaxText)
		}
	}
	if e.Event != "start" && e.Event != "step" {
		return fmt.Errorf("event %q: want start or step", e.Event)
	}
	if math.IsNaN(e.Budget) || e.Budget < 0 || e.Budget > 86400 {
		return fmt.Errorf("budget_s %g: want 0..86400", e.Budget)
	}
	if e.Steps < 0 || e.Steps > MaxSteps || e.Index < 0 || e.Index > e.Steps {
		return fmt.Errorf("step %d of %d: want 0..%d", e.Index, e.Steps, MaxSteps)
	}
	if len(e.Ports) > plan.MaxPorts {
		return fmt.Errorf("%d ports: at most %d", len(e.Ports), plan.MaxPorts)
	}
	for _, p := range e.Ports {
		for name, v := range map[string]string{"port": p.Interface, "port mac": p.MAC, "port station": p.Station} {
			if len(v) > MaxText || !plain(v) {
				return fmt.Errorf("%s: want at most %d characters without control characters", name, MaxText)
			}
		}
	}
	return nil
}

// note records an event; sample reads the station's ports' counters at the board's
// first event.
func (l *liveBoards) note(e LiveEvent, source, remote string, now time.Time, sample func() map[string]*portSample) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.boards == nil {
		l.boards = map[string]*Live{}
	}
	b := l.boards[e.ID]
	if b == nil {
		l.makeRoom(source)
		b = &Live{Started: now, samples: sample(), source: source}
		// The board the station netbooted: its boot's entry ends here.
		if mac, err := plan.NormalizeMAC(e.MAC); err == nil {
			if nb := l.boards[bootID(mac)]; nb != nil {
				b.Booted = nb.Booted
				delete(l.boards, bootID(mac))
			}
		}
		l.boards[e.ID] = b
	}
	b.LiveEvent, b.Updated, b.Remote = e, now, remote
}

// bootBudget is how long a netbooting board may take from its DHCP request to its
// tester image's first event before it is lost.
const bootBudget = 5 * time.Minute

func bootID(mac string) string { return "netboot-" + strings.ReplaceAll(mac, ":", "") }

// boot notes a netbooting board's progress (its lease, a file fetched); fixture and
// planName are kept from its first note when empty.
func (l *liveBoards) boot(mac, fixture, planName, step string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.boards == nil {
		l.boards = map[string]*Live{}
	}
	id := bootID(mac)
	b := l.boards[id]
	if b == nil {
		l.makeRoom("netboot")
		at := now
		b = &Live{Started: now, Booted: &at, booting: true, source: "netboot"}
		b.LiveEvent = LiveEvent{ID: id, MAC: mac, Fixture: fixture, Plan: planName, Event: "boot", Budget: bootBudget.Seconds()}
		l.boards[id] = b
	}
	b.Step, b.Updated = step, now
}

// makeRoom makes room for a new board of source: its own board seen longest ago goes
// when it has maxLivePerSource, else, when the list is full, the biggest source's.
func (l *liveBoards) makeRoom(source string) {
	per := map[string]int{}
	for _, b := range l.boards {
		per[b.source]++
	}
	if per[source] < maxLivePerSource && len(l.boards) < maxLive {
		return
	}
	victim := source
	if per[source] < maxLivePerSource {
		for src, n := range per {
			if n > per[victim] || n == per[victim] && src < victim {
				victim = src
			}
		}
	}
	var oldest string
	for id, b := range l.boards {
		if b.source == victim && (oldest == "" || b.Updated.Before(l.boards[oldest].Updated)) {
			oldest = id
		}
	}
	delete(l.boards, oldest)
}

// done takes a board out of the list when its report comes, and gives its ports' first
// samples (nil when it posted no start).
func (l *liveBoards) done(id string) map[string]*portSample {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.boards[id]
	if b == nil {
		return nil
	}
	delete(l.boards, id)
	return b.samples
}

// list is the boards in test now, the longest running first; lost ones stay listed
// for a day.
func (l *liveBoards) list(now time.Time) []Live {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := []Live{}
	for id, b := range l.boards {
		deadline := b.Started.Add(time.Duration(b.Budget*float64(time.Second)) + lostGrace)
		if now.Sub(deadline) > 24*time.Hour {
			delete(l.boards, id)
			continue
		}
		v := *b
		v.Elapsed = now.Sub(b.Started).Seconds()
		v.State = "testing"
		if b.booting {
			v.State = "booting"
		}
		if now.After(deadline) {
			v.State = "lost"
		}
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Started.Equal(out[j].Started) {
			return out[i].Started.Before(out[j].Started)
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// MaxLiveBytes bounds a live event's body.
const MaxLiveBytes = 16 << 10

// postLive takes a board's live event.
func (s *Server) postLive(w http.ResponseWriter, req *http.Request) {
	who, ok := s.poster(w, req)
	if !ok {
		return
	}
	var e LiveEvent
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, MaxLiveBytes))
	if err == nil {
		err = strictJSON(body)
	}
	if err != nil {
		http.Error(w, "not a live event: "+err.Error(), http.StatusBadRequest)
		return
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		http.Error(w, "not a live event: "+err.Error(), http.StatusBadRequest)
		return
	}
	if err := checkLive(&e); err != nil {
		http.Error(w, "bad live event: "+err.Error(), http.StatusUnprocessableEntity)
		return
	}
	port := s.ports.portOf(req)
	if e.Fixture == "" {
		e.Fixture = port
	}
	s.live.note(e, s.sourceOf(req), who, time.Now(), func() map[string]*portSample {
		out := map[string]*portSample{}
		names := []string{port}
		for _, p := range e.Ports {
			names = append(names, s.ports.ifaceOf(p.Station))
		}
		for _, n := range names {
			if smp := s.ports.sample(n); smp != nil {
				out[n] = smp
			}
		}
		return out
	})
	w.WriteHeader(http.StatusNoContent)
}

// sourceOf is who posts, for the live list's bound: the write token's name, else the
// address (without its port: a flood comes from many ports of one host).
func (s *Server) sourceOf(req *http.Request) string {
	if s.write != nil {
		if name := s.write.Who(req); name != "" {
			return "token " + name
		}
	}
	host, _, err := net.SplitHostPort(req.RemoteAddr)
	if err != nil {
		host = req.RemoteAddr
	}
	return "address " + host
}

func (s *Server) getLive(w http.ResponseWriter, req *http.Request) {
	writeJSON(w, s.live.list(time.Now()))
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}
