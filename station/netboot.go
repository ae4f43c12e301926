package station

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/zynqnet/linerate/internal/atomicfile"
	"github.com/zynqnet/linerate/internal/badinput"
	"github.com/zynqnet/linerate/internal/cli"
	"github.com/zynqnet/linerate/netboot"
	"github.com/zynqnet/linerate/plan"
)

// NetbootConfig is how the station boots the line's boards into the tester image:
// DHCP and TFTP on the test network's interface, a boot directory of FIT images
// (linerate-BOARD.itb, as make image writes them), and what the boot script hands every
// board on its kernel command line.
type NetbootConfig struct {
	Iface   string // "": no netboot
	BootDir string
	Pool    string
	MACs    []string
	// Plan is the plan the boards run (linerate.plan=); its board: field picks the FIT
	// configuration (the profile's GEM overlay). LoadPlan reads it (a built-in name or a
	// file), so the station checks it before it serves.
	Plan     string
	LoadPlan func(string) (*plan.Plan, error)
	// Fixture is the boards' linerate.fixture= (default: the interface's name).
	Fixture string
	// ReportURL is the boards' linerate.station= (default: the station's own reports
	// URL on the test network's address).
	ReportURL string
	// Args are more of the kernel command line (a token: linerate.token=...).
	Args string
}

// NetbootFlags registers the netboot flags and returns what checks them once parsed;
// load reads a plan (validate.Load: a built-in name or a file).
func NetbootFlags(fs *flag.FlagSet, c *NetbootConfig, load func(string) (*plan.Plan, error)) func() error {
	c.LoadPlan = load
	fs.StringVar(&c.Iface, "netboot", "", "boot the line's boards from the network on `IFACE`, the test network's interface: DHCP (after checking no other server answers there) and read-only TFTP of --boot-dir")
	fs.StringVar(&c.BootDir, "boot-dir", "", "the tester images boards boot: `DIR` of linerate-BOARD.itb (make image writes them in out/)")
	fs.StringVar(&c.Pool, "netboot-pool", "", "the boards' addresses: `FIRST-LAST` of IFACE's subnet")
	macs := fs.String("netboot-macs", "", "answer only these MAC prefixes: `PREFIX[,PREFIX...]` (a vendor's OUI 00:0a:35, the line's range) (default: every board)")
	fs.StringVar(&c.Plan, "netboot-plan", "", "the plan the boards run: a built-in `NAME` or a plan file (its board: picks the FIT configuration)")
	fs.StringVar(&c.Fixture, "netboot-fixture", "", "the fixture the boards report (default: IFACE)")
	fs.StringVar(&c.ReportURL, "netboot-station", "", "where the boards post their reports: `URL` (default: this station on IFACE's address)")
	fs.StringVar(&c.Args, "netboot-args", "", "more of the boards' kernel command line: `ARGS` (linerate.token=...)")
	return func() error {
		if *macs != "" {
			c.MACs = strings.Split(*macs, ",")
		}
		if c.Iface == "" {
			if c.BootDir != "" || c.Pool != "" || c.Plan != "" || *macs != "" {
				return badinput.Errorf("--boot-dir, --netboot-pool, --netboot-plan and --netboot-macs go with --netboot IFACE")
			}
			return nil
		}
		if c.BootDir == "" || c.Pool == "" || c.Plan == "" {
			return badinput.Errorf("--netboot %s needs --boot-dir DIR, --netboot-pool FIRST-LAST and --netboot-plan PLAN", c.Iface)
		}
		// U-Boot's hush takes a ' as a quote even inside double quotes.
		if strings.ContainsAny(c.Args+c.Fixture+c.ReportURL+c.Plan, "\"'$;\\\n#") {
			return badinput.Errorf("--netboot-args, --netboot-fixture, --netboot-station, --netboot-plan: want none of \" ' $ ; \\ # or a newline (the boot script carries them to U-Boot's shell)")
		}
		return nil
	}
}

