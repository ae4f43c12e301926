package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zynqnet/linerate/internal/nstest"
	"github.com/zynqnet/linerate/nic"
)

// ethtoolKV parses "key: value" lines (ethtool -i).
func ethtoolKV(out string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(l, ":")
		if ok {
			m[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return m
}

// ethtoolChannels parses ethtool -l into cur/max per channel type; n/a is 0.
func ethtoolChannels(t *testing.T, out string) nic.Channels {
	var c nic.Channels
	section := ""
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, "Pre-set maximums"):
			section = "max"
			continue
		case strings.HasPrefix(l, "Current hardware settings"):
			section = "cur"
			continue
		}
		k, v, ok := strings.Cut(l, ":")
		if !ok || section == "" {
			continue
		}
		n := uint64(0)
		if v = strings.TrimSpace(v); v != "n/a" {
			var err error
			if n, err = strconv.ParseUint(v, 10, 32); err != nil {
				t.Fatalf("ethtool -l: %q", l)
			}
		}
		u := uint32(n)
		switch section + strings.TrimSpace(k) {
		case "maxRX":
			c.RXMax = u
		case "maxTX":
			c.TXMax = u
		case "maxOther":
			c.OtherMax = u
		case "maxCombined":
			c.CombinedMax = u
		case "curRX":
			c.RX = u
		case "curTX":
			c.TX = u
		case "curOther":
			c.Other = u
		case "curCombined":
			c.Combined = u
		}
	}
	return c
}

// ethtoolFeatures parses ethtool -k into (name, on, fixed) in its order.
func ethtoolFeatures(out string) []string {
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "Features for") {
			continue
		}
		lines = append(lines, l)
	}
	return lines
}

// ourFeatures renders show's features the way ethtool -k prints them.
func ourFeatures(fs nic.Features) []string {
	var lines []string
	for _, f := range fs {
		s := f.Name + ": " + onOff(f.On)
		switch {
		case f.Fixed:
			s += " [fixed]"
		case f.Requested != nil:
			s += " [requested " + onOff(*f.Requested) + "]"
		}
		lines = append(lines, s)
	}
	return lines
}

// ethtoolStats parses ethtool -S in order.
func ethtoolStats(t *testing.T, out string) nic.Counters {
	var cs nic.Counters
	for _, l := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(l), ": ")
		if !ok {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		if err != nil {
			t.Fatalf("ethtool -S: %q", l)
		}
		cs = append(cs, nic.Counter{Name: k, Value: n})
	}
	return cs
}

