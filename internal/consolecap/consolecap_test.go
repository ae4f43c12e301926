package consolecap

import (
	"bytes"
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
	got, err := Read([]byte(log))
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
		if _, err := Read([]byte(log)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func FuzzRead(f *testing.F) {
	var cap bytes.Buffer
	Write(&cap, []byte("a snapshot"))
	f.Add(cap.Bytes())
	f.Add([]byte(Begin + " 3 00 ====\nAAAA\n" + End))
	f.Fuzz(func(t *testing.T, b []byte) {
		Read(b)
	})
}
