package experiment

import (
	"reflect"
	"testing"
)

// A speed of the matrix replaces the advertised speeds and keeps the other bits the
// kernel advertises with them (phylink adds Autoneg; pause bits stay).
func TestNotSpeeds(t *testing.T) {
	got := notSpeeds("10baseT/Half 100baseT/Full 1000baseT/Full Autoneg Pause Asym_Pause TP 2500baseX/Full 10000baseKR/Full")
	if want := []string{"Autoneg", "Pause", "Asym_Pause", "TP"}; !reflect.DeepEqual(got, want) {
		t.Errorf("notSpeeds: %v, want %v", got, want)
	}
	if got := notSpeeds(""); got != nil {
		t.Errorf("nothing advertised: %v", got)
	}
}
