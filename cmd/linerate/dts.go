package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/u-root/u-root/pkg/dt"
	"github.com/zynqnet/linerate/dts"
	"github.com/zynqnet/linerate/internal/atomicfile"
)

const dtsUsage = `Usage: linerate dts overlay --board BOARD [--gem gemN] SETTINGS... -o FILE.dtbo|FILE.dts
       linerate dts merge BASE.dtb OVERLAY.dtbo... -o OUT.dtb
       linerate dts show [FILE.dtb | --live] [--json]
       linerate dts apply FILE.dtbo [--name NAME] | --remove NAME

Device-tree overlays for the Cadence GEM nodes of Zynq boards.

overlay writes an overlay for a board's GEM: .dts as source (dtc -@ -I dts -O dtb
compiles it), .dtbo as a binary overlay that fdtoverlay, U-Boot's fdt apply and
'linerate dts merge' take. Its target is the GEM's label (target = <&gem0>, resolved
through the base's __symbols__); with --base, linerate checks the base has the GEM and
writes target-path instead when the base has no symbols (kernel-built DTBs).
  --board NAME        the board (or detected from --base); known: see 'linerate profile list'
  --gem gemN          which GEM (default: the board's Ethernet jack: gem0 on Zynq-7000
                      boards, gem3 on ZynqMP boards)
  --rx-ring N         linerate,rx-ring-size: RX descriptors, 64..8192, a power of two
  --tx-ring N         linerate,tx-ring-size: TX descriptors, 64..4096, a power of two
  --tune PROFILE      linerate,tune-profile: a built-in profile applied at boot
  --mac XX:XX:..      local-mac-address and mac-address
  --phy-mode MODE     phy-mode (rgmii-id, rgmii, sgmii, ...)
  --rx-watermark N    cdns,rx-watermark: RX partial store-and-forward, 1..4095 (Linux 6.5+)
  --disable/--enable  status = "disabled" / "okay"
  --base FILE.dtb     the DTB the overlay is for: check it, pick label or target-path
  --target-path PATH  target the node by path instead of by label
  -o FILE             .dts, .dtbo (or .dtb) by its extension

merge applies overlays to a base DTB offline, as fdtoverlay does (phandles renumbered,
__fixups__ and __local_fixups__ resolved, __symbols__ updated), and writes OUT.dtb.

show lists the GEM nodes of a DTB, or with --live of the running kernel's tree
(/proc/device-tree, else /sys/firmware/fdt): path, label, alias, status, compatible,
phy-mode, MAC, PHY and the linerate properties.
  --root DIR          read the live tree under DIR instead of /

apply loads an overlay at run time through configfs
(/sys/kernel/config/device-tree/overlays, vendor kernels) and reads its status back;
--remove unloads one. Where the kernel has no configfs overlays it says so and prints
the U-Boot commands to use instead.
  --name NAME         the configfs directory (default: the file's name without .dtbo)
`

// The boot-time half of the overlays is 'linerate tune IFACE --from-dt': it reads the
// linerate properties of the live GEM node and applies them as one tune transaction.

func dtsCommand() command {
	return command{
		name:    "dts",
		summary: "device-tree overlays for the GEM nodes: write, merge, show, apply",
		usage:   dtsUsage,
		run: func(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
			if len(args) == 0 {
				return usageError("give overlay, merge, show or apply")
			}
			switch args[0] {
			case "-h", "--help", "help":
				return flag.ErrHelp
			case "overlay":
				return dtsOverlay(args[1:], stdout)
			case "merge":
				return dtsMerge(args[1:], stdout)
			case "show":
				return dtsShow(args[1:], stdout)
			case "apply":
				return dtsApply(args[1:], stdout, stderr)
			}
			return usageError("unknown dts command %q: give overlay, merge, show or apply", args[0])
		},
	}
}

func dtsOverlay(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("dts overlay", flag.ContinueOnError)
	var o dts.Overlay
	boardName := fs.String("board", "", "")
	fs.StringVar(&o.GEM, "gem", "", "")
	rx := fs.Uint("rx-ring", 0, "")
	tx := fs.Uint("tx-ring", 0, "")
	wm := fs.Uint("rx-watermark", 0, "")
	mac := fs.String("mac", "", "")
	fs.StringVar(&o.PhyMode, "phy-mode", "", "")
	disable := fs.Bool("disable", false, "")
	enable := fs.Bool("enable", false, "")
	fs.StringVar(&o.Profile, "tune", "", "")
	basePath := fs.String("base", "", "")
	fs.StringVar(&o.TargetPath, "target-path", "", "")
	out := fs.String("o", "", "")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError("unexpected argument %q", pos[0])
	}
	if *out == "" {
		return usageError("-o FILE.dtbo or -o FILE.dts is required")
	}
	ext := strings.ToLower(filepath.Ext(*out))
	if ext != ".dts" && ext != ".dtso" && ext != ".dtbo" && ext != ".dtb" {
		return usageError("-o %s: name it .dts (source) or .dtbo (binary)", *out)
	}
	if *disable && *enable {
		return usageError("--disable and --enable contradict each other")
	}
	if *rx > dts.MaxRxRing*2 || *tx > dts.MaxTxRing*2 {
		return usageError("ring sizes: RX 64..8192, TX 64..4096")
	}
	if *wm == 0 && flagGiven(fs, "rx-watermark") {
		return usageError("--rx-watermark 0: want 1..4095 (0 disables partial store-and-forward; leave the flag out)")
	}
	o.RxRing, o.TxRing, o.RxWatermark = uint32(*rx), uint32(*tx), uint32(min(*wm, 1<<20))
	for _, r := range []string{"rx-ring", "tx-ring"} {
		if flagGiven(fs, r) && fs.Lookup(r).Value.String() == "0" {
			return usageError("--%s 0: want 64 or more", r)
		}
	}
	if *disable {
		o.Status = "disabled"
	}
	if *enable {
		o.Status = "okay"
	}
	if *mac != "" {
		hw, err := net.ParseMAC(*mac)
		if err != nil || len(hw) != 6 {
			return usageError("--mac %q: want six hex bytes, 00:0a:35:01:02:03", *mac)
		}
		o.MAC = hw
	}
	o.Comment = "linerate dts overlay " + strings.Join(args, " ")
	if err := o.Prepare(*boardName, *basePath); err != nil {
		return err
	}
	n, err := o.WriteFile(*out)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s (%d bytes): %s\n", *out, n, o.Describe())
	return nil
}

