package validate

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/zynqnet/linerate/netperf/engine"
	"github.com/zynqnet/linerate/plan"
)

// Loop sends test frames from one port of the board to another, cabled to it on the
// fixture: the frames cross both ports' MACs and PHYs and the cable, with no station.
// At a rate it judges loss and one-way latency, or with min_throughput_pct it searches
// the RFC 2544 throughput, as 'linerate rfc2544 --loop' does. A step of the whole board.
type Loop struct {
	// Ports are the sending port and the receiving one, interfaces of the plan.
	Ports  []string `yaml:"ports" json:"ports" doc:"the sending port and the receiving one, two ports of the plan cabled to each other (required)"`
	Frames `yaml:",inline" json:",inline"`
}

// Check: two different ports of the plan, and the frames' size, rate and thresholds as a
// frames step takes them (but no station).
func (s *Loop) Check(p *plan.Plan) error {
	if len(s.Ports) != 2 || s.Ports[0] == s.Ports[1] {
		return fmt.Errorf("loop step needs ports: [FROM, TO], two ports cabled to each other")
	}
	for _, port := range s.Ports {
		if !slices.ContainsFunc(p.Ports, func(q plan.Port) bool { return q.Interface == port }) {
			return fmt.Errorf("ports: %s is not a port of the plan", port)
		}
	}
	withStation := *p
	withStation.Ports = []plan.Port{{Interface: s.Ports[0], Station: plan.Station{Address: "loop"}}}
	return s.Frames.Check(&withStation)
}

// BoardPorts: the two ports the loop runs between.
func (s *Loop) BoardPorts(*plan.Plan) string { return strings.Join(s.Ports, "+") }

// Timeout: as a frames step's.
func (s *Loop) Timeout() time.Duration { return s.Frames.Timeout() }

// Run sends from the first port to the second's MAC and counts them there.
func (s *Loop) Run(ctx context.Context, e Env) (Outcome, error) {
	from, err := engine.LookupPort(e.Root, s.Ports[0], 0)
	if err != nil {
		return Outcome{}, err
	}
	to, err := engine.LookupPort(e.Root, s.Ports[1], from.LinkMbps)
	if err != nil {
		return Outcome{}, err
	}
	return s.measure(ctx, e, from, engine.TrialerConfig{Dst: to.MAC, RXPort: to.Name, Kind: "one-way"})
}
