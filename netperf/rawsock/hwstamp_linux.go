package rawsock

import (
	"errors"
	"fmt"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// Hardware timestamps (Documentation/networking/timestamping.rst, packet_mmap.rst's
// PACKET_TIMESTAMP): the NIC stamps each frame from its own clock as it leaves and as it
// arrives; a TX ring hands the stamp back in the frame's slot when the driver is done
// with it, an RX ring in the frame's header, each flagged TP_STATUS_TS_RAW_HARDWARE.
// On a Cadence GEM this is the TSU of a ZynqMP (macb with CONFIG_MACB_USE_HWSTAMP);
// the Zynq-7000's GEM has none, nor has veth or QEMU's GEM model.

// hwNeeds is what the driver must offer (ETHTOOL_GET_TS_INFO) for both ways.
const hwNeeds = unix.SOF_TIMESTAMPING_TX_HARDWARE | unix.SOF_TIMESTAMPING_RX_HARDWARE | unix.SOF_TIMESTAMPING_RAW_HARDWARE

// NoHWStamps is the answer of a port that cannot stamp every frame in hardware; Why
// says what it lacks, for the result.
type NoHWStamps struct{ Why string }

func (e *NoHWStamps) Error() string { return e.Why }

// EnableHWStamps turns on the NIC's stamping of every frame both ways (SIOCSHWTSTAMP:
// tx on, rx all) and returns what puts back the configuration it had. A port that
// cannot is a *NoHWStamps naming what is missing (ethtool -T shows the same).
func EnableHWStamps(iface string) (restore func() error, err error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("socket for SIOCSHWTSTAMP: %w", err)
	}
	defer unix.Close(fd)
	info, err := unix.IoctlGetEthtoolTsInfo(fd, iface)
	if err != nil {
		return nil, &NoHWStamps{fmt.Sprintf("%s: its driver reports no timestamping (ETHTOOL_GET_TS_INFO: %v)", iface, err)}
	}
	switch {
	case info.So_timestamping&hwNeeds != hwNeeds:
		return nil, &NoHWStamps{fmt.Sprintf("%s has no hardware timestamping (ethtool -T %s: no hardware-transmit/receive/raw-clock)", iface, iface)}
	case info.Tx_types&(1<<unix.HWTSTAMP_TX_ON) == 0:
		return nil, &NoHWStamps{fmt.Sprintf("%s cannot stamp every frame it sends (ethtool -T %s: no tx type on)", iface, iface)}
	case info.Rx_filters&(1<<unix.HWTSTAMP_FILTER_ALL) == 0:
		return nil, &NoHWStamps{fmt.Sprintf("%s stamps only PTP frames on receive, not test frames (ethtool -T %s: no rx filter all)", iface, iface)}
	}
	old, err := unix.IoctlGetHwTstamp(fd, iface)
	if err != nil {
		return nil, fmt.Errorf("%s: SIOCGHWTSTAMP: %w", iface, err)
	}
	saved := *old
	want := unix.HwTstampConfig{Tx_type: unix.HWTSTAMP_TX_ON, Rx_filter: unix.HWTSTAMP_FILTER_ALL}
	if err := unix.IoctlSetHwTstamp(fd, iface, &want); err != nil {
		if errors.Is(err, unix.EPERM) {
			return nil, fmt.Errorf("%s: SIOCSHWTSTAMP: %w (needs CAP_NET_ADMIN)", iface, err)
		}
		return nil, &NoHWStamps{fmt.Sprintf("%s refused to stamp every frame (SIOCSHWTSTAMP: %v)", iface, err)}
	}
	return func() error {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		if err := unix.IoctlSetHwTstamp(fd, iface, &saved); err != nil {
			return fmt.Errorf("%s: put back its timestamping (tx type %d, rx filter %d): %w", iface, saved.Tx_type, saved.Rx_filter, err)
		}
		return nil
	}, nil
}

// StampHW asks the kernel for the NIC's hardware stamp of every frame this ring sends,
// handed back in the frame's slot (read with Reap).
func (t *TX) StampHW() error {
	if err := unix.SetsockoptInt(t.fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPING, unix.SOF_TIMESTAMPING_TX_HARDWARE|unix.SOF_TIMESTAMPING_RAW_HARDWARE); err != nil {
		return fmt.Errorf("SO_TIMESTAMPING: %w", err)
	}
	if err := unix.SetsockoptInt(t.fd, unix.SOL_PACKET, unix.PACKET_TIMESTAMP, unix.SOF_TIMESTAMPING_RAW_HARDWARE); err != nil {
		return fmt.Errorf("PACKET_TIMESTAMP: %w", err)
	}
	t.hw, t.reap = true, t.next
	return nil
}

// Reap hands fn each frame the driver is done with since the last Reap whose slot
// carries the NIC's TX stamp, with the stamp, and frees the slot's stamp flags. The
// stamps also queue on the socket's error queue (the kernel's way for SO_TIMESTAMPING);
// that queue is emptied here, as nothing else reads it.
func (t *TX) Reap(fn func(frame []byte, hwNanos int64)) {
	if !t.hw {
		return
	}
	for t.reap != t.next {
		off := t.reap * t.frameSize
		status := u32at(t.ring, off)
		st := atomic.LoadUint32(status)
		if st&^tpStatusTSMask != tpStatusAvailable && st&^tpStatusTSMask != tpStatusWrongFormat {
			break // the driver has not sent it yet
		}
		if st&unix.TP_STATUS_TS_RAW_HARDWARE != 0 {
			n := int(*u32at(t.ring, off+4)) - t.vnet // tp_len counts the virtio_net_hdr
			sec, nsec := *u32at(t.ring, off+16), *u32at(t.ring, off+20)
			if n >= 0 && n <= t.maxLen {
				data := off + tp2DataOff + t.vnet
				fn(t.ring[data:data+n], int64(sec)*1e9+int64(nsec))
			}
		}
		atomic.StoreUint32(status, st&^tpStatusTSMask)
		t.reap = (t.reap + 1) % t.frames
	}
	var buf [256]byte
	var oob [512]byte
	for i := 0; i < 4096; i++ {
		if _, _, _, _, err := unix.Recvmsg(t.fd, buf[:], oob[:], unix.MSG_ERRQUEUE|unix.MSG_DONTWAIT); err != nil {
			break
		}
	}
}

// StampHW asks for the NIC's hardware stamp of every frame this ring receives; Poll
// says which frames carry one.
func (r *RX) StampHW() error {
	if err := unix.SetsockoptInt(r.fd, unix.SOL_PACKET, unix.PACKET_TIMESTAMP, unix.SOF_TIMESTAMPING_RAW_HARDWARE); err != nil {
		return fmt.Errorf("PACKET_TIMESTAMP: %w", err)
	}
	return nil
}
