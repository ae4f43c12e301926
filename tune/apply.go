package tune

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/zynqnet/linerate/internal/atomicfile"
	"github.com/zynqnet/linerate/internal/readall"
	"github.com/zynqnet/linerate/nic"
)

// ReadState reads everything planning needs and the current value of every knob the
// profile's settings expand to, then plans.
func ReadState(sys *System, r *nic.Reader, iface string, p *Profile) (*Plan, error) {
	st, e, err := readState(sys, r, iface, p)
	if err != nil {
		return nil, err
	}
	return Diff(p, st, e)
}

// Readback is the value every knob the profile's settings expand to has now (a setting
// over queues or CPUs expands to a knob each), and why the others cannot be read.
func Readback(sys *System, r *nic.Reader, iface string, p *Profile) (cur, absent map[string]string, err error) {
	st, _, err := readState(sys, r, iface, p)
	if err != nil {
		return nil, nil, err
	}
	return st.Current, st.Absent, nil
}

func readState(sys *System, r *nic.Reader, iface string, p *Profile) (*State, *expansion, error) {
	return readStateFrom(sys, r, nil, iface, p)
}

// readStateFrom is readState planned from have, the port as read a moment ago, where it
// is iface (a validation's doctor step read it just before its tune): what planning
// takes of it (driver, queues, IRQs, the rings' and channels' maxima, features) is not
// read again. The knobs' values are read anew all the same: they are what the journal
// gives back.
func readStateFrom(sys *System, r *nic.Reader, have *nic.Interface, iface string, p *Profile) (*State, *expansion, error) {
	ifc := have
	if ifc == nil || ifc.Name != iface {
		ifcs, err := r.Read(iface)
		if err != nil {
			return nil, nil, err
		}
		ifc = ifcs[0]
	}
	et, release, err := sys.hold(iface)
	if err != nil {
		return nil, nil, err
	}
	defer release()
	st := &State{Iface: ifc, Raw: et.Features, Current: map[string]string{}, Absent: map[string]string{}}
	if g, err := nic.ReadFile(sys.Root, "sys/devices/system/cpu/cpu0/cpufreq/scaling_available_governors"); err == nil {
		st.Governors = strings.Fields(g)
	}
	e, err := Expand(p, st)
	if err != nil {
		return nil, nil, err
	}
	for _, t := range e.targets {
		v, err := sys.Read(t.Knob)
		switch {
		case err == nil && t.Knob.Path != "" && !nic.Writable(sys.Root, t.Knob.Path):
			st.Absent[t.Knob.Name] = "/" + t.Knob.Path + " is read-only here (a network namespace shares it with the host)"
		case err == nil:
			st.Current[t.Knob.Name] = v
		case errors.Is(err, nic.ErrKnobAbsent):
			st.Absent[t.Knob.Name] = "/" + t.Knob.Path + " is absent (not in this kernel, or not per network namespace)"
		default:
			st.Absent[t.Knob.Name] = err.Error()
		}
	}
	if sys.Setter == nil {
		for _, t := range e.targets {
			if t.Knob.Path == "" {
				st.Absent[t.Knob.Name] = ErrCannotSet.Error()
			}
		}
	}
	return st, e, nil
}

// Journal holds, per interface, the value every knob had before linerate first changed
// it, so revert can give it back, also after a crash in the middle of a tune.
type Journal struct {
	Format   int       `json:"format"`
	Iface    string    `json:"interface"`
	Profiles []string  `json:"profiles"`
	Created  time.Time `json:"created"`
	// Complete is false while a tune is being applied: a crash leaves it false.
	Complete bool     `json:"complete"`
	Entries  []Change `json:"entries"`
}

// JournalFormat is the journal version this build writes and reads.
const JournalFormat = 1

// Store keeps journals in a state directory.
type Store struct{ Dir string }

// StateFiles says where linerate keeps its state, for its manual page.
const StateFiles = "/var/lib/linerate (/run/linerate where / is read-only): tune's journals, tune-IFACE.json (tune-IFACE:netINODE.json for an interface of another network namespace than init's), which revert undoes; a sweep's own under sweep/, validate's under validate/; validate's reports under reports/ and those the station has not taken under reports/spool/. The station keeps its store in /var/lib/linerate-station (station --data)."

// DefaultStateDir is /var/lib/linerate, or /run/linerate where / is read-only.
func DefaultStateDir() string {
	for _, d := range []string{"/var/lib/linerate", "/run/linerate"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			continue
		}
		if f, err := os.CreateTemp(d, ".probe-*"); err == nil {
			f.Close()
			os.Remove(f.Name())
			return d
		}
	}
	return "/run/linerate"
}

