// Package curve is a knob's curve: the points a sweep measured (a value of one tune knob
// each, with its figures), as the sweep prints it, as CSV and as an SVG chart. It is a
// leaf (no other linerate package), so the station draws a report's sweep with the code
// the board's sweep uses, without taking in the sweep itself.
package curve

// Column is one figure a point carries: its key (CSV header, JSON key) and unit.
type Column struct {
	Key  string `json:"key"`
	Unit string `json:"unit"`
	// Lower says smaller is better (latency, loss, retransmits).
	Lower bool `json:"lower_is_better"`
}

// Point is one value of the knob with its measurements.
type Point struct {
	Value string `json:"value"`
	// Applied is the value read back after the write (the driver may round it: macb
	// takes ring sizes as powers of two); several knobs (one per queue) are listed.
	Applied string `json:"applied"`
	// Runs are the measurements of each repeat; Median and Spread (max - min) sum them up.
	Runs   []map[string]float64 `json:"runs"`
	Median map[string]float64   `json:"median"`
	Spread map[string]float64   `json:"spread"`
	// Error says why the value could not be applied or measured (the sweep goes on).
	Error string `json:"error,omitempty"`
	// SettleS is how long the value took to settle: the wait for the link to come back
	// after a knob that bounces it, measured (0: it did not bounce).
	SettleS float64 `json:"settle_s,omitempty"`
	// Stopped says the point was stopped early, after fewer runs than asked: its median
	// so far could not beat the best point's any more (sweep --early-stop).
	Stopped string `json:"stopped,omitempty"`
}

// Result is a finished sweep.
type Result struct {
	Iface   string   `json:"interface"`
	Knob    string   `json:"knob"`
	Columns []Column `json:"columns"`
	Points  []Point  `json:"points"`
	// Restored says the knob was given back its value from before the sweep.
	Restored bool `json:"restored"`
	// Interrupted says the sweep was cut short (a signal); the points so far are kept.
	Interrupted bool `json:"interrupted,omitempty"`
}
