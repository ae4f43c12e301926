package nic

import (
	"strings"
	"testing"
)

// TestPHYChanges: the events between two reads of a PHY's registers. The values are the
// emulated GEM PHY's (a Marvell 88E1111 id; hw/net/cadence_gem.c: gem_phy_reset gives
// BMCR 0x1140 and BMSR 0x7969, phy_update_link sets link and autoneg complete, 0x796d,
// and clears both when QEMU's monitor sets the link off); the e2e job's tcp-flap
// section sees the same on the booted tester image.
func TestPHYChanges(t *testing.T) {
	up := phyState{bmcr: 0x1140, bmsr: 0x796d}
	down := phyState{bmcr: 0x1140, bmsr: 0x796d &^ (BMSRLinkStatus | BMSRANComplete)}
	fault := phyState{bmcr: 0x1140, bmsr: 0x796d | BMSRRemoteFault}
	loop := phyState{bmcr: 0x1140 | BMCRLoopback, bmsr: 0x796d}
	forced := phyState{bmcr: 0x0140, bmsr: 0x796d} // autoneg bit cleared: not an event
	for _, tc := range []struct {
		name      string
		prev, now phyState
		want      []string
	}{
		{"steady", up, up, nil},
		{"autoneg bits", up, forced, nil},
		{"link lost", up, down, []string{"phy-down PHY link down (BMSR 0x7949: link down)"}},
		{"link back", down, up, []string{"phy-up PHY link up (BMSR 0x796d: link up, autoneg complete)"}},
		{"remote fault", up, fault, []string{"phy-fault PHY remote fault: the link partner signals a fault (BMSR 0x797d: link up, autoneg complete, remote fault)"}},
		{"fault stays", fault, fault, nil},
		{"loopback set", up, loop, []string{"phy-control PHY control normal -> loopback (BMCR 0x1140 -> 0x5140)"}},
		{"isolated and down", up, phyState{bmcr: 0x1140 | BMCRIsolate | BMCRPowerDown, bmsr: down.bmsr}, []string{
			"phy-down PHY link down (BMSR 0x7949: link down)", "phy-control PHY control normal -> isolate+power-down (BMCR 0x1140 -> 0x1d40)"}},
	} {
		var got []string
		for _, c := range phyChanges(tc.prev, tc.now) {
			got = append(got, c[0]+" "+c[1])
		}
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}
