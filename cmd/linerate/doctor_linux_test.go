package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zynqnet/linerate/doctor"
	"github.com/zynqnet/linerate/internal/nstest"
	"golang.org/x/sys/unix"
)

// doctorIn runs doctor --json in the namespace and returns the report and exit code.
func doctorIn(t *testing.T, ns *nstest.NS, args ...string) (*doctor.Report, int) {
	t.Helper()
	var out, errOut string
	var code int
	ns.Do(t, func() error {
		out, errOut, code = runCLI(t, append([]string{"doctor", "--json", "--interval", "50ms"}, args...)...)
		return nil
	})
	if code == 2 {
		t.Fatalf("doctor %v: exit 2: %s", args, errOut)
	}
	var rep doctor.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("doctor --json: %v\n%s%s", err, out, errOut)
	}
	return &rep, code
}

func hasFinding(rep *doctor.Report, iface, id string) bool {
	for _, i := range rep.Interfaces {
		if i.Name != iface {
			continue
		}
		for _, f := range i.Findings {
			if f.ID == id {
				return true
			}
		}
	}
	return false
}

// openPacketSocket opens an AF_PACKET socket bound to iface, inside the namespace, as a
// capture tool would; the returned func closes it.
func openPacketSocket(t *testing.T, ns *nstest.NS, iface string) func() {
	t.Helper()
	var fd int
	ns.Do(t, func() error {
		ifi, err := netInterfaceIndex(iface)
		if err != nil {
			return err
		}
		fd, err = unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, int(htons(unix.ETH_P_ALL)))
		if err != nil {
			return err
		}
		return unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ifi})
	})
	return func() { unix.Close(fd) }
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

func netInterfaceIndex(name string) (int, error) {
	b, err := os.ReadFile(filepath.Join("/sys/class/net", name, "ifindex"))
	if err != nil {
		return 0, err
	}
	var i int
	_, err = fmt.Sscan(string(b), &i)
	return i, err
}