func dtsMerge(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("dts merge", flag.ContinueOnError)
	out := fs.String("o", "", "")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 2 || *out == "" {
		return usageError("give BASE.dtb, at least one OVERLAY.dtbo and -o OUT.dtb")
	}
	base, _, err := dts.ReadFile(pos[0])
	if err != nil {
		return err
	}
	var ovs []*dt.FDT
	for _, p := range pos[1:] {
		o, _, err := dts.ReadFile(p)
		if err != nil {
			return err
		}
		ovs = append(ovs, o)
	}
	merged := base
	for i, o := range ovs {
		if merged, err = dts.Merge(merged, o); err != nil {
			return &dts.Error{Msg: fmt.Sprintf("apply %s to %s: %v", pos[i+1], pos[0], err)}
		}
	}
	data, err := dts.Encode(merged)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(*out, data, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s (%d bytes): %s with %s\n", *out, len(data), pos[0], strings.Join(pos[1:], ", "))
	return nil
}

func dtsShow(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("dts show", flag.ContinueOnError)
	live := fs.Bool("live", false, "")
	root := fs.String("root", "/", "")
	asJSON := fs.Bool("json", false, "")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if *live == (len(pos) == 1) || len(pos) > 1 {
		return usageError("give one FILE.dtb or --live")
	}
	var f *dt.FDT
	var src string
	if *live {
		if f, src, err = dts.ReadLive(*root); err != nil {
			return err
		}
	} else {
		src = pos[0]
		if f, _, err = dts.ReadFile(src); err != nil {
			return err
		}
	}
	gems := dts.GEMs(f)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(struct {
			Source     string    `json:"source"`
			Model      string    `json:"model,omitempty"`
			Compatible []string  `json:"compatible"`
			GEMs       []dts.GEM `json:"gems"`
		}{src, dts.PropString(f.RootNode, "model"), dts.PropStrings(f.RootNode, "compatible"), gems})
	}
	dts.WriteGEMsText(stdout, src, f)
	return nil
}

func dtsApply(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("dts apply", flag.ContinueOnError)
	name := fs.String("name", "", "")
	remove := fs.String("remove", "", "")
	root := fs.String("root", "/", "")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	c := &dts.Configfs{Root: *root}
	if *root == "/" {
		c.Mount = dts.MountConfigfs
	}
	if *remove != "" {
		if len(pos) > 0 {
			return usageError("--remove takes no file")
		}
		if err := c.Remove(*remove); err != nil {
			return configfsErr(err, "")
		}
		fmt.Fprintf(stdout, "removed overlay %s\n", *remove)
		return nil
	}
	if len(pos) != 1 {
		return usageError("give one FILE.dtbo")
	}
	file := pos[0]
	if *name == "" {
		*name = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	}
	blob, err := os.ReadFile(file)
	if err != nil {
		return &dts.Error{Msg: fmt.Sprintf("%s: %v", file, errors.Unwrap(err)), Err: err}
	}
	st, err := c.Apply(*name, blob)
	if err != nil {
		var de *dts.Error
		if errors.As(err, &de) {
			return &dts.Error{Msg: fmt.Sprintf("%s: %v", file, err), Err: err}
		}
		return configfsErr(err, file)
	}
	fmt.Fprintf(stdout, "overlay %s: %s (remove with linerate dts apply --remove %s)\n", *name, st, *name)
	return nil
}

func configfsErr(err error, file string) error {
	if !errors.Is(err, dts.ErrNoConfigfs) {
		return err
	}
	msg := fmt.Sprintf("%v (/%s is missing: mainline kernels have no runtime overlay interface; Xilinx's vendor kernels have it with CONFIG_OF_CONFIGFS)", err, dts.ConfigfsDir)
	if file != "" {
		msg += "\n" + dts.UBootHelp(file)
	}
	return &exitError{code: 1, err: errors.New(strings.TrimRight(msg, "\n"))}
}