func (s Store) path(iface string) string {
	p := filepath.Join(s.Dir, journalName(iface))
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// Load reads the journal of iface; nil when there is none.
func (s Store) Load(iface string) (*Journal, error) { return loadJournal(s.path(iface)) }

func loadJournal(p string) (*Journal, error) {
	b, err := readall.File(p, 16<<20)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var j Journal
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, fmt.Errorf("journal %s is damaged: %w (its knobs must be restored by hand)", p, err)
	}
	if j.Format != JournalFormat {
		return nil, fmt.Errorf("journal %s has format %d, this linerate reads %d", p, j.Format, JournalFormat)
	}
	return &j, nil
}

// temporary says the journal holds changes meant to be given back when their command
// ends (a sweep's point, a PHY loopback test): left behind, they are no one's settings.
func (j *Journal) temporary() bool {
	return slices.ContainsFunc(j.Entries, func(c Change) bool { return c.Temporary })
}

// Save writes the journal atomically: a temporary file, fsync, rename, fsync of the
// directory. A crash leaves the old journal or the new one, never half of either.
func (s Store) Save(j *Journal) error {
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return fmt.Errorf("state dir: %w", err)
	}
	b, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(s.path(j.Iface), b, 0o644); err != nil {
		return err
	}
	noteJournal(j.Iface, s.path(j.Iface), false)
	return nil
}

// Remove deletes the journal of iface.
func (s Store) Remove(iface string) error {
	err := os.Remove(s.path(iface))
	if errors.Is(err, os.ErrNotExist) {
		err = nil
	}
	if err == nil {
		noteJournal(iface, s.path(iface), true)
	}
	return err
}

// Path is where the journal of iface lives.
func (s Store) Path(iface string) string { return s.path(iface) }

// ApplyError says which knob failed and whether everything was put back.
type ApplyError struct {
	Knob        string
	Err         error
	RollbackErr error
	Journal     string
}

func (e *ApplyError) Error() string {
	msg := fmt.Sprintf("knob %s: %v", e.Knob, e.Err)
	if e.RollbackErr != nil {
		return msg + fmt.Sprintf("; restoring the knobs already changed also failed (%v): the journal %s is kept, run 'linerate revert' to finish", e.RollbackErr, e.Journal)
	}
	return msg + "; every knob changed before it was restored"
}

func (e *ApplyError) Unwrap() error { return e.Err }

// writeVerified writes v and reads it back.
func writeVerified(ctx context.Context, sys *System, k Knob, v string) error {
	if err := sys.Write(ctx, k, v); err != nil {
		return err
	}
	got, err := sys.Read(k)
	if err != nil {
		return fmt.Errorf("read back: %w", err)
	}
	if !equal(k, got, v) {
		return fmt.Errorf("wrote %q, reads back %q", v, got)
	}
	return nil
}

// Apply carries out a plan as one transaction. Before the first change the journal is
// written; each knob is read back after its write; on any failure the knobs changed so
// far are restored in reverse order and the journal is put back as it was.
func Apply(ctx context.Context, sys *System, store Store, plan *Plan) error {
	if len(plan.Changes) == 0 {
		return nil
	}
	prev, err := store.Load(plan.Iface)
	if err != nil {
		return err
	}
	j := &Journal{Format: JournalFormat, Iface: plan.Iface, Created: time.Now().UTC()}
	if prev != nil {
		cp := *prev
		cp.Entries = append([]Change(nil), prev.Entries...)
		cp.Profiles = append([]string(nil), prev.Profiles...)
		j = &cp
	}
	j.Profiles = append(j.Profiles, plan.Profile)
	j.Complete = false
	for _, c := range plan.Changes {
		found := false
		for i := range j.Entries {
			if j.Entries[i].Knob == c.Knob {
				j.Entries[i].New, found = c.New, true // keep the first Old: what the user had
				j.Entries[i].Temporary = j.Entries[i].Temporary || plan.Temporary
			}
		}
		if !found {
			j.Entries = append(j.Entries, Change{Knob: c.Knob, Old: c.Old, New: c.New, Temporary: plan.Temporary})
		}
	}
	j.Entries = append(queueSettings(sys, plan, j.Entries), j.Entries...)
	if err := store.Save(j); err != nil {
		return fmt.Errorf("journal: %w (nothing was changed)", err)
	}
	done, failed, err := applyChanges(ctx, sys, plan.Iface, plan.Changes)
	if err != nil {
		rb := restore(ctx, sys, plan.Iface, append(done, failed...))
		ae := &ApplyError{Knob: failed[0].Knob, Err: err, RollbackErr: rb, Journal: store.Path(plan.Iface)}
		if rb == nil {
			if prev == nil {
				store.Remove(plan.Iface)
			} else if serr := store.Save(prev); serr != nil {
				ae.RollbackErr = fmt.Errorf("restore the journal: %w", serr)
			}
		}
		return ae
	}
	j.Complete = true
	return store.Save(j)
}