type ipLink struct {
	Ifindex     int      `json:"ifindex"`
	Ifname      string   `json:"ifname"`
	Flags       []string `json:"flags"`
	MTU         int      `json:"mtu"`
	Address     string   `json:"address"`
	Promiscuity int      `json:"promiscuity"`
	MinMTU      int      `json:"min_mtu"`
	MaxMTU      int      `json:"max_mtu"`
	NumTx       int      `json:"num_tx_queues"`
	NumRx       int      `json:"num_rx_queues"`
	Operstate   string   `json:"operstate"`
	Linkinfo    struct {
		Kind string `json:"info_kind"`
	} `json:"linkinfo"`
	Stats64 struct {
		RX struct {
			Bytes, Packets, Errors, Dropped, Multicast uint64
			OverErrors                                 uint64 `json:"over_errors"`
			LengthErrors                               uint64 `json:"length_errors"`
			CRCErrors                                  uint64 `json:"crc_errors"`
			FrameErrors                                uint64 `json:"frame_errors"`
			FIFOErrors                                 uint64 `json:"fifo_errors"`
			MissedErrors                               uint64 `json:"missed_errors"`
			NoHandler                                  uint64 `json:"nohandler"`
		} `json:"rx"`
		TX struct {
			Bytes, Packets, Errors, Dropped, Collisions uint64
			CarrierErrors                               uint64 `json:"carrier_errors"`
			AbortedErrors                               uint64 `json:"aborted_errors"`
			FIFOErrors                                  uint64 `json:"fifo_errors"`
			WindowErrors                                uint64 `json:"window_errors"`
			HeartbeatErrors                             uint64 `json:"heartbeat_errors"`
		} `json:"tx"`
	} `json:"stats64"`
}

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// compareWithTools checks show's view of iface against ethtool and ip in the namespace.
func compareWithTools(t *testing.T, ns *nstest.NS, iface, api string) nic.Interface {
	t.Helper()
	var got []nic.Interface
	ns.Do(t, func() error {
		got = showIfaces(t, "--ethtool-api", api, iface)
		return nil
	})
	if len(got) != 1 {
		t.Fatalf("show %s: %d interfaces", iface, len(got))
	}
	g := got[0]
	if g.EthtoolAPI != api {
		t.Errorf("ethtool_api = %q, want %q", g.EthtoolAPI, api)
	}

	info := ethtoolKV(ns.Exec(t, "ethtool", "-i", iface))
	if g.Driver == nil {
		t.Fatalf("driver is null")
	}
	if g.Driver.Name != info["driver"] || g.Driver.Version != info["version"] || g.Driver.Firmware != info["firmware-version"] || g.Driver.Bus != info["bus-info"] {
		t.Errorf("driver = %+v, ethtool -i says %v", *g.Driver, info)
	}

	wantCh := ethtoolChannels(t, ns.Exec(t, "ethtool", "-l", iface))
	if g.Channels == nil || *g.Channels != wantCh {
		t.Errorf("channels = %+v, ethtool -l says %+v", g.Channels, wantCh)
	}

	if w, o := ethtoolFeatures(ns.Exec(t, "ethtool", "-k", iface)), ourFeatures(g.Features); !reflect.DeepEqual(w, o) {
		t.Errorf("features differ from ethtool -k:\nethtool: %q\nlinerate: %q", w, o)
	}

	if w := ethtoolStats(t, ns.Exec(t, "ethtool", "-S", iface)); !reflect.DeepEqual(w, g.Stats.Driver) {
		t.Errorf("driver stats differ from ethtool -S:\nethtool: %v\nlinerate: %v", w, g.Stats.Driver)
	}

	// Rings, coalescing and pause: veth has none; both must say so.
	for _, part := range []struct {
		name string
		flag string
		null bool
	}{{"rings", "-g", g.Rings == nil}, {"coalesce", "-c", g.Coalesce == nil}, {"pause", "-a", g.Pause == nil}} {
		_, err := ns.Try("ethtool", part.flag, iface)
		if (err != nil) != part.null {
			t.Errorf("%s: linerate null=%v, ethtool %s error=%v", part.name, part.null, part.flag, err)
		}
		if part.null && !strings.Contains(g.Unsupported[part.name], "not supported by veth") {
			t.Errorf("%s: unsupported reason %q", part.name, g.Unsupported[part.name])
		}
	}

	var links []ipLink
	if err := json.Unmarshal([]byte(ns.Exec(t, "ip", "-j", "-d", "-s", "-s", "link", "show", "dev", iface)), &links); err != nil || len(links) != 1 {
		t.Fatalf("ip -j link: %v", err)
	}
	l := links[0]
	if g.Index != l.Ifindex || g.MTU != l.MTU || g.MAC != l.Address || g.Flags.Promiscuity != l.Promiscuity ||
		g.Flags.Promisc != has(l.Flags, "PROMISC") || g.Flags.Up != has(l.Flags, "UP") ||
		g.Flags.LowerUp != has(l.Flags, "LOWER_UP") || g.Kind != l.Linkinfo.Kind ||
		g.NumRxQueues != l.NumRx || g.NumTxQueues != l.NumTx || !strings.EqualFold(g.Link.Operstate, l.Operstate) {
		t.Errorf("show disagrees with ip -j link:\nshow: idx %d mtu %d mac %s promisc %v/%d up %v lower %v kind %q q %d/%d oper %s\nip:   %+v",
			g.Index, g.MTU, g.MAC, g.Flags.Promisc, g.Flags.Promiscuity, g.Flags.Up, g.Flags.LowerUp, g.Kind, g.NumRxQueues, g.NumTxQueues, g.Link.Operstate, l)
	}
	s, rx, tx := g.Stats.Link, l.Stats64.RX, l.Stats64.TX
	if s.RXBytes != rx.Bytes || s.RXPackets != rx.Packets || s.RXErrors != rx.Errors || s.RXDropped != rx.Dropped ||
		s.Multicast != rx.Multicast || s.RXOverErrors != rx.OverErrors || s.RXLengthErrors != rx.LengthErrors ||
		s.RXCRCErrors != rx.CRCErrors || s.RXFrameErrors != rx.FrameErrors || s.RXFIFOErrors != rx.FIFOErrors ||
		s.RXMissedErrors != rx.MissedErrors || s.RXNoHandler != rx.NoHandler ||
		s.TXBytes != tx.Bytes || s.TXPackets != tx.Packets || s.TXErrors != tx.Errors || s.TXDropped != tx.Dropped ||
		s.Collisions != tx.Collisions || s.TXCarrierErrors != tx.CarrierErrors || s.TXAbortedErrors != tx.AbortedErrors ||
		s.TXFIFOErrors != tx.FIFOErrors || s.TXWindowErrors != tx.WindowErrors || s.TXHeartbeatErrors != tx.HeartbeatErrors {
		t.Errorf("link stats differ from ip -s -s -j link:\nshow: %+v\nip:   %+v", s, l.Stats64)
	}
	if g.MinMTU == nil || *g.MinMTU != l.MinMTU || g.MaxMTU == nil || *g.MaxMTU != l.MaxMTU {
		t.Errorf("min/max mtu = %v/%v, ip says %d/%d", g.MinMTU, g.MaxMTU, l.MinMTU, l.MaxMTU)
	}

	// Queues against sysfs read by a shell in the namespace.
	for _, q := range g.Queues {
		dir := fmt.Sprintf("/sys/class/net/%s/queues/%s/", iface, q.Name)
		if strings.HasPrefix(q.Name, "rx-") {
			want := strings.TrimSpace(ns.Exec(t, "cat", dir+"rps_cpus"))
			if q.RPSCPUs == nil || *q.RPSCPUs != want {
				t.Errorf("%s rps_cpus = %v, sysfs says %q", q.Name, q.RPSCPUs, want)
			}
		}
	}
	return g
}

