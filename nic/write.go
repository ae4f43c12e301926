package nic

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Setter changes what the kernel holds about an interface (the live kernel implements it;
// a captured tree cannot be changed this way).
type Setter interface {
	SetRings(iface string, rx, tx uint32) error
	SetChannels(iface string, c Channels) error
	SetCoalesce(iface string, c Coalesce) error
	// SetFeatures asks for kernel feature names (rx-gro, tx-tcp-segmentation, ...) on or off.
	SetFeatures(iface string, want map[string]bool) error
	SetMTU(iface string, mtu int) error
	SetPromisc(iface string, on bool) error
	// SetAdvertised makes the PHY advertise exactly these link modes (ethtool's names,
	// 100baseT/Full), autonegotiating.
	SetAdvertised(iface string, modes []string) error
	// SetForced turns autonegotiation off with the link forced to speed (Mb/s) and
	// duplex (ethtool -s IFACE autoneg off speed S duplex D).
	SetForced(iface string, speedMbps int, full bool) error
	// SetAutoneg turns autonegotiation back on with the modes advertised before
	// (ethtool -s IFACE autoneg on).
	SetAutoneg(iface string) error
}

// ErrKnobAbsent is returned by WriteFile for a knob file the kernel does not have.
var ErrKnobAbsent = errors.New("no such knob on this kernel")

// WriteFile writes value to a sysfs or procfs file under root, as `echo value > file`
// does. The file must exist: nic never creates knobs.
func WriteFile(root, p, value string) error {
	full := filepath.Join(root, p)
	f, err := os.OpenFile(full, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: %w", full, ErrKnobAbsent)
		}
		return err
	}
	_, err = f.WriteString(strings.TrimSpace(value) + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %q to %s: %w", value, full, err)
	}
	return nil
}

// ReadFile reads a sysfs or procfs file under root, trimmed.
func ReadFile(root, p string) (string, error) {
	b, err := readFileUnder(root, p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%s: %w", filepath.Join(root, p), ErrKnobAbsent)
		}
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// Writable reports whether a sysfs/procfs file under root can be written here. Opening
// for writing changes nothing; procfs refuses it for read-only sysctls (those a network
// namespace shares with the host) even to root.
func Writable(root, p string) bool {
	f, err := os.OpenFile(filepath.Join(root, p), os.O_WRONLY, 0)
	if err != nil {
		return false
	}
	f.Close()
	return true
}
