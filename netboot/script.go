// Package netboot is what a station serves a board that boots from the network, as a
// factory line boots every board into its tester image: DHCP (insomniacslk/dhcp's
// server4) on the line's test network only, with the options U-Boot's dhcp takes
// (next-server, bootfile), and TFTP (pack.ag/tftp) read-only from a boot directory,
// with the U-Boot boot script made for the station (its address, the plan, the
// fixture). It knows nothing of reports: the station wires it and records what it says.
//
// U-Boot's side: doc/README.distro and the legacy image format of include/image.h in
// U-Boot's source; DHCP: RFC 2131, 2132; TFTP: RFC 1350, 2347, 2348, 2349, 7440.
package netboot

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"strings"
	"time"
)

// U-Boot's legacy image header (include/image.h), what mkimage -T script writes.
const (
	legacyMagic  = 0x27051956
	legacyHeader = 64
	legacyName   = 32
	osLinux      = 5
	typeScript   = 6
	compNone     = 0
)

// Architectures a legacy image names (include/image.h IH_ARCH_*).
var archs = map[string]byte{"arm": 2, "arm64": 22}

// ScriptImage wraps a U-Boot script as mkimage -A ARCH -O linux -T script -C none -n
// NAME writes it (boot.scr.uimg, which U-Boot's source command runs): the legacy
// header, then the multi-file body U-Boot reads a script from (the script's length, a
// zero word, the script). made is the header's time stamp.
func ScriptImage(arch, name, script string, made time.Time) ([]byte, error) {
	a, ok := archs[arch]
	if !ok {
		return nil, fmt.Errorf("script image: architecture %q: want arm or arm64", arch)
	}
	if len(name) >= legacyName {
		return nil, fmt.Errorf("script image: name %q: at most %d characters", name, legacyName-1)
	}
	var body bytes.Buffer
	binary.Write(&body, binary.BigEndian, uint32(len(script)))
	binary.Write(&body, binary.BigEndian, uint32(0))
	body.WriteString(script)
	data := body.Bytes()
	h := make([]byte, legacyHeader)
	be := binary.BigEndian
	be.PutUint32(h[0:], legacyMagic)
	be.PutUint32(h[8:], uint32(made.Unix()))
	be.PutUint32(h[12:], uint32(len(data)))
	be.PutUint32(h[24:], crc32.ChecksumIEEE(data))
	h[28], h[29], h[30], h[31] = osLinux, a, typeScript, compNone
	copy(h[32:], name)
	be.PutUint32(h[4:], crc32.ChecksumIEEE(h))
	return append(h, data...), nil
}

// ScriptParams are what a boot script carries to every board that fetches it: where
// the station is, the plan and fixture, and the boards it has tester images for.
type ScriptParams struct {
	// Station is the station's report URL; the peer (iperf3, reflector) is U-Boot's
	// serverip, the station's address on the test network.
	Station string
	Plan    string
	Fixture string
	// Boards are the tester images the boot directory holds (linerate-BOARD.itb), each
	// with the device tree compatible U-Boot's own device tree has on that board and
	// the FIT configuration to boot.
	Boards []ScriptBoard
	// Extra is more of the kernel command line (linerate.after=reboot, ...).
	Extra string
	// Card, when given, makes the script of an SD card that stays in a fixture: U-Boot's
	// device and partition ("mmc 0:1"). The script asks the network for a station's
	// boot script first and runs it; when no station answers it boots the tester image
	// on the card, with the plan's own station address.
	Card string
}

// FITAddr is where the boot script loads the FIT image: 256 MiB into RAM, above what
// the kernel and its initramfs unpack into, below U-Boot's own place at the top (the
// boards have 1 GiB or more).
const FITAddr = 0x10000000

// ScriptBoard is one board type a boot script knows.
type ScriptBoard struct {
	Name, Compatible, Config, Console string
}

// Script is the boot script: which board U-Boot runs on (its device tree's first
// compatible), the kernel command line with the station's address, plan and fixture,
// then the board's FIT over TFTP from the station, booted with its configuration
// (the plan's GEM overlays applied by U-Boot).
func Script(p ScriptParams) string {
	var b strings.Builder
	if p.Card != "" {
		b.WriteString("# linerate SD card: a station on the network boots the board, else the tester image on the card\n")
		fmt.Fprintf(&b, "if dhcp ${scriptaddr} %s; then source ${scriptaddr}; fi\n", BootFile)
		b.WriteString("echo \"linerate: no station booted the board: the tester image on the card\"\n")
	} else {
		b.WriteString("# linerate netboot: made by the station for every board that fetches it\n")
		b.WriteString("echo \"linerate: netboot from the station at ${serverip}\"\n")
	}
	b.WriteString("fdt addr ${fdtcontroladdr}\nfdt get value linerate_compat / compatible\nsetenv linerate_board\n")
	for _, bd := range p.Boards {
		fmt.Fprintf(&b, "if test \"${linerate_compat}\" = \"%s\"; then setenv linerate_board %s; setenv linerate_conf %s; setenv linerate_console %s; fi\n", bd.Compatible, bd.Name, bd.Config, bd.Console)
	}
	b.WriteString("if test -z \"${linerate_board}\"; then echo \"linerate: no tester image here for ${linerate_compat}\"; exit; fi\n")
	args := []string{"console=${linerate_console},115200", "linerate.run=validate", "linerate.ip=dhcp"}
	if p.Card == "" {
		args = append(args, "linerate.peer=${serverip}")
	}
	if p.Station != "" {
		args = append(args, "linerate.station="+p.Station)
	}
	args = append(args, "linerate.plan="+p.Plan)
	if p.Fixture != "" {
		args = append(args, "linerate.fixture="+p.Fixture)
	}
	if p.Extra != "" {
		args = append(args, p.Extra)
	}
	fmt.Fprintf(&b, "setenv bootargs \"%s\"\n", strings.Join(args, " "))
	b.WriteString("echo \"linerate: linerate-${linerate_board}.itb, configuration ${linerate_conf}\"\n")
	// The FIT goes high in memory: a zImage decompresses itself to the bottom of RAM,
	// and the script U-Boot runs lies at scriptaddr.
	fmt.Fprintf(&b, "setenv linerate_fit %#x\n", FITAddr)
	if p.Card != "" {
		fmt.Fprintf(&b, "load %s ${linerate_fit} linerate-${linerate_board}.itb || exit\n", p.Card)
	} else {
		b.WriteString("tftpboot ${linerate_fit} linerate-${linerate_board}.itb || exit\n")
	}
	b.WriteString("bootm ${linerate_fit}#${linerate_conf}\n")
	// bootm came back: the image has no configuration for the plan's profile.
	// (No apostrophe in the script's text: U-Boot's hush reads one as a quote even
	// inside double quotes, and runs off the end of the script.)
	b.WriteString("echo \"linerate: no ${linerate_conf} in linerate-${linerate_board}.itb: booting conf-${linerate_board}, without the GEM overlay of the profile\"\n")
	b.WriteString("bootm ${linerate_fit}#conf-${linerate_board}\n")
	return b.String()
}
