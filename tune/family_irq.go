package tune

import (
	"path/filepath"
	"strconv"
)

// The IRQ family: the CPUs each of the interface's interrupts may run on
// (/proc/irq/N/smp_affinity). A Zynq-7000's GEM has one IRQ line, which cannot be
// split; ZynqMP's two queues share one.
type irqs struct{ files }

func init() {
	register(row{key: "irq.affinity", family: irqs{}, values: kSpread, concrete: "irq.#.smp_affinity",
		path: func(_ string, p []string) string { return filepath.Join("proc/irq", p[1], "smp_affinity") }, order: orderIRQ, mask: true})
}

func (irqs) expand(x *expander, _ *row, s Setting) error {
	if len(x.ifc.IRQs) == 0 {
		return x.skip(s, "no interrupts of "+x.ifc.Name+" found in /proc/interrupts")
	}
	for i, q := range x.ifc.IRQs {
		l, err := x.cpusFor(s, i)
		if err != nil {
			return err
		}
		if len(l) == 0 {
			return x.p.perr(s, "an IRQ needs at least one CPU")
		}
		if err := x.target(s, "irq."+strconv.Itoa(q.Number)+".smp_affinity", maskOf(l)); err != nil {
			return err
		}
	}
	if x.ifc.Platform.IRQBalance {
		x.e.notes = append(x.e.notes, "irqbalance is running and will move these IRQs again: stop it, or ban them (IRQBALANCE_BANNED_CPULIST / --banirq)")
	}
	return nil
}
