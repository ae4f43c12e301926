package netboot

import (
	"fmt"
	"net"
	"runtime"

	"golang.org/x/sys/unix"
)

// nsOpener opens a transfer's UDP socket in the network namespace the server was made
// in. Go runs a goroutine on any of the process's threads, and a thread may have been
// moved to another namespace (a test's, or a program's that serves several): the socket
// is opened on a locked thread set to the server's namespace, then the thread is put
// back.
type nsOpener struct{ fd int }

func newNSOpener() (*nsOpener, error) {
	fd, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("tftp: the network namespace: %w", err)
	}
	return &nsOpener{fd: fd}, nil
}

func (o *nsOpener) close() { unix.Close(o.fd) }

func sameNS(a, b int) bool {
	var sa, sb unix.Stat_t
	return unix.Fstat(a, &sa) == nil && unix.Fstat(b, &sb) == nil && sa.Dev == sb.Dev && sa.Ino == sb.Ino
}

// listenUDP is net.ListenUDP in the server's namespace.
func (o *nsOpener) listenUDP(laddr *net.UDPAddr) (*net.UDPConn, error) {
	runtime.LockOSThread()
	cur, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	defer unix.Close(cur)
	if sameNS(cur, o.fd) {
		runtime.UnlockOSThread()
		return net.ListenUDP("udp4", laddr)
	}
	if err := unix.Setns(o.fd, unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("tftp: enter the server's network namespace: %w", err)
	}
	c, err := net.ListenUDP("udp4", laddr)
	if unix.Setns(cur, unix.CLONE_NEWNET) == nil {
		runtime.UnlockOSThread() // back where it was; a thread left elsewhere dies with its goroutine
	}
	return c, err
}
