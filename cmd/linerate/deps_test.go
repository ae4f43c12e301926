package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// goListDeps is 'go list -deps PKG' for GOOS=linux and arch.
func goListDeps(t *testing.T, arch, pkg string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", pkg)
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+arch, "GOARM=7", "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	return strings.Fields(string(out))
}

// TestBoardsTakeNoStationCode: the boards' binaries (arm, arm64) carry nothing only the
// station needs (its stores, its metrics, its in-kernel reflector's BPF loader): the
// budget is the image a board boots.
func TestBoardsTakeNoStationCode(t *testing.T) {
	for _, arch := range []string{"arm", "arm64"} {
		for _, p := range goListDeps(t, arch, "./cmd/linerate") {
			for _, bad := range []string{"github.com/jackc/pgx", "go.etcd.io/bbolt", "github.com/prometheus/client_golang", "github.com/zynqnet/linerate/station", "github.com/cilium/ebpf"} {
				if strings.HasPrefix(p, bad) {
					t.Errorf("linux/%s linerate takes in %s", arch, p)
				}
			}
		}
	}
}

// TestStationTakesNoBoardCode: the station reads reports through the leaf packages plan
// and curve; none of the board's measuring, tuning or device-tree code comes in.
func TestStationTakesNoBoardCode(t *testing.T) {
	for _, p := range goListDeps(t, "amd64", "./station") {
		rest, ok := strings.CutPrefix(p, "github.com/zynqnet/linerate/")
		if !ok {
			continue
		}
		for _, bad := range []string{"nic", "tune", "dts", "doctor", "experiment", "netperf", "validate", "snapshot", "board", "factory"} {
			if rest == bad || strings.HasPrefix(rest, bad+"/") {
				t.Errorf("the station takes in %s", p)
			}
		}
	}
}
