package nic

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Watcher watches one port's link: the carrier as the kernel announces it (rtnetlink
// link messages, so a flap shorter than any poll is seen), its speed and duplex, and its
// error counters, read every Interval.
type Watcher struct {
	Iface, API string
	Interval   time.Duration // how often speed, duplex and counters are read (default 1s)
	// Excuse, when set, says whether linerate itself was changing the port at a time
	// (a tune that bounces the link): "" when it was not.
	Excuse func(time.Time) string
	// Started, when set, is told the port's state as the watch begins.
	Started func(state string)
}

// LinkEvent is one thing that happened to a port's link while it was watched.
type LinkEvent struct {
	Time time.Time `json:"time"`
	// Kind is carrier-down, carrier-up, speed, duplex or counter.
	Kind   string `json:"kind"`
	Detail string `json:"detail"`
	// Excused says linerate itself caused it (a tune of the port that bounces the link,
	// say): it is reported, and not held against the port.
	Excused string `json:"excused,omitempty"`
}

// String is the event's line: its time, what happened, and whose it was.
func (e LinkEvent) String() string {
	s := e.Time.Format("15:04:05.000") + " " + e.Detail
	if e.Excused != "" {
		s += " (" + e.Excused + ": not counted)"
	}
	return s
}

// WatchSummary is what a watch saw in all.
type WatchSummary struct {
	Iface string `json:"interface"`
	// Start is the port's state as the watch began: "carrier up, 1000 Mb/s full".
	Start   string        `json:"start"`
	Seconds float64       `json:"seconds"`
	Events  []LinkEvent   `json:"events"`
	Downs   int           `json:"carrier_downs"` // not excused
	Down    time.Duration `json:"-"`
	DownS   float64       `json:"down_s"`
	// Counters are the error counters that rose, by name, with how much.
	Counters map[string]uint64 `json:"counters_rose"`
}

// Faults are the events not excused: what a port's stability is judged on.
func (s *WatchSummary) Faults() []LinkEvent {
	var out []LinkEvent
	for _, e := range s.Events {
		if e.Excused == "" {
			out = append(out, e)
		}
	}
	return out
}

// Text is the summary's lines.
func (s *WatchSummary) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s watched for %.1fs: %d link event(s) of the port, %d carrier loss(es), %.2fs without carrier", s.Iface, s.Seconds, len(s.Faults()), s.Downs, s.DownS)
	if len(s.Counters) > 0 {
		var cs []string
		for k, v := range s.Counters {
			cs = append(cs, fmt.Sprintf("%s +%d", k, v))
		}
		sort.Strings(cs)
		b.WriteString("; error counters rose: " + strings.Join(cs, ", "))
	} else {
		b.WriteString("; no error counter rose")
	}
	return b.String() + "\n"
}

// watchState is what the watch knows of the port now, to tell a change.
type watchState struct {
	carrier       bool
	speed, duplex string
	downSince     time.Time
	counters      map[string]uint64
}

// String is the state in words: "carrier up, 1000 Mb/s full".
func (s watchState) String() string {
	if !s.carrier {
		return "no carrier"
	}
	out := "carrier up"
	if s.speed != "" && s.speed != "-1" {
		out += ", " + s.speed + " Mb/s"
	}
	if s.duplex != "" && s.duplex != "unknown" {
		out += " " + s.duplex
	}
	return out
}
