package tune

import (
	"os"
	"strings"
	"time"

	"github.com/zynqnet/linerate/internal/badinput"
	"github.com/zynqnet/linerate/nic"
)

// LoadProfile reads a profile: a YAML file, or a built-in profile's name. A file that
// cannot be read or parsed, or an unknown name, is bad input naming it.
func LoadProfile(arg string) (*Profile, error) {
	if b, err := os.ReadFile(arg); err == nil {
		return ParseProfile(b, arg)
	} else if strings.ContainsAny(arg, "/.") {
		return nil, badinput.Errorf("profile %s: %w", arg, err)
	}
	p, err := Builtin(arg)
	if err != nil {
		return nil, badinput.Errorf("profile: %w", err)
	}
	return p, nil
}

// Open opens the system knobs are read from and written to: the live kernel (with the
// ethtool API and the carrier wait for knobs that bounce the link), or, with root set, a
// captured tree whose kernel-held knobs are skipped. close releases the kernel's sockets.
func Open(root, api string, carrierTimeout time.Duration) (sys *System, r *nic.Reader, close func(), err error) {
	if r, close, err = nic.Open(root, api); err != nil {
		return nil, nil, nil, err
	}
	sys = &System{Root: r.Root, Kernel: r.Kernel}
	if root == "" {
		sys.Setter, _ = r.Kernel.(nic.Setter)
		sys.CarrierTimeout = carrierTimeout
	}
	return sys, r, close, nil
}

// StoreAt is the journal store in dir, or in DefaultStateDir when dir is empty.
func StoreAt(dir string) Store {
	if dir == "" {
		dir = DefaultStateDir()
	}
	return Store{Dir: dir}
}
