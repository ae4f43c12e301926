// Package board holds the profiles of the Zynq boards linerate knows, as embedded data,
// and detects the board from the device tree's root compatible strings.
package board

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"sync"

	"go.yaml.in/yaml/v3"
)

// Board is one board profile.
type Board struct {
	Name  string `yaml:"name" json:"name"`
	Model string `yaml:"model" json:"model"`
	// SoC is "zynq-7000" or "zynqmp".
	SoC        string   `yaml:"soc" json:"soc"`
	Compatible []string `yaml:"compatible" json:"compatible"`
	CPUs       int      `yaml:"cpus" json:"cpus"`
	LinkMbps   int      `yaml:"link_mbps" json:"link_mbps"`
	MaxMTU     int      `yaml:"max_mtu" json:"max_mtu"`
	GEM        GEM      `yaml:"gem" json:"gem"`
	// EEPROM is the board's identity EEPROM (nil: none the kernel reaches).
	EEPROM *EEPROM `yaml:"eeprom" json:"eeprom,omitempty"`
}

// GEM is the Ethernet controller a board's jack is wired to.
type GEM struct {
	Label      string `yaml:"label" json:"label"`
	Address    string `yaml:"address" json:"address"`
	PHYAddress *int   `yaml:"phy_address" json:"phy_address"`
	PHYMode    string `yaml:"phy_mode" json:"phy_mode"`
	// PHYDriver is the kernel driver the board's PHY needs ("Marvell 88E1116R").
	PHYDriver string `yaml:"phy_driver" json:"phy_driver,omitempty"`
}

// Jumbo reports whether the board's GEM takes frames above 1500 bytes of MTU.
func (b *Board) Jumbo() bool { return b.MaxMTU > 1500 }

//go:embed boards.yaml
var boardsYAML []byte

func load() ([]Board, error) {
	var bs []Board
	if err := yaml.Unmarshal(boardsYAML, &bs); err != nil {
		return nil, fmt.Errorf("board profiles: %w", err)
	}
	return bs, nil
}

// parsed is the table, parsed once a process: a validate run asks for it in its plan's
// check and again in its header, and each parse of the YAML took a few hundredths of a
// second of the emulated ZC702's core (0.8 ms on a PC's).
var parsed = sync.OnceValues(load)

// All returns every board profile, in the file's order: a copy of its own, which the
// caller may change.
func All() []Board {
	bs, err := parsed()
	if err != nil {
		// The file is compiled in and tested: a parse error is a build defect.
		panic(err)
	}
	out := make([]Board, len(bs))
	for i, b := range bs {
		out[i] = b.clone()
	}
	return out
}

// clone copies b with its slices and pointers.
func (b Board) clone() Board {
	b.Compatible = slices.Clone(b.Compatible)
	if b.GEM.PHYAddress != nil {
		a := *b.GEM.PHYAddress
		b.GEM.PHYAddress = &a
	}
	if b.EEPROM != nil {
		e := *b.EEPROM
		b.EEPROM = &e
	}
	return b
}

// Names lists the board names, sorted.
func Names() []string {
	var out []string
	for _, b := range All() {
		out = append(out, b.Name)
	}
	sort.Strings(out)
	return out
}

// Lookup finds a board by name.
func Lookup(name string) (*Board, error) {
	for _, b := range All() {
		if b.Name == name {
			return &b, nil
		}
	}
	return nil, fmt.Errorf("unknown board %q (known: %v)", name, Names())
}

// Detect finds the board whose compatible strings best match the device tree's root
// compatible list (most specific first, as the DT lists them); nil when none matches.
func Detect(compatible []string) *Board {
	bs := All()
	for _, c := range compatible {
		for i := range bs {
			for _, bc := range bs[i].Compatible {
				if bc == c {
					return &bs[i]
				}
			}
		}
	}
	return nil
}

// WriteJSON writes the board's profile and its facts as JSON.
func (b *Board) WriteJSON(w io.Writer) error {
	f, err := b.Facts()
	if err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		*Board
		Facts Facts `json:"facts"`
	}{b, f})
}