func TestDoctorRulesInNamespace(t *testing.T) {
	ns, peer := nstest.New(t), nstest.New(t)
	ns.Veth(t, "lr0", "lr1", peer, 1)

	rep, _ := doctorIn(t, ns, "lr0")
	if !hasFinding(rep, "lr0", "VIRTUAL_NIC") {
		t.Errorf("veth not called virtual: %+v", rep)
	}

	t.Run("PROMISC_ON", func(t *testing.T) {
		ns.Exec(t, "ip", "link", "set", "lr0", "promisc", "on")
		if rep, _ := doctorIn(t, ns, "lr0"); !hasFinding(rep, "lr0", "PROMISC_ON") {
			t.Error("PROMISC_ON missing with promisc on")
		}
		ns.Exec(t, "ip", "link", "set", "lr0", "promisc", "off")
		if rep, _ := doctorIn(t, ns, "lr0"); hasFinding(rep, "lr0", "PROMISC_ON") {
			t.Error("PROMISC_ON still there with promisc off")
		}
	})

	t.Run("CAPTURE_SOCKET_OPEN", func(t *testing.T) {
		closeSock := openPacketSocket(t, ns, "lr0")
		rep, _ := doctorIn(t, ns, "lr0")
		closeSock()
		if !hasFinding(rep, "lr0", "CAPTURE_SOCKET_OPEN") {
			t.Fatalf("CAPTURE_SOCKET_OPEN missing with a packet socket open: %+v", rep.Interfaces)
		}
		var ev string
		for _, f := range rep.Interfaces[0].Findings {
			if f.ID == "CAPTURE_SOCKET_OPEN" {
				ev = fmt.Sprint(f.Evidence["sockets"], f.Fix)
			}
		}
		if !strings.Contains(ev, fmt.Sprintf("pid %d", os.Getpid())) {
			t.Errorf("owner not named (want pid %d): %s", os.Getpid(), ev)
		}
		if rep, _ := doctorIn(t, ns, "lr0"); hasFinding(rep, "lr0", "CAPTURE_SOCKET_OPEN") {
			t.Error("CAPTURE_SOCKET_OPEN still there after the socket closed")
		}
	})

	t.Run("SINGLE_QUEUE_NO_RPS", func(t *testing.T) {
		if runtime.NumCPU() < 2 {
			t.Skip("needs 2 CPUs")
		}
		if rep, _ := doctorIn(t, ns, "lr0"); !hasFinding(rep, "lr0", "SINGLE_QUEUE_NO_RPS") {
			t.Error("SINGLE_QUEUE_NO_RPS missing on a one-queue veth without RPS")
		}
		ns.Exec(t, "sh", "-c", "echo 3 > /sys/class/net/lr0/queues/rx-0/rps_cpus")
		if rep, _ := doctorIn(t, ns, "lr0"); hasFinding(rep, "lr0", "SINGLE_QUEUE_NO_RPS") {
			t.Error("SINGLE_QUEUE_NO_RPS still there with rps_cpus 3")
		}
	})

	t.Run("SOCKET_BUFFERS_SMALL", func(t *testing.T) {
		// tcp_rmem and tcp_wmem are per namespace; rmem_max and wmem_max are read-only
		// copies of the host's there, so the finding may stay for them: what must change
		// is which sysctls it names.
		small := func() (bool, string) {
			rep, _ := doctorIn(t, ns, "lr0")
			for _, f := range rep.Interfaces[0].Findings {
				if f.ID == "SOCKET_BUFFERS_SMALL" {
					return true, fmt.Sprint(f.Evidence["below_need"])
				}
			}
			return false, ""
		}
		ns.Exec(t, "sh", "-c", "echo '4096 131072 1000000' > /proc/sys/net/ipv4/tcp_rmem; echo '4096 16384 1000000' > /proc/sys/net/ipv4/tcp_wmem")
		if on, names := small(); !on || !strings.Contains(names, "net.ipv4.tcp_rmem") || !strings.Contains(names, "net.ipv4.tcp_wmem") {
			t.Errorf("tcp_rmem/tcp_wmem max 1000000: finding %v naming %q", on, names)
		}
		ns.Exec(t, "sh", "-c", "echo '4096 131072 4194304' > /proc/sys/net/ipv4/tcp_rmem; echo '4096 16384 4194304' > /proc/sys/net/ipv4/tcp_wmem")
		if on, names := small(); on && strings.Contains(names, "tcp_") {
			t.Errorf("tcp_rmem/tcp_wmem max 4 MiB still named: %q", names)
		}
		if rep, _ := doctorIn(t, ns, "--profile", "latency", "lr0"); hasFinding(rep, "lr0", "SOCKET_BUFFERS_SMALL") {
			t.Error("SOCKET_BUFFERS_SMALL under the latency profile")
		}
	})

	t.Run("LINK_UP_NO_RX", func(t *testing.T) {
		noIPv6(t, ns, peer) // nothing of the peer's own (router solicitations) reaches lr0
		send := func(ns *nstest.NS, iface string) *sync.WaitGroup {
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				if o := cliIn(ns, "gen", iface, "--dst", "02:00:00:00:00:99", "--rate", "200pps", "--duration", "3s"); o.code != 0 {
					t.Errorf("gen on %s: %s", iface, o.stderr)
				}
			}()
			time.Sleep(300 * time.Millisecond)
			return &wg
		}
		// lr0 sends 200 frames a second, the peer never answers.
		wg := send(ns, "lr0")
		rep, code := doctorIn(t, ns, "--interval", "2s", "lr0")
		wg.Wait()
		if !hasFinding(rep, "lr0", "LINK_UP_NO_RX") || code != 1 {
			t.Errorf("a peer that never answers: exit %d, findings %+v", code, rep.Interfaces)
		}
		// Both send: lr0 hears.
		wg, wg2 := send(ns, "lr0"), send(peer, "lr1")
		rep, _ = doctorIn(t, ns, "--interval", "2s", "lr0")
		wg.Wait()
		wg2.Wait()
		if hasFinding(rep, "lr0", "LINK_UP_NO_RX") {
			t.Error("LINK_UP_NO_RX while the peer sends")
		}
		// An idle port (no frames either way) is no finding.
		if rep, _ := doctorIn(t, ns, "--interval", "1s", "lr0"); hasFinding(rep, "lr0", "LINK_UP_NO_RX") {
			t.Error("LINK_UP_NO_RX on an idle port")
		}
	})

	t.Run("MTU", func(t *testing.T) {
		ns.Exec(t, "ip", "link", "set", "lr0", "mtu", "9000")
		rep, code := doctorIn(t, ns, "--board", "zc702", "lr0")
		if !hasFinding(rep, "lr0", "JUMBO_UNSUPPORTED_SOC") || !hasFinding(rep, "lr0", "MTU_ABOVE_HW_MAX") || code != 1 {
			t.Errorf("MTU 9000 on a zc702 GEM: exit %d, findings %+v", code, rep.Interfaces)
		}
		ns.Exec(t, "ip", "link", "set", "lr0", "mtu", "1500")
		rep, code = doctorIn(t, ns, "--board", "zc702", "lr0")
		if hasFinding(rep, "lr0", "JUMBO_UNSUPPORTED_SOC") || hasFinding(rep, "lr0", "MTU_ABOVE_HW_MAX") || code != 0 {
			t.Errorf("MTU 1500 on a zc702 GEM: exit %d, findings %+v", code, rep.Interfaces)
		}
	})
}

