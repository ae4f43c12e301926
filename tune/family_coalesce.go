package tune

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/zynqnet/linerate/nic"
)

// The coalescing family: coalesce.usecs is ethtool -C's rx-usecs and tx-usecs where the
// driver coalesces interrupts in hardware, else software coalescing through NAPI
// (napi_defer_hard_irqs and gro_flush_timeout, kernel 5.7+), as on the GEM, which has
// no ethtool -C. Its concrete knobs are coalesce.PARAM (ethtool -c's names), or the NAPI
// family's.
type coalescing struct{}

const coalescePrefix = "coalesce."

func init() {
	register(row{key: coalescePrefix + "usecs", family: coalescing{}, values: kUint, concrete: coalescePrefix + "*", order: orderEthtool})
}

func (coalescing) expand(x *expander, _ *row, s Setting) error {
	us, _ := strconv.ParseUint(s.Value, 10, 32)
	if x.ifc.Coalesce != nil {
		n := 0
		for _, param := range []string{"rx-usecs", "tx-usecs"} {
			if _, ok := x.ifc.Coalesce[param]; ok {
				n++
				if err := x.target(s, coalescePrefix+param, strconv.FormatUint(us, 10)); err != nil {
					return err
				}
			}
		}
		if n == 0 {
			return x.skip(s, x.drv+" reports no rx-usecs/tx-usecs")
		}
		return nil
	}
	if x.ifc.NAPI.DeferHardIRQs == nil || x.ifc.NAPI.GROFlushTimeout == nil {
		return x.skip(s, x.drv+" has no ethtool -C and this kernel has no napi_defer_hard_irqs (5.7+)")
	}
	defer_ := "0"
	if us > 0 {
		defer_ = "2"
	}
	x.e.notes = append(x.e.notes, fmt.Sprintf("coalesce.usecs %d: %s has no ethtool -C, so interrupts are coalesced in software (napi_defer_hard_irqs %s, gro_flush_timeout %d ns)", us, x.drv, defer_, us*1000))
	if err := x.target(s, knobNAPIDefer, defer_); err != nil {
		return err
	}
	return x.target(s, knobNAPIGROFlush, strconv.FormatUint(us*1000, 10))
}

func (coalescing) read(s *System, k Knob) (string, error) {
	et, _, err := s.ethtool(k.Iface)
	if err != nil {
		return "", err
	}
	if et.Coalesce == nil {
		return "", unsupported(et, "coalesce")
	}
	v, ok := et.Coalesce[strings.TrimPrefix(k.Name, coalescePrefix)] // coalesce.rx-usecs: ethtool -C's rx-usecs
	if !ok {
		return "", fmt.Errorf("the driver does not report %s", k.Name)
	}
	return u32(v), nil
}

func (coalescing) write(s *System, k Knob, v string) error {
	n, _ := strconv.ParseUint(v, 10, 32)
	return s.Setter.SetCoalesce(k.Iface, nic.Coalesce{strings.TrimPrefix(k.Name, coalescePrefix): uint32(n)})
}
