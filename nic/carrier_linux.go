package nic

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// WaitCarrier waits for iface's carrier on a socket subscribed to rtnetlink's link
// notifications (CarrierWaiter): the kernel says when the carrier comes, so the wait
// ends with it, where a poll of the link dump every 50 ms saw it 25 ms late on average
// (three waits in a board's validation: the PHY loopback's two writes and the tune's
// ring depths) and cost two dumps a poll on a CPU the driver's own work waits for. The
// port is asked once after subscribing (a carrier that came before is seen then), and
// again each second and after the socket lost notifications (ENOBUFS).
func (k *liveKernel) WaitCarrier(ctx context.Context, iface string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	s, err := nl.Subscribe(unix.NETLINK_ROUTE, unix.RTNLGRP_LINK)
	if err != nil {
		return pollCarrier(ctx, iface, deadline, timeout)
	}
	defer s.Close()
	index := -1
	var asked time.Time
	for {
		if time.Since(asked) >= time.Second {
			asked = time.Now()
			if l, err := netlink.LinkByName(iface); err == nil {
				index = l.Attrs().Index
				if l.Attrs().RawFlags&unix.IFF_LOWER_UP != 0 {
					return nil
				}
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return noCarrier(iface, timeout)
		}
		// Woken at least each tenth of a second to see ctx.
		tv := unix.NsecToTimeval(min(left, 100*time.Millisecond).Nanoseconds())
		s.SetReceiveTimeout(&tv)
		msgs, _, err := s.Receive()
		switch {
		case err == nil:
		case errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.ENOBUFS):
			asked = time.Time{} // notifications lost: ask the port
			continue
		default:
			return pollCarrier(ctx, iface, deadline, timeout)
		}
		for _, m := range msgs {
			if m.Header.Type != unix.RTM_NEWLINK || len(m.Data) < unix.SizeofIfInfomsg {
				continue
			}
			ifi := nl.DeserializeIfInfomsg(m.Data)
			if index >= 0 && int(ifi.Index) == index && ifi.Flags&unix.IFF_LOWER_UP != 0 {
				return nil
			}
			if index < 0 {
				asked = time.Time{} // the port was not there: a link came, ask again
			}
		}
	}
}

// pollCarrier asks for iface every 50 ms until it has carrier: where no socket can be
// subscribed to the notifications.
func pollCarrier(ctx context.Context, iface string, deadline time.Time, timeout time.Duration) error {
	for {
		if l, err := netlink.LinkByName(iface); err == nil && l.Attrs().RawFlags&unix.IFF_LOWER_UP != 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return noCarrier(iface, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func noCarrier(iface string, timeout time.Duration) error {
	return fmt.Errorf("%s: %w within %v", iface, ErrNoCarrier, timeout)
}
