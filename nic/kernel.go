package nic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Kernel answers what only the kernel can say about interfaces: rtnetlink links and
// ethtool queries. Live implementations ask the running kernel (see OpenKernel); a
// CapturedKernel replays answers saved in a file, which is how fixtures and offline
// diagnosis of a captured tree work.
type Kernel interface {
	// Links lists every interface (rtnetlink RTM_GETLINK dump).
	Links() ([]LinkAnswer, error)
	// Ethtool asks every ethtool question linerate needs about one interface. Parts the
	// driver does not support are nil with a reason in EthtoolAnswer.Unsupported; the
	// error is for failures that leave nothing to report.
	Ethtool(name string) (*EthtoolAnswer, error)
	// API says how ethtool is spoken: "netlink", "ioctl" or "captured".
	API() string
	Close() error
}

// LinkGetter is a Kernel that answers for one link with a request of its own (the
// live kernel), where Links lists them all.
type LinkGetter interface {
	Link(name string) (LinkAnswer, error)
}

// LinkOf is iface's link: k's answer for it alone where k is a LinkGetter, else found
// in k.Links (a captured kernel, a recording one). An interface not there is a
// NotFoundError naming those there are.
func LinkOf(k Kernel, iface string) (LinkAnswer, error) {
	if g, ok := k.(LinkGetter); ok {
		return g.Link(iface)
	}
	return linkIn(k, iface)
}

// linkIn finds iface in k.Links.
func linkIn(k Kernel, iface string) (LinkAnswer, error) {
	links, err := k.Links()
	if err != nil {
		return LinkAnswer{}, err
	}
	var have []string
	for _, l := range links {
		if l.Name == iface {
			return l, nil
		}
		have = append(have, l.Name)
	}
	return LinkAnswer{}, &NotFoundError{Name: iface, Have: have}
}

// LinkAnswer is the rtnetlink view of one interface.
type LinkAnswer struct {
	Name        string    `json:"name"`
	Index       int       `json:"index"`
	Kind        string    `json:"kind"`
	MAC         string    `json:"mac"`
	PermMAC     string    `json:"perm_mac,omitempty"`
	MTU         int       `json:"mtu"`
	MinMTU      *int      `json:"min_mtu,omitempty"`
	MaxMTU      *int      `json:"max_mtu,omitempty"`
	RawFlags    uint32    `json:"flags"`
	Promiscuity int       `json:"promiscuity"`
	Operstate   string    `json:"operstate"`
	NumRxQueues int       `json:"num_rx_queues"`
	NumTxQueues int       `json:"num_tx_queues"`
	Stats       LinkStats `json:"stats64"`
}

// EthtoolAnswer is everything ethtool says about one interface.
type EthtoolAnswer struct {
	Driver      *Driver           `json:"driver"`
	LinkModes   *LinkModes        `json:"link_modes"`
	Channels    *Channels         `json:"channels"`
	Rings       *Rings            `json:"rings"`
	Coalesce    Coalesce          `json:"coalesce"`
	Pause       *Pause            `json:"pause"`
	Features    []RawFeature      `json:"features"`
	DriverStats Counters          `json:"driver_stats"`
	PermMAC     string            `json:"perm_mac,omitempty"`
	Unsupported map[string]string `json:"unsupported,omitempty"`
}

// LinkModesReader is a Kernel that reads a port's link modes alone: one ethtool request
// where Ethtool asks every question (a tenth of a second on an emulated Cortex-A9), for
// a wait on the link's settings.
type LinkModesReader interface {
	LinkModes(iface string) (*LinkModes, error)
}

// DriverStatsReader is a Kernel that reads a port's driver counters (ethtool -S) alone,
// where Ethtool asks every question: an interval's start (SampleCounters).
type DriverStatsReader interface {
	DriverStats(iface string) (Counters, error)
}

// readDriverStats reads iface's driver counters through k: alone where k can, else
// from its Ethtool answer (nil where the driver has none).
func readDriverStats(k Kernel, iface string) (Counters, error) {
	if r, ok := k.(DriverStatsReader); ok {
		return r.DriverStats(iface)
	}
	et, err := k.Ethtool(iface)
	if err != nil {
		return nil, err
	}
	return et.DriverStats, nil
}

// CarrierWaiter is a Kernel told when a port's carrier comes (rtnetlink's link
// notifications), where a wait on the carrier would otherwise ask for every link again
// and again (two rtnetlink dumps a question) and see the carrier a polling interval late.
type CarrierWaiter interface {
	// WaitCarrier returns once iface has carrier (IFF_LOWER_UP), at once where it has it;
	// ErrNoCarrier (wrapped, naming the port) where timeout passes first; ctx's error
	// where it ends first.
	WaitCarrier(ctx context.Context, iface string, timeout time.Duration) error
}

// ErrNoCarrier is a wait for a port's carrier that ran out.
var ErrNoCarrier = errors.New("no carrier")

// ReadLinkModes reads iface's link modes through k: alone where k can (LinkModesReader),
// else from its Ethtool answer. A driver without them is an error naming the port.
func ReadLinkModes(k Kernel, iface string) (*LinkModes, error) {
	if r, ok := k.(LinkModesReader); ok {
		return r.LinkModes(iface)
	}
	et, err := k.Ethtool(iface)
	if err != nil {
		return nil, err
	}
	if et.LinkModes == nil {
		return nil, fmt.Errorf("%s: no link settings (%s)", iface, et.Unsupported["link_modes"])
	}
	return et.LinkModes, nil
}

