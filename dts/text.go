package dts

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/u-root/u-root/pkg/dt"
	"github.com/zynqnet/linerate/internal/readall"
)

// ReadFile reads and decodes a DTB or DTBO, naming the file in any error; the cause
// (a missing file's *fs.PathError, a decoding error) is kept.
func ReadFile(path string) (*dt.FDT, []byte, error) {
	b, err := readall.File(path, MaxBlob)
	if err != nil {
		msg := err.Error() // names the path already
		var pe *fs.PathError
		if errors.As(err, &pe) {
			msg = path + ": " + pe.Err.Error()
		}
		return nil, nil, &Error{Msg: msg, Err: err}
	}
	f, err := Decode(b)
	if err != nil {
		return nil, nil, &Error{Msg: fmt.Sprintf("%s: %v", path, err), Err: err}
	}
	return f, b, nil
}

// WriteGEMsText writes 'linerate dts show' for a person: the tree's model and
// compatible, then each GEM node with its status, PHY, MAC and linerate properties.
func WriteGEMsText(w io.Writer, src string, f *dt.FDT) {
	gems := GEMs(f)
	fmt.Fprintf(w, "%s: %s (%s)\n", src, orDash(PropString(f.RootNode, "model")), strings.Join(PropStrings(f.RootNode, "compatible"), " "))
	if len(gems) == 0 {
		fmt.Fprintln(w, "no GEM nodes (no compatible cdns,gem / cdns,macb)")
		return
	}
	for _, g := range gems {
		name := g.Path
		for _, s := range []string{g.Label, g.Alias} {
			if s != "" {
				name += "  " + s
			}
		}
		fmt.Fprintf(w, "\n%s  %s\n", name, g.Status)
		fmt.Fprintf(w, "  %-24s %s\n", "compatible", strings.Join(g.Compatible, " "))
		fmt.Fprintf(w, "  %-24s %s\n", "phy-mode", orDash(g.PhyMode))
		mac := "-"
		if g.MAC != "" {
			mac = g.MAC + " (" + g.MACFrom + ")"
		}
		fmt.Fprintf(w, "  %-24s %s\n", "mac", mac)
		phy := orDash(g.PHY)
		if g.PHYAddress != nil {
			phy += fmt.Sprintf(" (MDIO address %d)", *g.PHYAddress)
		}
		if g.FixedLink {
			phy = "fixed-link"
		}
		fmt.Fprintf(w, "  %-24s %s\n", "phy", phy)
		for _, nv := range g.Linerate {
			fmt.Fprintf(w, "  %-24s %s\n", nv.Name, nv.Value)
		}
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Show writes the GEM nodes of a DTB file, or with live of the running kernel's tree
// under root, as text or as JSON.
func Show(w io.Writer, file, root string, live, asJSON bool) error {
	var f *dt.FDT
	var src string
	var err error
	if live {
		f, src, err = ReadLive(root)
	} else {
		src = file
		f, _, err = ReadFile(src)
	}
	if err != nil {
		return err
	}
	if !asJSON {
		WriteGEMsText(w, src, f)
		return nil
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(struct {
		Source     string   `json:"source"`
		Model      string   `json:"model,omitempty"`
		Compatible []string `json:"compatible"`
		GEMs       []GEM    `json:"gems"`
	}{src, PropString(f.RootNode, "model"), PropStrings(f.RootNode, "compatible"), GEMs(f)})
}