// bootImages are the tester images of the boot directory, each read for what it says
// of itself (netboot.ReadImage).
func bootImages(dir string) ([]netboot.Image, error) {
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("--boot-dir %s: not a directory", dir)
	}
	names, _ := filepath.Glob(filepath.Join(dir, "linerate-*.itb"))
	var out []netboot.Image
	for _, n := range names {
		im, err := netboot.ReadImage(n)
		if err != nil {
			return nil, fmt.Errorf("--boot-dir: %w", err)
		}
		out = append(out, im)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--boot-dir %s holds no tester image (linerate-BOARD.itb): make image BOARD=zc702 writes out/linerate-zc702.itb", dir)
	}
	return out, nil
}

// scriptParams are the boot script's: the images' boards, each with the configuration
// of the plan's profile (the plan's board:, or the board's own for auto) when the image
// has it, and the kernel command line.
func scriptParams(c NetbootConfig, images []netboot.Image, p *plan.Plan, reportURL string) netboot.ScriptParams {
	var sb []netboot.ScriptBoard
	for _, im := range images {
		profile := p.Board
		if profile == "" || profile == "auto" {
			profile = im.Board
		}
		conf := "conf-" + im.Board + "-" + profile
		if !im.HasConfig(conf) {
			conf = "conf-" + im.Board
		}
		for _, compat := range im.Compatible {
			sb = append(sb, netboot.ScriptBoard{Name: im.Board, Compatible: compat, Config: conf, Console: im.Console})
		}
	}
	return netboot.ScriptParams{Station: reportURL, Plan: c.Plan, Fixture: c.Fixture, Boards: sb, Extra: c.Args}
}

// BootScriptCommand is 'linerate station boot-script': the boot script a station
// serves, or an SD card's (netboot first, the card's image else), written as U-Boot
// runs it (a legacy script image) or as text. load reads a plan.
func BootScriptCommand(load func(string) (*plan.Plan, error)) *cli.Command {
	return &cli.Command{
		Name: "boot-script", Summary: "the U-Boot boot script of a netboot or of a fixture's SD card",
		Usage:    []string{"station boot-script --board BOARD[,BOARD...] --plan PLAN [--station URL] [--fixture NAME] [--args ARGS] [--card DEV:PART] [--text] -o FILE"},
		About:    "Writes the boot script a station serves its boards (boot.scr.uimg), as mkimage -T script writes it; with --card, the script of an SD card that stays in a fixture: U-Boot asks the network for a station's script first and runs it, and when no station answers it boots the tester image on the card (linerate-BOARD.itb on the partition DEV:PART).",
		Examples: []cli.Example{cli.Ex("station boot-script --image out/linerate-zc702.itb --plan qemu-zc702 --card 'mmc 0:1' -o boot.scr", "the script of make sdcard's card")},
		Flags: func(fs *flag.FlagSet) cli.Run {
			c := NetbootConfig{}
			names := fs.String("image", "", "the tester images the script boots: `FILE.itb[,FILE.itb...]` (make image writes out/linerate-BOARD.itb)")
			fs.StringVar(&c.Plan, "plan", "", "the plan the boards run: a built-in `NAME` or a plan file")
			fs.StringVar(&c.ReportURL, "station", "", "where the boards post their reports: `URL` (default: the plan's)")
			fs.StringVar(&c.Fixture, "fixture", "", "the fixture the boards report: `NAME`")
			fs.StringVar(&c.Args, "args", "", "more of the kernel command line: `ARGS`")
			card := fs.String("card", "", "an SD card's script: the tester image is on U-Boot's `DEV:PART` (mmc 0:1) when no station answers")
			text := fs.Bool("text", false, "write the script as text, not as U-Boot's script image")
			out := fs.String("o", "", "write `FILE`")
			return func(ctx context.Context, pos []string, std cli.IO) error {
				if *names == "" || c.Plan == "" || *out == "" {
					return badinput.Errorf("give --image, --plan and -o")
				}
				if strings.ContainsAny(c.Args+c.Fixture+c.ReportURL+c.Plan+*card, "\"'$;\\\n#") {
					return badinput.Errorf("--args, --fixture, --station, --plan, --card: want none of \" ' $ ; \\ # or a newline (the script carries them to U-Boot's shell)")
				}
				var images []netboot.Image
				for _, n := range strings.Split(*names, ",") {
					im, err := netboot.ReadImage(n)
					if err != nil {
						return badinput.Errorf("--image %v", err)
					}
					images = append(images, im)
				}
				p, err := load(c.Plan)
				if err != nil {
					return badinput.Errorf("--plan: %v", err)
				}
				sp := scriptParams(c, images, p, c.ReportURL)
				sp.Card = *card
				b := []byte(netboot.Script(sp))
				if !*text {
					if b, err = netboot.ScriptImage(images[0].Arch, "linerate boot script", string(b), time.Now()); err != nil {
						return err
					}
				}
				return atomicfile.Write(*out, b, 0o644)
			}
		},
	}
}

