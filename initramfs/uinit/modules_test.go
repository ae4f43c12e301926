package main

import (
	"slices"
	"testing"
)

// PHY drivers load before the MAC's driver, so phylib binds them and not its Generic
// PHY; phylib and phylink themselves are not moved (the MAC's dependencies load them).
func TestPHYDriversFirst(t *testing.T) {
	order := []string{"kernel/drivers/net/ethernet/cadence/macb.ko", "kernel/drivers/net/phy/libphy.ko",
		"kernel/drivers/net/phy/phylink.ko", "kernel/drivers/net/phy/marvell.ko", "kernel/drivers/pps/pps_core.ko", "kernel/drivers/net/phy/dp83867.ko"}
	slices.SortStableFunc(order, func(a, b string) int { return phyFirst(a) - phyFirst(b) })
	want := []string{"kernel/drivers/net/phy/marvell.ko", "kernel/drivers/net/phy/dp83867.ko", "kernel/drivers/net/ethernet/cadence/macb.ko",
		"kernel/drivers/net/phy/libphy.ko", "kernel/drivers/net/phy/phylink.ko", "kernel/drivers/pps/pps_core.ko"}
	if !slices.Equal(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
}