func TestShowMatchesEthtoolAndIP(t *testing.T) {
	nstest.NeedTool(t, "ethtool")
	ns, peer := nstest.New(t), nstest.New(t)
	ns.Veth(t, "lr0", "lr1", peer, 2)
	// Real frames through the veth, so the counters compared below are not all zero:
	// UDP from 198.18.0.1 to 198.18.0.2 (RFC 2544's benchmarking range, our namespaces).
	ns.Exec(t, "ip", "addr", "add", "198.18.0.1/30", "dev", "lr0")
	peer.Exec(t, "ip", "addr", "add", "198.18.0.2/30", "dev", "lr1")
	ns.Do(t, func() error {
		// Unconnected, so the peer's ICMP port-unreachable answers are not errors here.
		c, err := net.ListenPacket("udp4", "198.18.0.1:0")
		if err != nil {
			return err
		}
		defer c.Close()
		dst := &net.UDPAddr{IP: net.IPv4(198, 18, 0, 2), Port: 9}
		for i := 0; i < 20; i++ {
			if _, err := c.WriteTo(make([]byte, 100+i), dst); err != nil {
				return err
			}
		}
		return nil
	})
	time.Sleep(100 * time.Millisecond) // let the peer's ICMP replies land before reading

	for _, api := range []string{nic.APINetlink, nic.APIIoctl} {
		t.Run(api, func(t *testing.T) {
			g := compareWithTools(t, ns, "lr0", api)
			if g.Driver.Name != "veth" || g.Kind != "veth" || g.Channels.RXMax != 2 || len(g.Queues) != 4 {
				t.Errorf("unexpected veth view: driver %v kind %q channels %+v queues %d", g.Driver, g.Kind, g.Channels, len(g.Queues))
			}
			if g.Stats.Link.TXPackets < 20 || g.Stats.Link.RXPackets == 0 {
				t.Errorf("counters do not show the traffic sent: %+v", g.Stats.Link)
			}
			if g.Link.SpeedMbps == nil || *g.Link.SpeedMbps != 10000 || g.Link.Duplex == nil || *g.Link.Duplex != "full" {
				t.Errorf("veth link = %+v, ethtool says 10000Mb/s Full", g.Link)
			}
		})
	}

	// Change what the issue names and compare again.
	ns.Exec(t, "ip", "link", "set", "lr0", "promisc", "on")
	ns.Exec(t, "ip", "link", "set", "lr0", "mtu", "9000")
	ns.Exec(t, "ethtool", "-L", "lr0", "rx", "2", "tx", "2")
	ns.Exec(t, "sh", "-c", "echo 3 > /sys/class/net/lr0/queues/rx-0/rps_cpus; echo 64 > /sys/class/net/lr0/queues/rx-0/rps_flow_cnt")
	ns.Exec(t, "ethtool", "-K", "lr0", "gro", "on", "tso", "off")
	for _, api := range []string{nic.APINetlink, nic.APIIoctl} {
		t.Run(api+"/changed", func(t *testing.T) {
			g := compareWithTools(t, ns, "lr0", api)
			if !g.Flags.Promisc || g.MTU != 9000 || g.Channels.RX != 2 || g.Channels.TX != 2 {
				t.Errorf("changes not seen: promisc %v mtu %d channels %+v", g.Flags.Promisc, g.MTU, g.Channels)
			}
			if q := g.Queues[0]; q.Name != "rx-0" || q.RPSCPUs == nil || *q.RPSCPUs != "3" || q.RPSFlowCnt == nil || *q.RPSFlowCnt != 64 {
				t.Errorf("rx-0 = %+v, want rps_cpus 3 and rps_flow_cnt 64", q)
			}
			if f, _ := g.Features.Get("generic-receive-offload"); !f.On {
				t.Errorf("gro not on after ethtool -K gro on")
			}
			if f, _ := g.Features.Get("tx-tcp-segmentation"); f.On {
				t.Errorf("tx-tcp-segmentation on after ethtool -K tso off")
			}
		})
	}
}