// maxBoots bounds the boot events a station keeps for /api/boots.
const maxBoots = 4096

// Boot is one event of a board's netboot as the station saw it: its lease, or a file
// it fetched.
type Boot struct {
	At      time.Time `json:"at"`
	MAC     string    `json:"mac"`
	IP      string    `json:"ip,omitempty"`
	Event   string    `json:"event"` // offered, bound, refused, released, declined, fetched, failed
	Vendor  string    `json:"vendor,omitempty"`
	File    string    `json:"file,omitempty"`
	Bytes   int64     `json:"bytes,omitempty"`
	Seconds float64   `json:"seconds,omitempty"`
	Error   string    `json:"error,omitempty"`
}

// boots are the station's last boot events, oldest first.
type boots struct {
	mu   sync.Mutex
	list []Boot
}

func (b *boots) add(e Boot) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.list) >= maxBoots {
		b.list = slices.Delete(b.list, 0, len(b.list)-maxBoots+1)
	}
	b.list = append(b.list, e)
}

func (b *boots) all() []Boot {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Boot{}, b.list...)
}

// netbooter is the station's DHCP and TFTP servers while they run.
type netbooter struct {
	dhcp *netboot.DHCP
	tftp *netboot.TFTP
	conn *net.UDPConn
}

// startNetboot checks everything netboot needs (the interface's address, the pool, the
// boot directory, the plan, no other DHCP server on the network) and only then serves
// DHCP and TFTP; stop ends both.
func startNetboot(ctx context.Context, c NetbootConfig, listen string, https bool, s *Server) (stop func(), err error) {
	if c.Iface == "" {
		return func() {}, nil
	}
	if c.Fixture == "" {
		c.Fixture = c.Iface
	}
	images, err := bootImages(c.BootDir)
	if err != nil {
		return nil, badinput.Errorf("%v", err)
	}
	p, err := c.LoadPlan(c.Plan)
	if err != nil {
		return nil, badinput.Errorf("--netboot-plan: %v", err)
	}
	d, err := netboot.NewDHCP(netboot.DHCPConfig{Iface: c.Iface, Pool: c.Pool, MACs: c.MACs, OnLease: s.leased(c)})
	if err != nil {
		return nil, badinput.Errorf("%v", err)
	}
	sp := scriptParams(c, images, p, reportURL(c.ReportURL, d.Server(), listen, https))
	img, err := netboot.ScriptImage(images[0].Arch, "linerate netboot", netboot.Script(sp), time.Now())
	if err != nil {
		return nil, err
	}
	if err := d.Probe(ctx, netboot.ProbeWait); err != nil {
		return nil, badinput.Errorf("%v", err)
	}
	// Every socket is opened here, on the caller's thread: an error before anything is
	// served, and the sockets in the namespace the station was started in.
	if err := d.Listen(); err != nil {
		return nil, badinput.Errorf("%v", err)
	}
	n := &netbooter{dhcp: d}
	if n.tftp, err = netboot.NewTFTP(c.BootDir, map[string][]byte{netboot.BootFile: img}, s.fetched(d)); err != nil {
		d.Close()
		return nil, badinput.Errorf("%v", err)
	}
	if n.conn, err = net.ListenUDP("udp4", &net.UDPAddr{IP: d.Server(), Port: 69}); err != nil {
		n.tftp.Close()
		d.Close()
		return nil, fmt.Errorf("--netboot %s: tftp: %w", c.Iface, err)
	}
	go func() { s.serveErr("tftp", n.tftp.Serve(n.conn)) }()
	go func() { s.serveErr("dhcp", d.Serve()) }()
	names := []string{}
	for _, im := range images {
		names = append(names, im.Board+" build "+im.Build)
	}
	s.log.Printf("netboot on %s (%s): DHCP %s, TFTP of %s (%s), plan %s, fixture %s", c.Iface, d.Server(), c.Pool, c.BootDir, strings.Join(names, ", "), c.Plan, c.Fixture)
	return func() { d.Close(); n.tftp.Close() }, nil
}

