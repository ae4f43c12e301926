package plan

import (
	"fmt"
	"strconv"
	"strings"
)

// NormalizeMAC is an Ethernet MAC in its one form (00:0a:35:00:01:22) from any of the
// forms people and tools write it in: any case; ':' or '-' between octets, with or
// without their leading zeros (0:a:35:0:1:22); '.' between groups of four digits
// (Cisco's 000a.35aa.bb01); or twelve digits and no separator. Two reports of one MAC
// written two ways are the same MAC to every comparison the station makes.
func NormalizeMAC(s string) (string, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	var octets []string
	switch {
	case s == "":
		return "", fmt.Errorf("no MAC")
	case strings.ContainsAny(s, ":-"):
		octets = strings.FieldsFunc(s, func(r rune) bool { return r == ':' || r == '-' })
		if len(octets) != 6 || strings.Count(s, ":")+strings.Count(s, "-") != 5 {
			return "", fmt.Errorf("MAC %q: want six octets", s)
		}
	case strings.Contains(s, "."):
		groups := strings.Split(s, ".")
		if len(groups) != 3 {
			return "", fmt.Errorf("MAC %q: want three groups of four digits", s)
		}
		for _, g := range groups {
			if len(g) != 4 {
				return "", fmt.Errorf("MAC %q: want three groups of four digits", s)
			}
			octets = append(octets, g[:2], g[2:])
		}
	case len(s) == 12:
		for i := 0; i < 12; i += 2 {
			octets = append(octets, s[i:i+2])
		}
	default:
		return "", fmt.Errorf("MAC %q: want six octets (00:0a:35:00:01:22)", s)
	}
	out := make([]string, 6)
	for i, o := range octets {
		v, err := strconv.ParseUint(o, 16, 8)
		if err != nil || len(o) > 2 {
			return "", fmt.Errorf("MAC %q: %q is not an octet", s, o)
		}
		out[i] = fmt.Sprintf("%02x", v)
	}
	return strings.Join(out, ":"), nil
}
