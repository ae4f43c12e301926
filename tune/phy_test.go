package tune

import (
	"errors"
	"testing"
	"time"

	"github.com/zynqnet/linerate/nic"
)

// anegPHY is a forced port as ethtool's get sees it while phylib's state machine has
// yet to run the driver's config_aneg: the partner's modes stay until the status read
// after it (on the calls-th get), or for ever (calls 0); fail makes the first gets fail.
type anegPHY struct {
	calls, gets, fail int
}

func (p *anegPHY) Links() ([]nic.LinkAnswer, error) { return nil, nil }
func (p *anegPHY) API() string                      { return "netlink" }
func (p *anegPHY) Close() error                     { return nil }

func (p *anegPHY) Ethtool(string) (*nic.EthtoolAnswer, error) {
	p.gets++
	if p.gets <= p.fail {
		return nil, errors.New("rtnl busy")
	}
	lm := &nic.LinkModes{SpeedMbps: 100, Duplex: "full", Partner: []string{"100baseT/Full", "100baseT/Half"}}
	if p.calls > 0 && p.gets >= p.calls {
		lm.Partner = []string{}
	}
	return &nic.EthtoolAnswer{LinkModes: lm}, nil
}

// TestConfigAnegRan: the wait for the forcing's config_aneg ends when the partner's
// modes read empty (the status read that follows it), says false where it cannot tell
// (no partner before the forcing: at once, without asking; modes never cleared: after
// its bound), and a failed get is asked again.
func TestConfigAnegRan(t *testing.T) {
	for _, c := range []struct {
		name          string
		phy           anegPHY
		partnerBefore bool
		want          bool
		wantGets      int
	}{
		{"cleared on the 4th get", anegPHY{calls: 4}, true, true, 4},
		{"cleared at once", anegPHY{calls: 1}, true, true, 1},
		{"a get fails first", anegPHY{calls: 1, fail: 2}, true, true, 3},
		{"no partner before", anegPHY{calls: 1}, false, false, 0},
		{"never cleared", anegPHY{}, true, false, -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			got := configAnegRan(&c.phy, "eth0", c.partnerBefore, 100*time.Millisecond)
			if got != c.want {
				t.Errorf("configAnegRan = %v, want %v", got, c.want)
			}
			if c.wantGets >= 0 && c.phy.gets != c.wantGets {
				t.Errorf("%d gets, want %d", c.phy.gets, c.wantGets)
			}
			if c.wantGets < 0 && (time.Since(start) < 100*time.Millisecond || c.phy.gets < 2) {
				t.Errorf("gave up after %v and %d gets: want the whole bound, asking again", time.Since(start), c.phy.gets)
			}
		})
	}
}

// anegReader is anegPHY read as the live kernel can: the link modes alone. Its whole
// ethtool answer is never asked for.
type anegReader struct{ *anegPHY }

func (r anegReader) LinkModes(iface string) (*nic.LinkModes, error) {
	et, err := r.anegPHY.Ethtool(iface)
	if err != nil {
		return nil, err
	}
	return et.LinkModes, nil
}

func (r anegReader) Ethtool(string) (*nic.EthtoolAnswer, error) {
	return nil, errors.New("the whole answer was asked for")
}

// TestConfigAnegRanAlone: where the kernel reads link modes alone, the wait asks for
// them alone (one request, not every question).
func TestConfigAnegRanAlone(t *testing.T) {
	p := &anegPHY{calls: 3}
	if !configAnegRan(anegReader{p}, "eth0", true, time.Second) || p.gets != 3 {
		t.Errorf("%d gets of the link modes alone, want 3 and the wait seen through", p.gets)
	}
}
