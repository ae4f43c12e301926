// Package consolecap carries a file over a serial console: written between two marker
// lines in base64 with its size and SHA-256, found again in a console log however much
// else (kernel messages, other jobs, carriage returns) surrounds it. The tester image
// prints a board's snapshot this way; 'linerate snapshot --from-console' takes it back.
package consolecap

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// The marker lines: Begin SIZE SHA256 ====, the base64 lines, End ====.
const (
	Begin = "==== LINERATE CAPTURE BEGIN"
	End   = "==== LINERATE CAPTURE END"
)

// Write writes b between the markers, 76 base64 characters a line.
func Write(w io.Writer, b []byte) error {
	sum := sha256.Sum256(b)
	var out bytes.Buffer
	fmt.Fprintf(&out, "%s %d %x ====\n", Begin, len(b), sum)
	enc := base64.StdEncoding.EncodeToString(b)
	for len(enc) > 76 {
		out.WriteString(enc[:76] + "\n")
		enc = enc[76:]
	}
	out.WriteString(enc + "\n" + End + " ====\n")
	_, err := w.Write(out.Bytes())
	return err
}

// ErrNone is returned when a log holds no capture.
var ErrNone = errors.New("no capture between '" + Begin + "' and '" + End + "' lines")

// Read finds the last complete capture in a console log and returns the file, checked
// against its size and SHA-256.
func Read(log []byte) ([]byte, error) {
	text := strings.ReplaceAll(string(log), "\r", "")
	i := strings.LastIndex(text, Begin)
	if i < 0 {
		return nil, ErrNone
	}
	rest := text[i+len(Begin):]
	header, body, ok := strings.Cut(rest, "\n")
	j := strings.Index(body, End)
	if !ok || j < 0 {
		return nil, errors.New("the capture is cut short: no end line (the console log ends first)")
	}
	f := strings.Fields(header)
	if len(f) < 2 {
		return nil, fmt.Errorf("capture header %q: want SIZE SHA256", header)
	}
	size, err := strconv.Atoi(f[0])
	want, err2 := hex.DecodeString(f[1])
	if err != nil || err2 != nil || size < 0 || len(want) != sha256.Size {
		return nil, fmt.Errorf("capture header %q: want SIZE SHA256", header)
	}
	var enc strings.Builder
	for _, l := range strings.Split(body[:j], "\n") {
		enc.WriteString(strings.TrimSpace(l))
	}
	b, err := base64.StdEncoding.DecodeString(enc.String())
	if err != nil {
		return nil, fmt.Errorf("the capture's base64 is damaged (a line lost on the console?): %v", err)
	}
	if got := sha256.Sum256(b); len(b) != size || !bytes.Equal(got[:], want) {
		return nil, fmt.Errorf("the capture is damaged: %d bytes with SHA-256 %x, the board sent %d with %x", len(b), got, size, want)
	}
	return b, nil
}
