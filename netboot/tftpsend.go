package netboot

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// request is a parsed read request: the file, its mode, and the options in the order
// asked (names lower-cased, RFC 2347 compares them without case).
type request struct {
	name, mode string
	opts       [][2]string
}

// parseRequest reads a request's body after the opcode: name, mode, then option and
// value pairs, each ended by a zero byte. Only octet mode is served: the boot files
// are binary.
func parseRequest(b []byte) (request, error) {
	var r request
	if len(b) == 0 || b[len(b)-1] != 0 {
		return r, errors.New("want a request whose fields end in a zero byte")
	}
	fields := strings.Split(string(b[:len(b)-1]), "\x00")
	if len(fields) < 2 {
		return r, errors.New("want a request with a file name and a mode")
	}
	r.name, r.mode = fields[0], strings.ToLower(fields[1])
	if r.mode != "octet" {
		return r, fmt.Errorf("mode %.20q: the station serves octet mode only", fields[1])
	}
	rest := fields[2:]
	if len(rest)%2 != 0 {
		return r, errors.New("want options in name and value pairs")
	}
	if len(rest)/2 > maxOptions {
		return r, fmt.Errorf("want at most %d options", maxOptions)
	}
	seen := map[string]bool{}
	for i := 0; i < len(rest); i += 2 {
		k := strings.ToLower(rest[i])
		if k == "" || seen[k] {
			continue // RFC 2347 leaves a repeated option undefined: the first one counts
		}
		seen[k] = true
		r.opts = append(r.opts, [2]string{k, rest[i+1]})
	}
	return r, nil
}

// params are what a transfer runs with, and the options acknowledged (OACK), in the
// order asked.
type params struct {
	blksize int
	window  int
	wait    time.Duration
	oack    [][2]string
}

// negotiate grants the options the RFCs allow and the station can honour; an option
// out of its range or unknown is left out of the acknowledgement, so the client runs
// with the default (RFC 2347).
func negotiate(opts [][2]string, size int64) params {
	p := params{blksize: 512, window: 1, wait: defaultWait}
	for _, o := range opts {
		k, v := o[0], o[1]
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			continue
		}
		switch k {
		case "blksize": // RFC 2348: 8..65464; the server may grant less, never more
			if n < minBlock {
				continue
			}
			p.blksize = int(min(n, maxBlock))
			p.oack = append(p.oack, [2]string{k, strconv.Itoa(p.blksize)})
		case "timeout": // RFC 2349: 1..255 seconds, granted as asked or not at all
			if n < 1 || n > 255 {
				continue
			}
			p.wait = time.Duration(n) * time.Second
			p.oack = append(p.oack, [2]string{k, v})
		case "tsize": // RFC 2349: a reader asks with 0 and learns the size
			p.oack = append(p.oack, [2]string{k, strconv.FormatInt(size, 10)})
		case "windowsize": // RFC 7440: 1..65535; the server may grant less
			if n < 1 || n > 65535 {
				continue
			}
			p.window = int(min(n, MaxWindow))
			p.oack = append(p.oack, [2]string{k, strconv.Itoa(p.window)})
		}
	}
	// A window of large blocks overflows the client's socket buffer (Linux's default is
	// 208 KiB; U-Boot's few packet buffers are smaller): bound the bytes in flight, the
	// blocks asked for can wait.
	if w := max(1, maxWindowBytes/p.blksize); p.window > w {
		p.window = w
		for i, o := range p.oack {
			if o[0] == "windowsize" {
				p.oack[i][1] = strconv.Itoa(w)
			}
		}
	}
	return p
}

