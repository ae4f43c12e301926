package station

import (
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zynqnet/linerate/internal/readall"
)

// PortCounters are the error counters of the station's own port (the fixture's cable
// and switch port) over one board's test: what rose between the board's start and its
// report. A fixture that counts errors for every board is the fixture's fault.
type PortCounters struct {
	Name string `json:"name"`
	// Port is the board's port that came through it, in a multi-port report.
	Port string `json:"port,omitempty"`
	// Rose is each counter's rise over the test (only those that rose).
	Rose    map[string]uint64 `json:"rose"`
	Seconds float64           `json:"seconds"`
}

// portCounterNames are the counters read (/sys/class/net/IF/statistics).
var portCounterNames = []string{"rx_errors", "rx_dropped", "rx_crc_errors", "rx_frame_errors", "rx_missed_errors", "rx_fifo_errors", "rx_over_errors", "tx_errors", "tx_dropped", "tx_carrier_errors", "collisions"}

// portSample is a port's counters at one time.
type portSample struct {
	name string
	at   time.Time
	c    map[string]uint64
}

// ports knows the station's own interfaces: which one a request came in by, and their
// counters. sys is where /sys is (tests give a tree of their own).
type ports struct {
	sys string
	mu  sync.Mutex
	// byIP caches the interface of each local address (refreshed when one is unknown).
	byIP map[string]string
}

// portOf is the station's interface the request came in on ("" when it cannot tell: a
// test's in-memory listener, loopback).
func (p *ports) portOf(req *http.Request) string {
	la, ok := req.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return ""
	}
	host, _, err := net.SplitHostPort(la.String())
	if err != nil {
		return ""
	}
	return p.ifaceOf(host)
}

// ifaceOf is the station's interface that has the address ip ("" none, or loopback).
func (p *ports) ifaceOf(ip string) string {
	if ip == "" {
		return ""
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if name, ok := p.byIP[ip]; ok {
		return name
	}
	p.byIP = map[string]string{}
	ifs, _ := net.Interfaces()
	for _, ifi := range ifs {
		addrs, _ := ifi.Addrs()
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok {
				p.byIP[ipn.IP.String()] = ifi.Name
			}
		}
	}
	if name := p.byIP[ip]; name != "lo" {
		return name
	}
	return ""
}

// sample reads a port's counters (nil when it has none to read).
func (p *ports) sample(name string) *portSample {
	if name == "" || strings.ContainsAny(name, "/\x00") || name == "." || name == ".." {
		return nil
	}
	s := &portSample{name: name, at: time.Now(), c: map[string]uint64{}}
	for _, c := range portCounterNames {
		b, err := readall.File(filepath.Join(p.sys, "class/net", name, "statistics", c), readall.MaxSys)
		if err != nil {
			continue
		}
		if v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil {
			s.c[c] = v
		}
	}
	if len(s.c) == 0 {
		return nil
	}
	return s
}

// since is what rose from a to now on the same port.
func (p *ports) since(a *portSample) *PortCounters {
	if a == nil {
		return nil
	}
	b := p.sample(a.name)
	if b == nil {
		return nil
	}
	pc := &PortCounters{Name: a.name, Rose: map[string]uint64{}, Seconds: b.at.Sub(a.at).Seconds()}
	for k, v := range b.c {
		if old, ok := a.c[k]; ok && v > old {
			pc.Rose[k] = v - old
		}
	}
	return pc
}
