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
	// Started, when set, is told the port's state as the watch begins and its error
	// counters as first read (the caller's to keep: a run's baseline).
	Started func(state string, counters map[string]uint64)
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

// phyState is a read of a PHY's control and status registers.
type phyState struct{ bmcr, bmsr uint16 }

// phyControlBits are the control register's bits that take a PHY off its link.
// Autonegotiation and forced-speed bits are left out: phylib writes them on its own,
// and some PHYs (QEMU's GEM PHY) clear them as they are written.
const phyControlBits = BMCRLoopback | BMCRIsolate | BMCRPowerDown

// phyChanges are the events between two reads of a PHY's registers, as kind and detail:
// phy-down and phy-up for the link (the status register's link bit latches low, so a
// loss between two reads shows once even if the link is back, and even if the driver
// never dropped the carrier), phy-fault for a remote fault the partner signals, and
// phy-control when loopback, isolate or power-down is set or cleared.
func phyChanges(prev, now phyState) [][2]string {
	var out [][2]string
	regs := fmt.Sprintf(" (BMSR 0x%04x: %s)", now.bmsr, DecodeBMSR(now.bmsr))
	switch up, was := now.bmsr&BMSRLinkStatus != 0, prev.bmsr&BMSRLinkStatus != 0; {
	case was && !up:
		out = append(out, [2]string{"phy-down", "PHY link down" + regs})
	case !was && up:
		out = append(out, [2]string{"phy-up", "PHY link up" + regs})
	}
	if now.bmsr&BMSRRemoteFault != 0 && prev.bmsr&BMSRRemoteFault == 0 {
		out = append(out, [2]string{"phy-fault", "PHY remote fault: the link partner signals a fault" + regs})
	}
	if a, b := prev.bmcr&phyControlBits, now.bmcr&phyControlBits; a != b {
		out = append(out, [2]string{"phy-control", fmt.Sprintf("PHY control %s -> %s (BMCR 0x%04x -> 0x%04x)", controlWords(a), controlWords(b), prev.bmcr, now.bmcr)})
	}
	return out
}

// controlWords names the control bits that take a PHY off its link, or "normal".
func controlWords(v uint16) string {
	var out []string
	for _, b := range []struct {
		bit  uint16
		name string
	}{{BMCRLoopback, "loopback"}, {BMCRIsolate, "isolate"}, {BMCRPowerDown, "power-down"}} {
		if v&b.bit != 0 {
			out = append(out, b.name)
		}
	}
	if len(out) == 0 {
		return "normal"
	}
	return strings.Join(out, "+")
}
