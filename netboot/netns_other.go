//go:build !linux

package netboot

import "net"

type nsOpener struct{}

func newNSOpener() (*nsOpener, error) { return &nsOpener{}, nil }

func (o *nsOpener) close() {}

func (o *nsOpener) listenUDP(laddr *net.UDPAddr) (*net.UDPConn, error) {
	return net.ListenUDP("udp4", laddr)
}