// queueSettings: a change of channels removes the queues above the new count and, with
// them, their RPS and XPS settings; revert brings the queues back with the kernel's
// defaults. So before such a change every queue's settings are journalled, first, to be
// restored last (after the channels). Knobs the journal holds already keep their Old.
func queueSettings(sys *System, plan *Plan, have []Change) []Change {
	changesChannels := false
	for _, c := range plan.Changes {
		k, err := KnobFromName(plan.Iface, c.Knob)
		changesChannels = changesChannels || err == nil && k.def().dropsQueues
	}
	if !changesChannels {
		return nil
	}
	ents, err := os.ReadDir(filepath.Join(sys.Root, "sys/class/net", plan.Iface, "queues"))
	if err != nil {
		return nil
	}
	var out []Change
	for _, e := range ents {
		for _, name := range queueKnobs(e.Name()) {
			if slices.ContainsFunc(have, func(c Change) bool { return c.Knob == name }) {
				continue
			}
			k, err := KnobFromName(plan.Iface, name)
			if err != nil {
				continue
			}
			if v, err := sys.Read(k); err == nil {
				out = append(out, Change{Knob: name, Old: v, New: v})
			}
		}
	}
	return out
}

// applyChanges writes each change and reads it back, features of a plan in one batch.
// On failure it returns what was done and the changes that failed (whose write may have
// partly taken effect, so they are restored too).
func applyChanges(ctx context.Context, sys *System, iface string, changes []Change) (done, failed []Change, err error) {
	for i := 0; i < len(changes); i++ {
		c := changes[i]
		if b := batchOf(c.Knob); b != nil {
			// The run of the family's changes from here (Diff plans them next to each
			// other).
			var batch []Change
			for j := i; j < len(changes) && batchOf(changes[j].Knob) == b; j++ {
				batch = append(batch, changes[j])
			}
			if f, err := writeBatch(ctx, sys, b, iface, batch, func(c Change) string { return c.New }); err != nil {
				return done, append(batch[:0:0], f...), err
			}
			done = append(done, batch...)
			i += len(batch) - 1
			continue
		}
		k, err := KnobFromName(iface, c.Knob)
		if err == nil {
			err = writeVerified(ctx, sys, k, c.New)
		}
		if err != nil {
			return done, []Change{c}, err
		}
		done = append(done, c)
	}
	return done, nil, nil
}

// writeBatch writes a batch of one family's changes at once and verifies each. On error
// it returns the batch with the knob that failed first.
func writeBatch(ctx context.Context, sys *System, b batchFamily, iface string, batch []Change, val func(Change) string) ([]Change, error) {
	ks := make([]Knob, len(batch))
	vs := make([]string, len(batch))
	for i, c := range batch {
		k, err := KnobFromName(iface, c.Knob)
		if err != nil {
			return batch, err
		}
		ks[i], vs[i] = k, val(c)
	}
	if err := sys.WriteBatch(ctx, b, iface, ks, vs); err != nil {
		var fe *batchErr
		if errors.As(err, &fe) {
			for i, c := range batch {
				if c.Knob == fe.knob {
					return append([]Change{c}, append(batch[:i:i], batch[i+1:]...)...), err
				}
			}
		}
		return batch, err
	}
	for i, k := range ks {
		got, err := sys.Read(k)
		if err == nil && !equal(k, got, vs[i]) {
			err = fmt.Errorf("wrote %q, reads back %q", vs[i], got)
		}
		if err != nil {
			return append([]Change{batch[i]}, append(batch[:i:i], batch[i+1:]...)...), err
		}
	}
	return nil, nil
}