func TestShowNetlinkAndIoctlAgree(t *testing.T) {
	ns := nstest.New(t)
	ns.Veth(t, "lr0", "lr1", nil, 0)
	var byAPI = map[string]nic.Interface{}
	for _, api := range []string{nic.APINetlink, nic.APIIoctl} {
		ns.Do(t, func() error {
			byAPI[api] = showIfaces(t, "--ethtool-api", api, "lr0")[0]
			return nil
		})
	}
	a, b := byAPI[nic.APINetlink], byAPI[nic.APIIoctl]
	a.EthtoolAPI, b.EthtoolAPI = "", ""
	// Port comes from LINKINFO over netlink and from the link settings over ioctl; counters
	// may move between two reads. Everything else must be identical.
	a.Link.Port, b.Link.Port = nil, nil
	a.Stats, b.Stats = nic.Stats{}, nic.Stats{}
	ja, _ := json.MarshalIndent(a, "", " ")
	jb, _ := json.MarshalIndent(b, "", " ")
	if string(ja) != string(jb) {
		t.Errorf("netlink and ioctl views differ:\nnetlink: %s\nioctl: %s", ja, jb)
	}
}

func TestShowUnknownInterface(t *testing.T) {
	ns := nstest.New(t)
	ns.Veth(t, "lr0", "lr1", nil, 0)
	ns.Do(t, func() error {
		_, errOut, code := runCLI(t, "show", "ethX")
		if code != 2 {
			return fmt.Errorf("exit %d, want 2", code)
		}
		// Listed by ifindex, as ip link does: veth creates the peer first.
		if !strings.Contains(errOut, `interface "ethX" not found (have: lo, lr1, lr0)`) {
			return fmt.Errorf("stderr %q", errOut)
		}
		return nil
	})
}

func TestShowAllSkipsLoopback(t *testing.T) {
	ns := nstest.New(t)
	ns.Veth(t, "lr0", "lr1", nil, 0)
	ns.Do(t, func() error {
		v := showJSON(t)
		var names []string
		for _, i := range v {
			names = append(names, i["name"].(string))
		}
		if !reflect.DeepEqual(names, []string{"lr1", "lr0"}) {
			return fmt.Errorf("show without IFACE listed %v, want [lr1 lr0] (ifindex order, no lo)", names)
		}
		return nil
	})
}

// TestShowGlobalSysctlsInNamespace: inside a network namespace the machine-wide net.core
// sysctls are absent; show says so, instead of blaming the kernel.
func TestShowGlobalSysctlsInNamespace(t *testing.T) {
	ns := nstest.New(t)
	ns.Veth(t, "lr0", "lr1", nil, 0)
	ns.Do(t, func() error {
		out, errOut, code := runCLI(t, "show", "lr0")
		if code != 0 {
			return fmt.Errorf("exit %d: %s", code, errOut)
		}
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "net.core.netdev_max_backlog") && !strings.Contains(l, "global: not visible inside a network namespace") {
				return fmt.Errorf("in a namespace: %q", l)
			}
			if strings.Contains(l, "not in this kernel") {
				return fmt.Errorf("blames the kernel: %q", l)
			}
		}
		return nil
	})
}

// BenchmarkShowJSONLive: show --json of one veth in a fresh namespace, for each ethtool API.
func BenchmarkShowJSONLive(b *testing.B) {
	ns := nstest.New(b)
	ns.Veth(b, "lr0", "lr1", nil, 2)
	for _, api := range []string{"netlink", "ioctl"} {
		b.Run(api, func(b *testing.B) {
			args := []string{"show", "--json", "--ethtool-api", api, "lr0"}
			ns.Do(b, func() error {
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if err := run(context.Background(), args, nil, io.Discard, io.Discard); err != nil {
						return err
					}
				}
				return nil
			})
		})
	}
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
