package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/zynqnet/linerate/dts"
	"github.com/zynqnet/linerate/internal/atomicfile"
	"github.com/zynqnet/linerate/internal/cli"
)

func dtsCommand() *cli.Command {
	return &cli.Command{
		Name: "dts", Summary: "device-tree overlays for the GEM nodes: write, merge, show, apply",
		Usage: []string{"dts overlay --board BOARD [--gem gemN] SETTINGS... -o FILE.dtbo|FILE.dts", "dts merge BASE.dtb OVERLAY.dtbo... -o OUT.dtb",
			"dts show [FILE.dtb | --live] [--json]", "dts apply FILE.dtbo [--name NAME] | --remove NAME"},
		About: `Device-tree overlays for the Cadence GEM nodes of Zynq boards. The boot-time half is
'linerate tune IFACE --from-dt': it reads the linerate,* properties of the live GEM node
and applies them as one tune transaction.`,
		Subs: []*cli.Command{dtsOverlayCommand(), dtsMergeCommand(), dtsShowCommand(), dtsApplyCommand()},
	}
}

func dtsOverlayCommand() *cli.Command {
	return &cli.Command{
		Name: "overlay", Summary: "write an overlay for a board's GEM (.dts source or .dtbo binary)",
		Usage: []string{"dts overlay --board BOARD [--gem gemN] SETTINGS... -o FILE.dtbo|FILE.dts"},
		About: `Writes an overlay for a board's GEM: .dts as source (dtc -@ -I dts -O dtb compiles it),
.dtbo as a binary overlay that fdtoverlay, U-Boot's fdt apply and 'linerate dts merge'
take. Its target is the GEM's label (target = <&gem0>, resolved through the base's
__symbols__); with --base, linerate checks the base has the GEM and writes target-path
instead when the base has no symbols (kernel-built DTBs).`,
		Examples: []cli.Example{cli.Ex("dts overlay --board zc702 --rx-ring 2048 --tx-ring 1024 -o rings.dtbo", "ring depths that 'tune --from-dt' applies at boot"),
			cli.Ex("dts overlay --board zcu102 --base zynqmp-zcu102.dtb --mac 00:0a:35:01:02:03 -o mac.dtbo", "a MAC, targeted by path on a kernel-built DTB")},
		Flags: dtsOverlayFlags,
	}
}

func dtsOverlayFlags(fs *flag.FlagSet) cli.Run {
	var o dts.Overlay
	boardName := fs.String("board", "", "the `BOARD` (or detected from --base); known: see 'linerate board'")
	fs.StringVar(&o.GEM, "gem", "", "which GEM: `gemN` (default: the board's Ethernet jack: gem0 on Zynq-7000 boards, gem3 on ZynqMP boards)")
	ring := "want 64 or more, a power of two"
	fs.Var(cli.Uint32{P: &o.RxRing, Min: 1, Max: 1 << 20, Want: ring}, "rx-ring", "linerate,rx-ring-size: `N` RX descriptors, 64..8192, a power of two")
	fs.Var(cli.Uint32{P: &o.TxRing, Min: 1, Max: 1 << 20, Want: ring}, "tx-ring", "linerate,tx-ring-size: `N` TX descriptors, 64..4096, a power of two")
	fs.Var(cli.Uint32{P: &o.RxWatermark, Min: 1, Max: dts.MaxRxWatermark, Want: "want 1..4095 (0 disables partial store-and-forward: leave the flag out)"},
		"rx-watermark", "cdns,rx-watermark: `N`, RX partial store-and-forward, 1..4095 (Linux 6.5+)")
	fs.Var(cli.MAC{P: &o.MAC}, "mac", "local-mac-address and mac-address: `XX:XX:XX:XX:XX:XX`")
	fs.StringVar(&o.PhyMode, "phy-mode", "", "phy-mode: `MODE` (rgmii-id, rgmii, sgmii, ...)")
	disable := fs.Bool("disable", false, `status = "disabled"`)
	enable := fs.Bool("enable", false, `status = "okay"`)
	fs.StringVar(&o.Profile, "tune", "", "linerate,tune-profile: a built-in `PROFILE` applied at boot")
	basePath := fs.String("base", "", "the DTB `FILE` the overlay is for: check it, pick label or target-path")
	fs.StringVar(&o.TargetPath, "target-path", "", "target the node by `PATH` instead of by label")
	out := fs.String("o", "", "write `FILE`: .dts, .dtbo (or .dtb) by its extension")
	return func(ctx context.Context, pos []string, std cli.IO) error {
		switch ext := strings.ToLower(filepath.Ext(*out)); {
		case len(pos) > 0:
			return usageError("unexpected argument %q", pos[0])
		case *out == "":
			return usageError("-o FILE.dtbo or -o FILE.dts is required")
		case ext != ".dts" && ext != ".dtso" && ext != ".dtbo" && ext != ".dtb":
			return usageError("-o %s: name it .dts (source) or .dtbo (binary)", *out)
		case *disable && *enable:
			return usageError("--disable and --enable contradict each other")
		case *disable:
			o.Status = "disabled"
		case *enable:
			o.Status = "okay"
		}
		o.Comment = "linerate dts overlay " + cli.FlagLine(fs)
		if err := o.Prepare(*boardName, *basePath); err != nil {
			return err
		}
		n, err := o.WriteFile(*out)
		if err != nil {
			return err
		}
		fmt.Fprintf(std.Stdout, "wrote %s (%d bytes): %s\n", *out, n, o.Describe())
		return nil
	}
}

