package dts

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/zynqnet/linerate/internal/readall"
)

// ConfigfsDir is where kernels with CONFIG_OF_CONFIGFS (Xilinx's and other vendor trees;
// mainline has no runtime overlay interface) take overlays: mkdir a directory, write the
// blob to its dtbo file, read its status back.
const ConfigfsDir = "sys/kernel/config/device-tree/overlays"

// ErrNoConfigfs means the kernel has no configfs overlay interface.
var ErrNoConfigfs = errors.New("this kernel has no configfs device-tree overlay interface")

// Configfs applies overlays through configfs under Root ("/" on a board).
type Configfs struct {
	Root string
	// Mkdir makes an overlay directory; configfs fills it with dtbo, path and status.
	// Tests replace it with a fake that does what the kernel does.
	Mkdir func(path string) error
	// Mount mounts configfs when /sys/kernel/config is empty (not mounted yet).
	Mount func(target string) error
}

var overlayName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// Apply loads blob as overlay name and returns the status the kernel reports ("applied").
// On any failure the overlay directory is removed again, so nothing is left half-applied.
func (c *Configfs) Apply(name string, blob []byte) (string, error) {
	if !overlayName.MatchString(name) {
		return "", errorf("overlay name %q: use letters, digits, '.', '_' and '-' (at most 64)", name)
	}
	f, err := Decode(blob)
	if err != nil {
		return "", err
	}
	frags := 0
	for _, ch := range f.RootNode.Children {
		if Child(ch, "__overlay__") != nil {
			frags++
		}
	}
	if frags == 0 {
		return "", errorf("not an overlay: no fragment with an __overlay__ node (a base DTB? merge overlays into it with linerate dts merge)")
	}
	dir, err := c.dir()
	if err != nil {
		return "", err
	}
	od := filepath.Join(dir, name)
	if _, err := os.Stat(od); err == nil {
		return "", errorf("an overlay named %s is already loaded (status %s): remove it first with linerate dts apply --remove %s", name, readStatus(od), name)
	}
	mkdir := c.Mkdir
	if mkdir == nil {
		mkdir = func(p string) error { return os.Mkdir(p, 0o755) }
	}
	if err := mkdir(od); err != nil {
		return "", fmt.Errorf("create overlay %s: %w", od, err)
	}
	// configfs takes the blob in one write; the kernel applies it during that write.
	if err := os.WriteFile(filepath.Join(od, "dtbo"), blob, 0o644); err != nil {
		os.Remove(od)
		return "", fmt.Errorf("the kernel refused the overlay (writing %s/dtbo: %v); its reason is in dmesg", od, err)
	}
	st := readStatus(od)
	if st != "applied" {
		os.Remove(od)
		return st, fmt.Errorf("the kernel did not apply the overlay (status %q); its reason is in dmesg", st)
	}
	return st, nil
}

// Remove unloads overlay name (the kernel reverts its changes on rmdir).
func (c *Configfs) Remove(name string) error {
	if !overlayName.MatchString(name) {
		return errorf("overlay name %q: use letters, digits, '.', '_' and '-'", name)
	}
	dir, err := c.dir()
	if errors.Is(err, ErrNoConfigfs) {
		return &NoConfigfsError{Err: err}
	}
	if err != nil {
		return err
	}
	od := filepath.Join(dir, name)
	if _, err := os.Stat(od); err != nil {
		return errorf("no overlay named %s is loaded (have: %s)", name, strings.Join(c.loaded(dir), ", "))
	}
	if err := os.Remove(od); err != nil {
		return fmt.Errorf("remove overlay %s: %w", od, err)
	}
	return nil
}

func (c *Configfs) loaded(dir string) []string {
	var names []string
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if len(names) == 0 {
		return []string{"none"}
	}
	return names
}

func (c *Configfs) dir() (string, error) {
	dir := filepath.Join(c.Root, ConfigfsDir)
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		return dir, nil
	}
	cfg := filepath.Join(c.Root, "sys/kernel/config")
	if ents, err := os.ReadDir(cfg); err == nil && len(ents) == 0 && c.Mount != nil {
		if err := c.Mount(cfg); err == nil {
			if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
				return dir, nil
			}
		}
	}
	return "", ErrNoConfigfs
}

func readStatus(dir string) string {
	b, err := readall.File(filepath.Join(dir, "status"), readall.MaxSys)
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}

// UBootHelp is what to do where the kernel cannot take an overlay at run time: apply it
// in U-Boot before the kernel starts (libfdt's fdt_overlay_apply, as fdtoverlay), or merge
// it into the board's DTB offline.
func UBootHelp(file string) string {
	base := filepath.Base(file)
	return fmt.Sprintf(`Apply it in U-Boot before booting (the base needs room to grow, hence fdt resize):
  load mmc 0:1 ${fdt_addr_r} system.dtb
  load mmc 0:1 ${fdtoverlay_addr_r} %s
  fdt addr ${fdt_addr_r}
  fdt resize 8192
  fdt apply ${fdtoverlay_addr_r}
  then boot as usual with ${fdt_addr_r} (bootz/bootm on Zynq-7000, booti on ZynqMP)
or merge it into the boot DTB offline:
  linerate dts merge system.dtb %s -o system.dtb
`, base, file)
}

// ApplyFile loads the overlay in file under name ("": the file's name without its
// extension) and returns the name and the status the kernel reports. Without configfs
// overlays the error says so and gives the U-Boot commands to use instead
// (NoConfigfsError).
func (c *Configfs) ApplyFile(file, name string) (string, string, error) {
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	}
	blob, err := readall.File(file, MaxBlob)
	if err != nil {
		return name, "", &Error{Msg: fmt.Sprintf("%s: %v", file, errors.Unwrap(err)), Err: err}
	}
	st, err := c.Apply(name, blob)
	var de *Error
	switch {
	case errors.As(err, &de):
		return name, "", &Error{Msg: fmt.Sprintf("%s: %v", file, err), Err: err}
	case errors.Is(err, ErrNoConfigfs):
		return name, "", &NoConfigfsError{File: file, Err: err}
	}
	return name, st, err
}

// NoConfigfsError is a kernel without configfs overlays: what to do instead.
type NoConfigfsError struct {
	File string // the overlay that could not be applied ("": a removal)
	Err  error
}

func (e *NoConfigfsError) Error() string {
	msg := fmt.Sprintf("%v (/%s is missing: mainline kernels have no runtime overlay interface; Xilinx's vendor kernels have it with CONFIG_OF_CONFIGFS)", e.Err, ConfigfsDir)
	if e.File != "" {
		msg += "\n" + strings.TrimRight(UBootHelp(e.File), "\n")
	}
	return msg
}

func (e *NoConfigfsError) Unwrap() error { return e.Err }

// MergeFiles applies the overlay files, in order, to the base DTB file, as fdtoverlay
// does, and returns the merged DTB.
func MergeFiles(base string, overlays []string) ([]byte, error) {
	merged, _, err := ReadFile(base)
	if err != nil {
		return nil, err
	}
	for _, p := range overlays {
		o, _, err := ReadFile(p)
		if err != nil {
			return nil, err
		}
		if merged, err = Merge(merged, o); err != nil {
			return nil, &Error{Msg: fmt.Sprintf("apply %s to %s: %v", p, base, err)}
		}
	}
	return Encode(merged)
}