// LinkModes is ethtool's link settings: ETHTOOL_MSG_LINKMODES_GET over netlink,
// ETHTOOL_GLINKSETTINGS over ioctl.
type LinkModes struct {
	// SpeedMbps is 0 and Duplex "" when unknown (SPEED_UNKNOWN, DUPLEX_UNKNOWN).
	SpeedMbps  int      `json:"speed_mbps"`
	Duplex     string   `json:"duplex"`
	Autoneg    bool     `json:"autoneg"`
	Port       string   `json:"port,omitempty"`
	Supported  []string `json:"supported"`
	Advertised []string `json:"advertised"`
	Partner    []string `json:"partner"`
}

// RawFeature is one netdev feature bit as the kernel reports it (ETHTOOL_MSG_FEATURES_GET
// or ETHTOOL_GFEATURES), in bit order.
type RawFeature struct {
	Name     string `json:"name"`
	HW       bool   `json:"hw"`
	Wanted   bool   `json:"wanted"`
	Active   bool   `json:"active"`
	NoChange bool   `json:"nochange"`
}

// Captured is the file format of saved kernel answers: CapturedFile under a root.
type Captured struct {
	Format  int                       `json:"format"`
	API     string                    `json:"api"`
	Links   []LinkAnswer              `json:"links"`
	Ethtool map[string]*EthtoolAnswer `json:"ethtool"`
}

// CapturedFormat is the version of the Captured file this build writes and reads.
const CapturedFormat = 1

// CapturedFile is where, under a root, the kernel's answers are saved.
const CapturedFile = "linerate/kernel.json"

// CapturedKernel replays kernel answers from a Captured file.
type CapturedKernel struct {
	c *Captured
}

// InputError is captured data that cannot be used: corrupt, truncated, or of another
// format version. It names the file.
type InputError struct {
	Path string
	Err  error
}

func (e *InputError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// BadInput marks it as the user's input to fix (internal/badinput).
func (e *InputError) BadInput() bool { return true }

// OpenCaptured reads root/linerate/kernel.json.
func OpenCaptured(root string) (*CapturedKernel, error) {
	p := filepath.Join(root, CapturedFile)
	b, err := os.ReadFile(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, &MissingFileError{Root: root, Path: CapturedFile, Why: "the kernel's rtnetlink and ethtool answers; 'linerate snapshot' on the board writes them"}
		}
		return nil, fmt.Errorf("captured tree %s: %w", root, err)
	}
	c, err := ParseCaptured(b)
	if err != nil {
		return nil, &InputError{Path: p, Err: err}
	}
	return &CapturedKernel{c: c}, nil
}

// ParseCaptured decodes and checks a Captured file.
func ParseCaptured(b []byte) (*Captured, error) {
	var c Captured
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("not a valid capture: %w", err)
	}
	if c.Format != CapturedFormat {
		return nil, fmt.Errorf("capture format %d, this linerate reads format %d: read it with the linerate release that wrote it", c.Format, CapturedFormat)
	}
	seen := map[string]bool{}
	for i, l := range c.Links {
		if l.Name == "" {
			return nil, fmt.Errorf("links[%d] has no name", i)
		}
		if seen[l.Name] {
			return nil, fmt.Errorf("interface %q is listed twice", l.Name)
		}
		seen[l.Name] = true
	}
	return &c, nil
}

// NewCapturedKernel replays c.
func NewCapturedKernel(c *Captured) *CapturedKernel { return &CapturedKernel{c: c} }

// Links implements Kernel.
func (k *CapturedKernel) Links() ([]LinkAnswer, error) { return k.c.Links, nil }

// Ethtool implements Kernel.
func (k *CapturedKernel) Ethtool(name string) (*EthtoolAnswer, error) {
	a, ok := k.c.Ethtool[name]
	if !ok || a == nil {
		return nil, &InputError{Path: CapturedFile, Err: fmt.Errorf("interface %q: no ethtool answers captured for it", name)}
	}
	return a, nil
}

// API implements Kernel.
func (k *CapturedKernel) API() string {
	if k.c.API != "" {
		return "captured (" + k.c.API + ")"
	}
	return "captured"
}

// Close implements Kernel.
func (k *CapturedKernel) Close() error { return nil }

// RecordingKernel passes every question to K and keeps the answers, in the saved form
// OpenCaptured replays: a snapshot holds exactly what the reader was told.
type RecordingKernel struct {
	K  Kernel
	mu sync.Mutex
	c  *Captured
}

// NewRecordingKernel wraps k.
func NewRecordingKernel(k Kernel) *RecordingKernel {
	return &RecordingKernel{K: k, c: &Captured{Format: CapturedFormat, API: k.API(), Ethtool: map[string]*EthtoolAnswer{}}}
}

// Links implements Kernel.
func (r *RecordingKernel) Links() ([]LinkAnswer, error) {
	l, err := r.K.Links()
	if err == nil {
		r.mu.Lock()
		r.c.Links = append([]LinkAnswer(nil), l...)
		r.mu.Unlock()
	}
	return l, err
}

// Ethtool implements Kernel.
func (r *RecordingKernel) Ethtool(name string) (*EthtoolAnswer, error) {
	a, err := r.K.Ethtool(name)
	if err == nil {
		r.mu.Lock()
		r.c.Ethtool[name] = a
		r.mu.Unlock()
	}
	return a, err
}

// API implements Kernel.
func (r *RecordingKernel) API() string { return r.K.API() }

// Close implements Kernel; the wrapped kernel stays open.
func (r *RecordingKernel) Close() error { return nil }

// Captured returns what was recorded.
func (r *RecordingKernel) Captured() *Captured {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.c
}