func dtsMergeCommand() *cli.Command {
	return &cli.Command{
		Name: "merge", Summary: "apply overlays to a base DTB offline, as fdtoverlay does",
		Usage: []string{"dts merge BASE.dtb OVERLAY.dtbo... -o OUT.dtb"},
		About: `Applies overlays to a base DTB offline, as fdtoverlay does (phandles renumbered,
__fixups__ and __local_fixups__ resolved, __symbols__ updated), and writes OUT.dtb.`,
		Examples: []cli.Example{cli.Ex("dts merge zynq-zc702.dtb rings.dtbo -o boot.dtb", "the board's boot DTB with the rings")},
		Flags: func(fs *flag.FlagSet) cli.Run {
			out := fs.String("o", "", "write the merged DTB to `FILE`")
			return func(ctx context.Context, pos []string, std cli.IO) error { return dtsMerge(pos, *out, std.Stdout) }
		},
	}
}

func dtsMerge(pos []string, out string, stdout io.Writer) error {
	if len(pos) < 2 || out == "" {
		return usageError("give BASE.dtb, at least one OVERLAY.dtbo and -o OUT.dtb")
	}
	data, err := dts.MergeFiles(pos[0], pos[1:])
	if err != nil {
		return err
	}
	if err := atomicfile.Write(out, data, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s (%d bytes): %s with %s\n", out, len(data), pos[0], strings.Join(pos[1:], ", "))
	return nil
}

func dtsShowCommand() *cli.Command {
	return &cli.Command{
		Name: "show", Summary: "the GEM nodes of a DTB, or of the running kernel's tree",
		Usage: []string{"dts show [FILE.dtb | --live] [--json]"},
		About: `Lists the GEM nodes of a DTB, or with --live of the running kernel's tree
(/proc/device-tree, else /sys/firmware/fdt): path, label, alias, status, compatible,
phy-mode, MAC, PHY and the linerate properties.`,
		Examples: []cli.Example{cli.Ex("dts show --live", "what the running kernel has")},
		Flags: func(fs *flag.FlagSet) cli.Run {
			live := fs.Bool("live", false, "the running kernel's tree instead of a file")
			root := fs.String("root", "/", "read the live tree under `DIR`")
			asJSON := fs.Bool("json", false, "the nodes as JSON")
			return func(ctx context.Context, pos []string, std cli.IO) error {
				return dtsShow(pos, *live, *root, *asJSON, std.Stdout)
			}
		},
	}
}

func dtsShow(pos []string, live bool, root string, asJSON bool, stdout io.Writer) error {
	if live == (len(pos) == 1) || len(pos) > 1 {
		return usageError("give one FILE.dtb or --live")
	}
	return dts.Show(stdout, append(pos, "")[0], root, live, asJSON)
}

func dtsApplyCommand() *cli.Command {
	return &cli.Command{
		Name: "apply", Summary: "load an overlay at run time through configfs, or remove one",
		Usage: []string{"dts apply FILE.dtbo [--name NAME]", "dts apply --remove NAME"},
		About: `Loads an overlay at run time through configfs (/sys/kernel/config/device-tree/overlays,
vendor kernels) and reads its status back; --remove unloads one. Where the kernel has no
configfs overlays it says so and prints the U-Boot commands to use instead.`,
		Flags: func(fs *flag.FlagSet) cli.Run {
			name := fs.String("name", "", "the configfs directory `NAME` (default: the file's name without .dtbo)")
			remove := fs.String("remove", "", "unload the overlay `NAME`")
			root := fs.String("root", "/", "the machine's root `DIR` (tests: a tree with a fake configfs)")
			return func(ctx context.Context, pos []string, std cli.IO) error {
				return dtsApply(pos, *name, *remove, *root, std.Stdout)
			}
		},
	}
}

func dtsApply(pos []string, name, remove, root string, stdout io.Writer) error {
	c := &dts.Configfs{Root: root}
	if root == "/" {
		c.Mount = dts.MountConfigfs
	}
	var err error
	switch {
	case remove != "" && len(pos) > 0:
		return usageError("--remove takes no file")
	case remove != "":
		if err = c.Remove(remove); err == nil {
			fmt.Fprintf(stdout, "removed overlay %s\n", remove)
		}
	case len(pos) != 1:
		return usageError("give one FILE.dtbo")
	default:
		var st string
		if name, st, err = c.ApplyFile(pos[0], name); err == nil {
			fmt.Fprintf(stdout, "overlay %s: %s (remove with linerate dts apply --remove %s)\n", name, st, name)
		}
	}
	if errors.Is(err, dts.ErrNoConfigfs) {
		return cli.Fail(err) // the kernel's limit, not the input's
	}
	return err
}
