package consolecap

import (
	"bytes"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestRoundTripInANoisyLog(t *testing.T) {
	data := make([]byte, 5000)
	for i := range data {
		data[i] = byte(rand.IntN(256))
	}
	var cap bytes.Buffer
	Write(&cap, data)
	// Kernel lines and carriage returns around it, an older capture before it.
	var old bytes.Buffer
	Write(&old, []byte("older"))
	log := "[    1.2] macb e000b000.ethernet eth0: link up\r\n" + old.String() + "gosh$ \r\n" + strings.ReplaceAll(cap.String(), "\n", "\r\n") + "reboot: Restarting system\r\n"
	got, err := Read(strings.NewReader(log), 1<<20)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes, %v", len(got), err)
	}
}

func TestDamage(t *testing.T) {
	var cap bytes.Buffer
	Write(&cap, bytes.Repeat([]byte("linerate"), 100))
	lines := strings.Split(cap.String(), "\n")
	for name, log := range map[string]string{
		"none":       "just a boot log\n",
		"cut short":  strings.Join(lines[:4], "\n"),
		"lost line":  strings.Join(append(append([]string{}, lines[:3]...), lines[4:]...), "\n"),
		"bad header": strings.Replace(cap.String(), Begin+" 800 ", Begin+" x ", 1),
		"wrong size": strings.Replace(cap.String(), Begin+" 800 ", Begin+" 801 ", 1),
	} {
		if _, err := Read(strings.NewReader(log), 1<<20); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestLastIntact: a capture cut short, damaged or too large after an intact one does
// not hide it (before, the cut-short one refused the log).
func TestLastIntact(t *testing.T) {
	var a, b bytes.Buffer
	Write(&a, []byte("first"))
	Write(&b, bytes.Repeat([]byte("second"), 50))
	bl := strings.Split(b.String(), "\n")
	for name, log := range map[string]string{
		"cut short":    a.String() + strings.Join(bl[:3], "\n"),
		"lost line":    a.String() + strings.Join(append(append([]string{}, bl[:2]...), bl[3:]...), "\n"),
		"too large":    a.String() + Begin + " 2000000 " + strings.Repeat("00", 32) + " ====\nAAAA\n" + End + " ====\n",
		"endless data": a.String() + bl[0] + "\n" + strings.Repeat("QUFB\n", 200) + End + " ====\n",
	} {
		got, err := Read(strings.NewReader(log), 1<<20)
		if err != nil || string(got) != "first" {
			t.Errorf("%s: %q %v, want the intact first capture", name, got, err)
		}
	}
	if _, err := Read(strings.NewReader(strings.Join(bl[:3], "\n")), 1<<20); err == nil || !strings.Contains(err.Error(), "cut short") {
		t.Errorf("only a cut-short capture: %v", err)
	}
	if _, err := Read(strings.NewReader(b.String()), 100); err == nil || !strings.Contains(err.Error(), "at most 100") {
		t.Errorf("a capture over the bound: %v", err)
	}
}

// noise is a console log of n bytes that is never held whole: kernel lines, and one
// line of 8 MiB without a newline in the middle.
type noise struct {
	n, off int64
	tail   []byte
}

func (r *noise) Read(p []byte) (int, error) {
	if r.off >= r.n {
		if len(r.tail) == 0 {
			return 0, io.EOF
		}
		k := copy(p, r.tail)
		r.tail = r.tail[k:]
		return k, nil
	}
	line := "[  12.345678] macb e000b000.ethernet eth0: link up (1000/Full)\r\n"
	if r.off >= r.n/2 && r.off < r.n/2+8<<20 {
		line = strings.Repeat("x", 4096)
	}
	k := 0
	for k < len(p) && r.off < r.n {
		c := copy(p[k:], line)
		k += c
		r.off += int64(c)
	}
	return k, nil
}

// TestLongLog: a log much larger than its capture is read through, the capture found at
// its end; a line of 8 MiB is skipped.
func TestLongLog(t *testing.T) {
	var c bytes.Buffer
	Write(&c, []byte("the snapshot"))
	got, err := Read(&noise{n: 64 << 20, tail: c.Bytes()}, 1<<20)
	if err != nil || string(got) != "the snapshot" {
		t.Fatalf("%q %v", got, err)
	}
}

// BenchmarkReadLog: bytes allocated per byte of a console log (before: the log twice,
// whole; now a line at a time).
func BenchmarkReadLog(b *testing.B) {
	var c bytes.Buffer
	Write(&c, bytes.Repeat([]byte("snap"), 1000))
	b.ReportAllocs()
	b.SetBytes(32 << 20)
	for b.Loop() {
		if _, err := Read(&noise{n: 32 << 20, tail: c.Bytes()}, 1<<20); err != nil {
			b.Fatal(err)
		}
	}
}

func FuzzRead(f *testing.F) {
	var cap bytes.Buffer
	Write(&cap, []byte("a snapshot"))
	f.Add(cap.Bytes())
	f.Add([]byte(Begin + " 3 00 ====\nAAAA\n" + End))
	f.Fuzz(func(t *testing.T, b []byte) {
		Read(bytes.NewReader(b), 1<<20)
	})
}
