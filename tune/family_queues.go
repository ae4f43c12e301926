package tune

import (
	"path/filepath"
	"strconv"
	"strings"

	"github.com/zynqnet/linerate/nic"
)

// The queues family: each queue's receive packet steering (rps_cpus, rps_flow_cnt) and
// transmit packet steering (xps_cpus) in /sys/class/net/IF/queues/. RPS is how a
// one-queue GEM's receive work reaches a Zynq-7000's second core.
type queues struct{ files }

func init() {
	register(
		row{key: "rps.cpus", family: queues{}, arg: "rps_cpus", values: kCPUs, concrete: "queue.rx-#.rps_cpus", path: queueFile, order: orderSysfs, mask: true},
		row{key: "rps.flow_cnt", family: queues{}, arg: "rps_flow_cnt", values: kUint, concrete: "queue.rx-#.rps_flow_cnt", path: queueFile, order: orderSysfs},
		row{key: "xps.cpus", family: queues{}, arg: "xps_cpus", values: kSpread, concrete: "queue.tx-#.xps_cpus", path: queueFile, order: orderSysfs, mask: true},
	)
}

// queueFile is queue.rx-N.FILE's /sys/class/net/IF/queues/rx-N/FILE.
func queueFile(iface string, p []string) string {
	return filepath.Join("sys/class/net", iface, "queues", p[1], p[2])
}

// queueKnob is the journal name of a queue's file knob.
func queueKnob(queue, file string) string { return "queue." + queue + "." + file }

func (f queues) expand(x *expander, r *row, s Setting) error {
	if r.arg == "xps_cpus" {
		return f.xps(x, s)
	}
	var l []int
	if r.mask {
		var err error
		if l, err = x.cpuSet(s, s.Value); err != nil {
			return err
		}
	} else if n, _ := strconv.ParseUint(s.Value, 10, 32); n&(n-1) != 0 {
		return x.p.perr(s, "the kernel rounds rps_flow_cnt up to a power of two: use %d", nextPow2(n))
	}
	n := 0
	for _, q := range x.ifc.Queues {
		if !strings.HasPrefix(q.Name, "rx-") {
			continue
		}
		var err error
		if r.mask && q.RPSCPUs != nil {
			n++
			err = x.target(s, queueKnob(q.Name, r.arg), maskOf(l))
		} else if !r.mask && q.RPSFlowCnt != nil {
			n++
			err = x.target(s, queueKnob(q.Name, r.arg), s.Value)
		}
		if err != nil {
			return err
		}
	}
	if n == 0 {
		return x.skip(s, "this kernel has no RPS (CONFIG_RPS) for "+x.ifc.Name)
	}
	return nil
}

func (queues) xps(x *expander, s Setting) error {
	var tx []nic.Queue
	for _, q := range x.ifc.Queues {
		if strings.HasPrefix(q.Name, "tx-") && q.XPSCPUs != nil {
			tx = append(tx, q)
		}
	}
	if len(tx) == 0 {
		return x.skip(s, x.ifc.Name+" has no xps_cpus (one tx queue, or no CONFIG_XPS)")
	}
	for i, q := range tx {
		l, err := x.cpusFor(s, i)
		if err != nil {
			return err
		}
		if err := x.target(s, queueKnob(q.Name, "xps_cpus"), maskOf(l)); err != nil {
			return err
		}
	}
	return nil
}