// reportURL is where netbooted boards post: given, or this station's reports URL on the
// test network's address.
func reportURL(given string, server net.IP, listen string, https bool) string {
	if given != "" {
		return given
	}
	_, port, err := net.SplitHostPort(listen)
	if err != nil {
		port = "8080"
	}
	scheme := "http"
	if https {
		scheme = "https"
	}
	return scheme + "://" + net.JoinHostPort(server.String(), port) + "/api/reports"
}

func (s *Server) serveErr(what string, err error) {
	if err != nil {
		s.log.Printf("netboot: %s stopped: %v", what, err)
	}
}

// leased records a lease event, and shows the board on /api/live from its first DHCP
// request on, before its tester image starts.
func (s *Server) leased(c NetbootConfig) func(netboot.Lease) {
	return func(l netboot.Lease) {
		b := Boot{At: l.At, MAC: l.MAC, Event: l.State, Vendor: l.Vendor, Error: l.Why}
		if l.IP != nil {
			b.IP = l.IP.String()
		}
		s.boots.add(b)
		s.log.Printf("netboot: %s %s %s %s", l.MAC, l.State, b.IP, l.Why)
		if (l.State == "offered" || l.State == "bound") && l.Vendor != netboot.ProbeVendor {
			s.live.boot(l.MAC, c.Fixture, c.Plan, "DHCP "+l.State+" "+b.IP, l.At)
		}
	}
}

// fetched records a TFTP transfer, the board named by its lease's MAC.
func (s *Server) fetched(d *netboot.DHCP) func(netboot.Fetch) {
	return func(f netboot.Fetch) {
		mac := ""
		for m, ip := range d.Leases() {
			if ip.Equal(f.Client) {
				mac = m
			}
		}
		b := Boot{At: time.Now(), MAC: mac, IP: f.Client.String(), Event: "fetched", File: f.Name, Bytes: f.Bytes, Seconds: f.Took.Seconds()}
		if f.Err != nil {
			b.Event, b.Error = "failed", f.Err.Error()
		}
		s.boots.add(b)
		s.log.Printf("netboot: %s (%s) %s %s: %d of %d bytes in %.2fs (block %d, window %d) %s", mac, f.Client, b.Event, f.Name, f.Bytes, f.Size, b.Seconds, f.BlockSize, f.Window, b.Error)
		if mac != "" && f.Err == nil {
			s.live.boot(mac, "", "", fmt.Sprintf("TFTP %s (%d bytes, %.1f s)", f.Name, f.Bytes, b.Seconds), b.At)
		}
	}
}

// getBoots is /api/boots: the last boot events, newest first, filtered by ?mac=.
func (s *Server) getBoots(w http.ResponseWriter, req *http.Request) {
	mac := req.URL.Query().Get("mac")
	all := s.boots.all()
	out := []Boot{}
	want, _ := plan.NormalizeMAC(mac)
	for i := len(all) - 1; i >= 0; i-- {
		if mac == "" || all[i].MAC == want {
			out = append(out, all[i])
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.After(out[j].At) })
	writeJSON(w, out)
}
