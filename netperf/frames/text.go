package frames

import (
	"fmt"
	"strings"
)

// Text is the result for a person: counts, rates and latency percentiles, each line
// headed by head.
func (r Result) Text(head string) string {
	var s strings.Builder
	fmt.Fprintf(&s, "%s stream %d: received %d of %d, lost %d (%.4f%%), reordered %d, duplicated %d, corrupted %d, foreign %d\n",
		head, r.Stream, r.Received, r.Sent, r.Lost, r.LossPct, r.Reordered, r.Duplicated, r.Corrupted, r.Foreign)
	if r.SenderDrops > 0 || r.ReflectorDrops > 0 {
		fmt.Fprintf(&s, "  of the lost: %d dropped by the sending port's driver, %d by the reflector; %d (%.4f%%) lost on the path\n",
			r.SenderDrops, r.ReflectorDrops, r.PathLost(), r.PathLossPct())
	}
	fmt.Fprintf(&s, "  %.0f fps, %.2f Mbit/s L2, %.2f Mbit/s wire over %.2f s\n", r.PPS, r.L2Mbps, r.WireMbps, r.Seconds)
	if l := r.Latency; l != nil {
		kind := r.LatencyKind
		if r.LatencyClock != "" {
			kind += ", " + r.LatencyClock + " stamps"
		}
		fmt.Fprintf(&s, "  latency (%s): p50 %.1fus  p90 %.1fus  p99 %.1fus  p99.9 %.1fus  max %.1fus\n", kind,
			float64(l.P50)/1e3, float64(l.P90)/1e3, float64(l.P99)/1e3, float64(l.P999)/1e3, float64(l.Max)/1e3)
	}
	if r.HWNote != "" {
		fmt.Fprintf(&s, "  hardware timestamps: %s\n", r.HWNote)
	}
	return s.String()
}
