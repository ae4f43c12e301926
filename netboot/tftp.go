package netboot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The TFTP server is written here rather than taken from a library. The module proxy
// serves one Go TFTP server that negotiates window size, pack.ag/tftp (untouched since
// 2018), and it acknowledges what RFC 2348 and 7440 forbid (blksize 0, 1 or 65535,
// windowsize 0: measured against it before this file was written) and opens a socket
// for every request before a handler could bound the transfers; pin/tftp is not served.
// A read-only server is one request parser and one send loop: RFC 1350 with the option
// extension (2347), blksize (2348), timeout and tsize (2349) and windowsize (7440),
// fuzzed (FuzzRequest) and checked against atftp and curl as clients, and against
// U-Boot's tftpboot on the emulated ZC702.

// TFTP opcodes (RFC 1350, 2347) and error codes.
const (
	opRRQ   = 1
	opWRQ   = 2
	opDATA  = 3
	opACK   = 4
	opERROR = 5
	opOACK  = 6

	errNotDefined = 0
	errNotFound   = 1
	errAccess     = 2
	errIllegal    = 4
	errUnknownTID = 5
)

// Bounds on what a request may ask.
const (
	// MaxTransfers bounds the transfers at once (a line boots a few boards together; a
	// flood of requests is no line).
	MaxTransfers = 64
	// MaxName bounds a requested file's name.
	MaxName = 255
	// MaxWindow is the largest window the station grants (RFC 7440 lets a server answer
	// with less than asked): 64 blocks in flight fill a gigabit link's pipe at 1468.
	MaxWindow = 64

	// maxWindowBytes bounds a window's bytes whatever its blocks.
	maxWindowBytes = 128 << 10
	// MaxTransferTime ends any transfer, however it goes: a 10 MB image takes seconds.
	MaxTransferTime = 10 * time.Minute

	maxRequest  = 1024 // RFC 2347 keeps a request within 512 octets; twice is lenient
	maxOptions  = 16
	minBlock    = 8     // RFC 2348
	maxBlock    = 65464 // RFC 2348
	defaultWait = 2 * time.Second
	maxRetries  = 5
	// maxSilence ends a transfer whose client stopped acknowledging, even under a
	// negotiated timeout of 255 s.
	maxSilence = 60 * time.Second
)

// Fetch is one transfer a board asked for: who, which file, how much of how much went
// with which block size and window, how long it took, and why it failed (nil when it
// did not).
type Fetch struct {
	Client    net.IP
	Name      string
	Size      int64
	Bytes     int64
	BlockSize int
	Window    int
	Took      time.Duration
	Err       error
}

// TFTP serves a boot directory read-only, and files made in memory beside it (the boot
// script, named as a file of the directory).
type TFTP struct {
	root  *os.Root
	made  map[string][]byte
	fetch func(Fetch)
	slots chan struct{}
	ns    *nsOpener

	mu     sync.Mutex
	active map[string]bool // client address:port with a transfer under way
	conn   *net.UDPConn
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	closed sync.Once
}

// NewTFTP serves dir and made; fetched (nil: none) is told of each transfer as it ends.
// Transfers open their ports in the network namespace NewTFTP is called in.
func NewTFTP(dir string, made map[string][]byte, fetched func(Fetch)) (*TFTP, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("--boot-dir %s: %w", dir, err)
	}
	if fetched == nil {
		fetched = func(Fetch) {}
	}
	ns, err := newNSOpener()
	if err != nil {
		root.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &TFTP{root: root, made: made, fetch: fetched, slots: make(chan struct{}, MaxTransfers), ns: ns,
		active: map[string]bool{}, ctx: ctx, cancel: cancel}, nil
}

// Serve answers requests on conn (UDP port 69 of the station's address on the test
// network) until Close; each transfer runs from a port of its own (RFC 1350's TID).
func (t *TFTP) Serve(conn *net.UDPConn) error {
	t.mu.Lock()
	t.conn = conn
	t.mu.Unlock()
	buf := make([]byte, maxRequest+1)
	for {
		n, addr, err := conn.ReadFromUDP(buf)
		if err != nil {
			if t.ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("tftp: %w", err)
		}
		if n > maxRequest {
			sendError(conn, addr, errIllegal, fmt.Sprintf("a request of at most %d bytes", maxRequest))
			continue
		}
		t.request(conn, addr, buf[:n])
	}
}

// Close stops serving and ends the transfers under way; once is enough, more do
// nothing.
func (t *TFTP) Close() error {
	var err error
	t.closed.Do(func() {
		t.cancel()
		t.mu.Lock()
		if t.conn != nil {
			err = t.conn.Close()
		}
		t.mu.Unlock()
		t.wg.Wait()
		t.ns.close()
		err = errors.Join(err, t.root.Close())
	})
	return err
}