// send runs the sending side of a transfer on c, its own port, to the client at to:
// the OACK when options were granted, then windows of DATA, each window resent from the
// last block acknowledged when the client falls silent for the timeout. The client's
// block numbers wrap from 65535 to 0, as U-Boot, atftp and tftp-hpa expect. It ends
// when the last block is acknowledged, the client sends an error, it stays silent for
// maxRetries timeouts (at most maxSilence), or ctx ends.
func send(ctx context.Context, c *net.UDPConn, to *net.UDPAddr, src io.ReaderAt, size int64, p params) (int64, error) {
	if d, ok := ctx.Deadline(); ok {
		c.SetWriteDeadline(d)
	}
	last := uint64(size/int64(p.blksize)) + 1 // the last block is short, maybe empty
	var base uint64                           // the first block not yet acknowledged
	pkt := make([]byte, 4+p.blksize)
	sendFrom := func(first uint64) error {
		if first == 0 {
			_, err := c.WriteToUDP(oackPacket(p.oack), to)
			return err
		}
		for k := first; k < first+uint64(p.window) && k <= last; k++ {
			n, err := src.ReadAt(pkt[4:], int64(k-1)*int64(p.blksize))
			if err != nil && err != io.EOF {
				return err
			}
			binary.BigEndian.PutUint16(pkt, opDATA)
			binary.BigEndian.PutUint16(pkt[2:], uint16(k))
			if _, err := c.WriteToUDP(pkt[:4+n], to); err != nil {
				return err
			}
		}
		return nil
	}
	if len(p.oack) == 0 {
		base = 1
	}
	buf := make([]byte, 516)
	acked, tries, silent := int64(0), 0, time.Now()
	for {
		if err := sendFrom(base); err != nil {
			return acked, err
		}
		end := min(base+uint64(p.window)-1, last)
		if base == 0 {
			end = 0 // the OACK's acknowledgement, block 0, before any data
		}
		k, ok, err := awaitAck(ctx, c, to, buf, base, end, p.wait)
		if err != nil {
			return acked, err
		}
		if !ok { // silence for the timeout: the window again, from the first unacknowledged
			tries++
			if tries > maxRetries || time.Since(silent) > maxSilence {
				return acked, fmt.Errorf("the client stopped acknowledging (block %d, %d tries of %v)", base, tries, p.wait)
			}
			continue
		}
		tries, silent = 0, time.Now()
		base = k + 1
		acked = min(int64(k)*int64(p.blksize), size)
		if k == last {
			return size, nil
		}
	}
}

// awaitAck waits up to wait for the client to acknowledge a block from first to end
// (counting on past the wrap: the block number on the wire is the low 16 bits) and
// returns it; ok is false when the client stayed silent. A duplicate acknowledgement of
// an earlier block is no reason to send again (RFC 1123's cure for the Sorcerer's
// Apprentice): it waits on, within the same timeout. Packets from any other port get
// RFC 1350's "unknown transfer ID" and change nothing.
func awaitAck(ctx context.Context, c *net.UDPConn, to *net.UDPAddr, buf []byte, first, end uint64, wait time.Duration) (uint64, bool, error) {
	deadline := time.Now().Add(wait)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	c.SetReadDeadline(deadline)
	for {
		n, from, err := c.ReadFromUDP(buf)
		if ctx.Err() != nil {
			return 0, false, fmt.Errorf("transfer ended: %w", ctx.Err())
		}
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return 0, false, nil
			}
			return 0, false, err
		}
		if !from.IP.Equal(to.IP) || from.Port != to.Port {
			sendError(c, from, errUnknownTID, "not your transfer")
			continue
		}
		if n < 4 {
			continue
		}
		switch binary.BigEndian.Uint16(buf) {
		case opERROR:
			return 0, false, fmt.Errorf("the client ended the transfer: %q", strings.TrimRight(string(buf[4:n]), "\x00"))
		case opACK:
			got := binary.BigEndian.Uint16(buf[2:])
			for k := first; k <= end; k++ {
				if uint16(k) == got {
					return k, true, nil
				}
			}
		}
	}
}

// oackPacket is an option acknowledgement.
func oackPacket(opts [][2]string) []byte {
	var b bytes.Buffer
	b.Write([]byte{0, opOACK})
	for _, o := range opts {
		b.WriteString(o[0])
		b.WriteByte(0)
		b.WriteString(o[1])
		b.WriteByte(0)
	}
	return b.Bytes()
}
