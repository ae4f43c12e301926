package nic

import (
	"errors"
	"fmt"
)

// ErrorCounterNames are the interface statistics that no healthy run raises, by their
// names under /sys/class/net/IFACE/statistics.
var ErrorCounterNames = []string{"rx_errors", "tx_errors", "rx_crc_errors", "rx_frame_errors", "rx_fifo_errors", "rx_missed_errors",
	"rx_over_errors", "rx_length_errors", "tx_aborted_errors", "tx_carrier_errors", "tx_fifo_errors", "tx_heartbeat_errors", "tx_window_errors", "collisions"}

// ErrorCounters returns the error counters by name (ErrorCounterNames).
func (s LinkStats) ErrorCounters() map[string]uint64 {
	return map[string]uint64{
		"rx_errors": s.RXErrors, "tx_errors": s.TXErrors, "rx_crc_errors": s.RXCRCErrors, "rx_frame_errors": s.RXFrameErrors,
		"rx_fifo_errors": s.RXFIFOErrors, "rx_missed_errors": s.RXMissedErrors, "rx_over_errors": s.RXOverErrors,
		"rx_length_errors": s.RXLengthErrors, "tx_aborted_errors": s.TXAbortedErrors, "tx_carrier_errors": s.TXCarrierErrors,
		"tx_fifo_errors": s.TXFIFOErrors, "tx_heartbeat_errors": s.TXHeartbeatErrors, "tx_window_errors": s.TXWindowErrors,
		"collisions": s.Collisions,
	}
}

// LinkStats reads one interface's statistics from the kernel (rtnetlink IFLA_STATS64),
// without the rest of what Read reads.
func (r *Reader) LinkStats(iface string) (LinkStats, error) {
	l, err := LinkOf(r.Kernel, iface)
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return LinkStats{}, err
		}
		return LinkStats{}, fmt.Errorf("interface %q: statistics: %w", iface, err)
	}
	return l.Stats, nil
}
