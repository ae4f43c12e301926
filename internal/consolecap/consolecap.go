// Package consolecap carries a file over a serial console: written between two marker
// lines in base64 with its size and SHA-256, found again in a console log however much
// else (kernel messages, other jobs, carriage returns) surrounds it. The tester image
// prints a board's snapshot this way; 'linerate snapshot --from-console' takes it back.
package consolecap

import (
	"bufio"
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

// MaxLine bounds a console line as Read keeps it: a capture's lines are 76 characters,
// and a longer line outside one is skipped, not held.
const MaxLine = 64 << 10

// Read finds the last intact capture in a console log and returns the file, checked
// against its size and SHA-256. The log is read line by line, so its size is not what
// Read holds: at most one capture of at most max bytes (its header says so first) and
// one line. A later capture cut short (the log ends first) or damaged does not hide an
// earlier intact one; with none intact, the last one's fault is the error.
func Read(r io.Reader, max int64) ([]byte, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var (
		good    []byte
		lastErr = ErrNone
		in      bool // inside a capture
		size    int
		want    []byte
		enc     bytes.Buffer
	)
	for {
		line, long, err := readLine(br)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		if i := bytes.Index(line, []byte(Begin)); i >= 0 && !long {
			in = false
			size, want, lastErr = header(string(line[i+len(Begin):]), max)
			if lastErr == nil {
				in = true
				enc.Reset()
			}
		} else if in {
			data, _, found := bytes.Cut(line, []byte(End))
			switch {
			case long:
				in, lastErr = false, errors.New("the capture is damaged: a line of it longer than any the board writes")
			case enc.Len()+len(data) > base64.StdEncoding.EncodedLen(size)+76:
				in, lastErr = false, fmt.Errorf("the capture is damaged: more data than the %d bytes its header says", size)
			default:
				enc.Write(bytes.TrimSpace(data))
			}
			if in && found {
				in = false
				var b []byte
				if b, lastErr = decode(enc.String(), size, want); lastErr == nil {
					good = b
				}
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
	}
	if in {
		lastErr = errors.New("the capture is cut short: no end line (the console log ends first)")
	}
	if good != nil {
		return good, nil
	}
	return nil, lastErr
}

// readLine reads one line, valid until the next read (not copied: most of a log is
// looked at and dropped); a line longer than MaxLine is skipped to its end and
// reported long. Carriage returns are white space to the callers.
func readLine(br *bufio.Reader) (line []byte, long bool, err error) {
	b, err := br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		for errors.Is(err, bufio.ErrBufferFull) {
			_, err = br.ReadSlice('\n')
		}
		return nil, true, err
	}
	return b, false, err
}

func header(h string, max int64) (size int, want []byte, err error) {
	f := strings.Fields(h)
	if len(f) < 2 {
		return 0, nil, fmt.Errorf("capture header %q: want SIZE SHA256", strings.TrimSpace(h))
	}
	size, err = strconv.Atoi(f[0])
	want, err2 := hex.DecodeString(f[1])
	if err != nil || err2 != nil || size < 0 || len(want) != sha256.Size {
		return 0, nil, fmt.Errorf("capture header %q: want SIZE SHA256", strings.TrimSpace(h))
	}
	if int64(size) > max {
		return 0, nil, fmt.Errorf("a capture of %d bytes: at most %d", size, max)
	}
	return size, want, nil
}

func decode(enc string, size int, want []byte) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return nil, fmt.Errorf("the capture's base64 is damaged (a line lost on the console?): %v", err)
	}
	if got := sha256.Sum256(b); len(b) != size || !bytes.Equal(got[:], want) {
		return nil, fmt.Errorf("the capture is damaged: %d bytes with SHA-256 %x, the board sent %d with %x", len(b), got, size, want)
	}
	return b, nil
}