// request answers one packet sent to port 69.
func (t *TFTP) request(conn *net.UDPConn, addr *net.UDPAddr, b []byte) {
	if len(b) < 2 || b[0] != 0 {
		return
	}
	switch b[1] {
	case opRRQ:
	case opWRQ:
		sendError(conn, addr, errAccess, "the station's boot directory is read-only")
		return
	case opDATA, opACK:
		sendError(conn, addr, errUnknownTID, "no transfer on this port")
		return
	case opERROR, opOACK:
		return
	default:
		sendError(conn, addr, errIllegal, "unknown opcode")
		return
	}
	req, err := parseRequest(b[2:])
	if err != nil {
		t.fetch(Fetch{Client: addr.IP, Name: req.name, Err: err})
		sendError(conn, addr, errIllegal, err.Error())
		return
	}
	src, size, code, err := t.open(req.name)
	if err != nil {
		t.fetch(Fetch{Client: addr.IP, Name: req.name, Err: err})
		sendError(conn, addr, code, err.Error())
		return
	}
	key := addr.String()
	t.mu.Lock()
	dup := t.active[key]
	t.mu.Unlock()
	if dup { // the client sent its request again before our first answer reached it
		closeSource(src)
		return
	}
	select {
	case t.slots <- struct{}{}:
	default:
		closeSource(src)
		t.fetch(Fetch{Client: addr.IP, Name: req.name, Err: errors.New("too many transfers at once")})
		sendError(conn, addr, errNotDefined, "the station is busy: try again")
		return
	}
	t.mu.Lock()
	t.active[key] = true
	t.mu.Unlock()
	t.wg.Add(1)
	go t.transfer(conn, addr, req, src, size)
}

// transfer sends one file from a port of its own and reports it.
func (t *TFTP) transfer(conn *net.UDPConn, addr *net.UDPAddr, req request, src io.ReaderAt, size int64) {
	defer t.wg.Done()
	defer func() {
		closeSource(src)
		t.mu.Lock()
		delete(t.active, addr.String())
		t.mu.Unlock()
		<-t.slots
	}()
	p := negotiate(req.opts, size)
	f := Fetch{Client: addr.IP, Name: req.name, Size: size, BlockSize: p.blksize, Window: p.window}
	start := time.Now()
	local := &net.UDPAddr{IP: conn.LocalAddr().(*net.UDPAddr).IP}
	c, err := t.ns.listenUDP(local)
	if err != nil {
		f.Err = err
		sendError(conn, addr, errNotDefined, "the station cannot open a transfer port")
	} else {
		ctx, cancel := context.WithTimeout(t.ctx, MaxTransferTime)
		stop := context.AfterFunc(ctx, func() { c.Close() }) // a blocked read ends at once
		f.Bytes, f.Err = send(ctx, c, addr, src, size, p)
		stop()
		cancel()
		c.Close()
	}
	f.Took = time.Since(start)
	t.fetch(f)
}

// open finds a requested file: one made in memory, or a regular file under the boot
// directory (os.Root refuses ".." and symlinks that lead out of it). It returns the
// TFTP error code to answer with when it fails.
func (t *TFTP) open(name string) (io.ReaderAt, int64, uint16, error) {
	rel, err := cleanName(name)
	if err != nil {
		return nil, 0, errAccess, err
	}
	if b, ok := t.made[rel]; ok {
		return strings.NewReader(string(b)), int64(len(b)), 0, nil
	}
	// O_NONBLOCK: a FIFO put in the directory fails the regular-file check below rather
	// than blocking the server in open.
	f, err := t.root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, 0, errNotFound, fmt.Errorf("no %s in the boot directory", rel)
		}
		return nil, 0, errAccess, fmt.Errorf("%s: not a file of the boot directory", rel)
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, 0, errAccess, fmt.Errorf("%s: not a regular file", rel)
	}
	return f, fi.Size(), 0, nil
}

func closeSource(src io.ReaderAt) {
	if c, ok := src.(io.Closer); ok {
		c.Close()
	}
}

// cleanName is a requested name as a path under the boot directory: a leading '/' taken
// off (some loaders ask for "/boot.scr.uimg"); an error for a name too long, with a
// control character or a backslash, or with a ".." part.
func cleanName(name string) (string, error) {
	switch {
	case len(name) == 0 || len(name) > MaxName:
		return "", fmt.Errorf("want a file name of 1..%d characters", MaxName)
	case strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '\\' }):
		return "", errors.New("want a file name without control characters or backslashes")
	}
	rel := strings.TrimLeft(name, "/")
	for _, part := range strings.Split(rel, "/") {
		if part == ".." {
			return "", errors.New("want a file under the boot directory: no '..'")
		}
	}
	rel = path.Clean(rel)
	if rel == "." {
		return "", errors.New("want a file, not the boot directory")
	}
	return rel, nil
}

func sendError(c *net.UDPConn, to *net.UDPAddr, code uint16, msg string) {
	if len(msg) > 200 {
		msg = msg[:200]
	}
	b := append([]byte{0, opERROR, byte(code >> 8), byte(code)}, msg...)
	c.WriteToUDP(append(b, 0), to)
}
