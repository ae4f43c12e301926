package validate

import (
	"encoding/json"
	"io"
	"path/filepath"
	"sync"
	"time"

	"github.com/zynqnet/linerate/board"
	"github.com/zynqnet/linerate/nic"
	"github.com/zynqnet/linerate/plan"
)

// Env is everything a step kind runs with, given to it by value: its port and that
// port's station, the plan's settings and what the run read before the first step. It
// holds no pointer to the run: a step on one port cannot touch another port's state,
// and what a step contributes to the report goes back in its Outcome.
type Env struct {
	// ID is the step's result id: its figures are named after it (with the port's
	// interface in a multi-port plan).
	ID string
	// Iface is the port under test and Station its station; a step of the whole board
	// (a tune across the ports, a loop) has every port in Ports and the first as Iface.
	Iface   string
	Station plan.Station
	Ports   []plan.Port
	// Multi says the plan has several ports; First that Iface is the plan's first (the
	// port whose MAC a board's EEPROM holds).
	Multi, First bool
	// Board ports are every port of the plan, in its order: what a step that compares
	// its port with the others (the identity's distinct MACs) reads, and does not change.
	BoardPorts []string
	// Board is the board's profile (nil: unknown); Serial and SerialSource who the run
	// says it is.
	Board                *board.Board
	Serial, SerialSource string
	// Counters are the port's error counters as the run read them before its first step.
	Counters map[string]uint64
	// Root is where /sys and /proc are read, API the ethtool API, StateDir tune's
	// journals, Version the linerate that runs.
	Root, API, StateDir, Version string
	// Console takes whole lines; the ports' steps at once write to it safely.
	Console io.Writer
	// link is the run's watch of its ports' links, read only (nil: none).
	link *linkWatch
	// behind holds what the steps finish behind the run (rings that close while the
	// next step runs): the run waits for it before it returns (nil: nothing is left).
	behind *sync.WaitGroup
}

// sysfs reads one of the port's /sys/class/net files ("" when it cannot).
func (e Env) sysfs(name string) string {
	v, _ := nic.ReadFile(e.Root, filepath.Join("sys/class/net", e.Iface, name))
	return v
}

// Outcome is what a step measured and concluded, and what it found that the report
// carries beyond its result.
type Outcome struct {
	Pass bool
	// Skip says the step could not apply here and why (Summary): a port without MII
	// access for a phy step that is not required. A skipped step passes.
	Skip     bool
	Summary  string             // measured against threshold, one line
	Reason   string             // why it failed, when it did
	Measured map[string]float64 // numbers for the report
	Figures  map[string]float64 // key figures for the verdict line
	Detail   any                // what the step's tool reported, for the JSON report
	// Window is how long the step measured (its traffic's windows); the rest of its
	// time is its overhead.
	Window time.Duration
	Found
}

// Found is what a step found of its port that the report carries outside the step's
// result: the port's identity, the doctor's findings, and what the run must give back
// at its end.
type Found struct {
	// MAC and MACSource are the port's MAC and where it came from (the identity step).
	MAC, MACSource string
	// Doctor is the doctor's report of the port, JSON.
	Doctor json.RawMessage
	// Undo gives back what the step changed for the rest of the run (a tune step's
	// revert), after the last step, whatever happened in between; it says on console
	// what it could not give back.
	Undo func(console io.Writer)
}