// restore writes back the Old value of each change, last first, where it differs; the
// changes of a batch family among them (features, rings) go back together in one
// request.
func restore(ctx context.Context, sys *System, iface string, changes []Change) error {
	// Restoring must not be stopped by the fault hook that stopped the apply.
	hook := sys.BeforeWrite
	sys.BeforeWrite = nil
	defer func() { sys.BeforeWrite = hook }()
	var errs []error
	var retry []Change
	batchDone := map[batchFamily]bool{}
	for i := len(changes) - 1; i >= 0; i-- {
		c := changes[i]
		if b := batchOf(c.Knob); b != nil {
			if batchDone[b] {
				continue
			}
			batchDone[b] = true
			var batch []Change
			for _, f := range changes {
				if batchOf(f.Knob) != b {
					continue
				}
				k, err := KnobFromName(iface, f.Knob)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				if cur, err := sys.Read(k); err == nil && equal(k, cur, f.Old) {
					continue
				}
				batch = append(batch, f)
			}
			if len(batch) > 0 {
				if f, err := writeBatch(ctx, sys, b, iface, batch, func(c Change) string { return c.Old }); err != nil {
					errs = append(errs, fmt.Errorf("%s back to %q: %w", f[0].Knob, f[0].Old, err))
				}
			}
			continue
		}
		k, err := KnobFromName(iface, c.Knob)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if cur, err := sys.Read(k); err == nil && equal(k, cur, c.Old) {
			continue
		}
		if err := writeVerified(ctx, sys, k, c.Old); err != nil {
			retry = append(retry, c)
		}
	}
	// Knobs depend on each other (a queue's RPS on the channel count, threaded NAPI on the
	// NAPI instances a feature brings): what failed is tried once more after the rest.
	for _, c := range retry {
		k, _ := KnobFromName(iface, c.Knob)
		if cur, err := sys.Read(k); err == nil && equal(k, cur, c.Old) {
			continue
		}
		if err := writeVerified(ctx, sys, k, c.Old); err != nil {
			errs = append(errs, fmt.Errorf("%s back to %q: %w", c.Knob, c.Old, err))
		}
	}
	return errors.Join(errs...)
}

// RevertTemporary gives back the knobs of a temporary plan that Apply carried out (the
// values they had before linerate first changed them) and takes them out of iface's
// journal, with the plan's name: a temporary change ends while the user's own tune
// stays, and a later revert names only what is left. The journal goes when nothing is
// left in it.
func RevertTemporary(ctx context.Context, sys *System, store Store, plan *Plan) error {
	j, err := store.Load(plan.Iface)
	if err != nil || j == nil {
		return err
	}
	var knobs []string
	for _, c := range plan.Changes {
		knobs = append(knobs, c.Knob)
	}
	var back, keep []Change
	for _, e := range j.Entries {
		if slices.Contains(knobs, e.Knob) {
			back = append(back, e)
		} else {
			keep = append(keep, e)
		}
	}
	if err := restore(ctx, sys, plan.Iface, back); err != nil {
		return fmt.Errorf("give back %s of %s: %w (journal %s kept; run 'linerate revert %s')", strings.Join(knobs, ", "), plan.Iface, err, store.Path(plan.Iface), plan.Iface)
	}
	if len(keep) == 0 {
		return store.Remove(plan.Iface)
	}
	j.Entries = keep
	for i, name := range slices.Backward(j.Profiles) {
		if name == plan.Profile {
			j.Profiles = slices.Delete(j.Profiles, i, i+1)
			break
		}
	}
	return store.Save(j)
}

// pendingElsewhere names the interface's journals in the state directory's own
// directories (a killed sweep's, DIR/sweep), each with the revert that undoes it; ""
// when there is none.
func (s Store) pendingElsewhere(iface string) string {
	found, _ := filepath.Glob(filepath.Join(s.Dir, "*", journalName(iface)))
	var out []string
	for _, f := range found {
		out = append(out, fmt.Sprintf("%s (linerate revert %s --state-dir %s)", f, iface, filepath.Dir(f)))
	}
	if len(out) == 0 {
		return ""
	}
	return "; pending elsewhere: " + strings.Join(out, ", ")
}

// ErrNothingToRevert is returned by Revert when an interface has no journal.
var ErrNothingToRevert = errors.New("nothing to revert")

// Revert restores every knob of iface's journal to the value it had before linerate
// changed it, then removes the journal. It also finishes a tune that was interrupted.
func Revert(ctx context.Context, sys *System, store Store, iface string) (*Journal, error) {
	j, err := store.Load(iface)
	if err != nil {
		return nil, err
	}
	if j == nil {
		return nil, fmt.Errorf("%w for %s: no journal in %s%s", ErrNothingToRevert, iface, store.Dir, store.pendingElsewhere(iface))
	}
	if err := restore(ctx, sys, iface, j.Entries); err != nil {
		return j, fmt.Errorf("revert %s: %w (journal %s kept; run revert again once fixed)", iface, err, store.Path(iface))
	}
	return j, store.Remove(iface)
}