// TestDoctorSnapshotRoundTrip: doctor on a live namespace and doctor --from a snapshot of
// it give the same JSON.
func TestDoctorSnapshotRoundTrip(t *testing.T) {
	ns, peer := nstest.New(t), nstest.New(t)
	ns.Veth(t, "lr0", "lr1", peer, 1)
	ns.Exec(t, "ip", "link", "set", "lr0", "promisc", "on")
	closeSock := openPacketSocket(t, ns, "lr0")
	defer closeSock()

	live, liveCode := doctorIn(t, ns, "--interval", "100ms", "lr0")
	archive := filepath.Join(t.TempDir(), "board.tar.gz")
	ns.Do(t, func() error {
		out, errOut, code := runCLI(t, "snapshot", "--interval", "100ms", "-o", archive, "lr0")
		if code != 0 || !strings.Contains(out, "wrote "+archive) {
			return fmt.Errorf("snapshot: exit %d: %s%s", code, out, errOut)
		}
		return nil
	})
	out, errOut, code := runCLI(t, "doctor", "--json", "--from", archive)
	if code != liveCode {
		t.Errorf("exit %d from the snapshot, %d live: %s", code, liveCode, errOut)
	}
	lj, _ := json.MarshalIndent(live, "", " ")
	var from doctor.Report
	if err := json.Unmarshal([]byte(out), &from); err != nil {
		t.Fatal(err)
	}
	fj, _ := json.MarshalIndent(&from, "", " ")
	if string(lj) != string(fj) {
		t.Errorf("doctor live and doctor --from differ:\nlive: %s\nfrom: %s", lj, fj)
	}
	if !hasFinding(&from, "lr0", "PROMISC_ON") || !hasFinding(&from, "lr0", "CAPTURE_SOCKET_OPEN") {
		t.Errorf("snapshot lost findings: %s", fj)
	}

	// Bad input against the snapshot: an interface it does not hold.
	_, errOut, code = runCLI(t, "doctor", "--from", archive, "ethX")
	if code != 2 || !strings.Contains(errOut, `interface "ethX" not found`) {
		t.Errorf("doctor --from with an unknown interface: exit %d, %q", code, errOut)
	}
}

func TestDoctorBadSnapshotFiles(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string][]byte{
		"garbage.tar.gz": []byte("this is not a snapshot"),
		"empty.tar.gz":   nil,
	} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, data, 0o644)
		_, errOut, code := runCLI(t, "doctor", "--from", p)
		if code != 2 || !strings.Contains(errOut, "snapshot "+p) || strings.Contains(errOut, "panic") {
			t.Errorf("%s: exit %d, %q", name, code, errOut)
		}
	}
	wantBadInput(t, []string{"doctor", "--from", filepath.Join(dir, "missing.tar.gz")}, "missing.tar.gz")
	for _, args := range [][]string{{"doctor", "--profile", "fastest"}, {"doctor", "--from", "a", "--root", "b"}, {"snapshot"}, {"doctor", "--board", "zc999", "--root", "x"}} {
		wantBadInput(t, args, "")
	}
}
