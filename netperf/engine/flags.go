package engine

import (
	"errors"
	"net/netip"
	"strconv"
	"strings"
)

// Flag values for the engine's command lines: each parses as the engine's parser does,
// and its error says what it takes (the command line names the flag and the value).

// CPUsValue is a --cpus flag: a count of CPUs (1, 2, ...) or all (-1); 0 is one thread,
// not pinned.
type CPUsValue struct{ P *int }

func (v CPUsValue) String() string {
	if v.P == nil {
		return ""
	}
	switch *v.P {
	case 0:
		return ""
	case -1:
		return "all"
	}
	return strconv.Itoa(*v.P)
}

func (v CPUsValue) Set(s string) error {
	if strings.EqualFold(s, "all") {
		*v.P = -1
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 1024 {
		return errors.New("want a count of CPUs (1, 2, ...) or all")
	}
	*v.P = n
	return nil
}

// IPv4Value is an IPv4 address flag.
type IPv4Value struct{ P *netip.Addr }

func (v IPv4Value) String() string {
	if v.P == nil || !v.P.IsValid() {
		return ""
	}
	return v.P.String()
}

func (v IPv4Value) Set(s string) error {
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is4() {
		return errors.New("want an IPv4 address")
	}
	*v.P = a
	return nil
}

// StreamValue is a stream id flag, 0..65535.
type StreamValue struct{ P *uint16 }

func (v StreamValue) String() string {
	if v.P == nil {
		return ""
	}
	return strconv.Itoa(int(*v.P))
}

func (v StreamValue) Set(s string) error {
	n, err := strconv.ParseUint(s, 10, 16)
	if err != nil {
		return errors.New("want 0..65535")
	}
	*v.P = uint16(n)
	return nil
}

// Realtime is a reflector's --realtime: off (the zero value), on (real-time threads and
// locked memory, rawsock.Realtime), or a CPU number: on, with the one reflecting thread
// pinned to that CPU and busy polling its ring (a CPU nothing else needs).
type Realtime struct {
	On  bool
	CPU int // with On: the CPU kept for the thread, or -1 for none
}

// Kept says the reflector has a CPU of its own.
func (r Realtime) Kept() bool { return r.On && r.CPU >= 0 }

func (r Realtime) String() string {
	switch {
	case r.Kept():
		return strconv.Itoa(r.CPU)
	case r.On:
		return "on"
	}
	return "off"
}

// ParseRealtime reads off, on or a CPU number.
func ParseRealtime(s string) (Realtime, error) {
	switch strings.ToLower(s) {
	case "off":
		return Realtime{}, nil
	case "on":
		return Realtime{On: true, CPU: -1}, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 1023 {
		return Realtime{}, errors.New("want on, off or a CPU number (0, 1, ...)")
	}
	return Realtime{On: true, CPU: n}, nil
}

// RealtimeValue is a --realtime flag.
type RealtimeValue struct{ P *Realtime }

func (v RealtimeValue) String() string {
	if v.P == nil || !v.P.On {
		return ""
	}
	return v.P.String()
}

func (v RealtimeValue) Set(s string) (err error) {
	*v.P, err = ParseRealtime(s)
	return err
}
