//go:build tools

// Package initramfs holds the tester image: the boot-time uinit (./uinit), the kernel
// config fragment (./kernel) and, in this file, the u-root commands the image carries
// (scripts/build-image asks 'go list -tags tools' for these imports) and the mkuimage
// image builder, pinned in go.mod (the tools build tag keeps them out of builds).
//
// The image carries what an operator uses at the board's console, not all of u-root's
// core: file and text tools, processes, mounts, modules, the network and power. Left
// out, for the size of a board's QSPI: sshd, scp, wget (net/http and SSH crypto),
// gpgv, kexec, strace, and the x86, disk and container tools (msr, io, rsdp, gpt, blkid,
// losetup, chroot, unshare, switch_root...).
package initramfs

import (
	_ "github.com/u-root/mkuimage/cmd/mkuimage"
	// boot and shell
	_ "github.com/u-root/u-root/cmds/core/gosh"
	_ "github.com/u-root/u-root/cmds/core/init"
	// files
	_ "github.com/u-root/u-root/cmds/core/cat"
	_ "github.com/u-root/u-root/cmds/core/chmod"
	_ "github.com/u-root/u-root/cmds/core/cp"
	_ "github.com/u-root/u-root/cmds/core/dd"
	_ "github.com/u-root/u-root/cmds/core/find"
	_ "github.com/u-root/u-root/cmds/core/grep"
	_ "github.com/u-root/u-root/cmds/core/gzip"
	_ "github.com/u-root/u-root/cmds/core/head"
	_ "github.com/u-root/u-root/cmds/core/hexdump"
	_ "github.com/u-root/u-root/cmds/core/ln"
	_ "github.com/u-root/u-root/cmds/core/ls"
	_ "github.com/u-root/u-root/cmds/core/md5sum"
	_ "github.com/u-root/u-root/cmds/core/mkdir"
	_ "github.com/u-root/u-root/cmds/core/more"
	_ "github.com/u-root/u-root/cmds/core/mv"
	_ "github.com/u-root/u-root/cmds/core/pwd"
	_ "github.com/u-root/u-root/cmds/core/readlink"
	_ "github.com/u-root/u-root/cmds/core/rm"
	_ "github.com/u-root/u-root/cmds/core/sort"
	_ "github.com/u-root/u-root/cmds/core/strings"
	_ "github.com/u-root/u-root/cmds/core/tail"
	_ "github.com/u-root/u-root/cmds/core/tar"
	_ "github.com/u-root/u-root/cmds/core/tee"
	_ "github.com/u-root/u-root/cmds/core/touch"
	_ "github.com/u-root/u-root/cmds/core/tr"
	_ "github.com/u-root/u-root/cmds/core/uniq"
	_ "github.com/u-root/u-root/cmds/core/wc"
	_ "github.com/u-root/u-root/cmds/core/xargs"
	// system
	_ "github.com/u-root/u-root/cmds/core/date"
	_ "github.com/u-root/u-root/cmds/core/df"
	_ "github.com/u-root/u-root/cmds/core/dmesg"
	_ "github.com/u-root/u-root/cmds/core/echo"
	_ "github.com/u-root/u-root/cmds/core/false"
	_ "github.com/u-root/u-root/cmds/core/free"
	_ "github.com/u-root/u-root/cmds/core/hwclock"
	_ "github.com/u-root/u-root/cmds/core/kill"
	_ "github.com/u-root/u-root/cmds/core/mount"
	_ "github.com/u-root/u-root/cmds/core/poweroff"
	_ "github.com/u-root/u-root/cmds/core/printenv"
	_ "github.com/u-root/u-root/cmds/core/ps"
	_ "github.com/u-root/u-root/cmds/core/seq"
	_ "github.com/u-root/u-root/cmds/core/shutdown"
	_ "github.com/u-root/u-root/cmds/core/sleep"
	_ "github.com/u-root/u-root/cmds/core/stty"
	_ "github.com/u-root/u-root/cmds/core/sync"
	_ "github.com/u-root/u-root/cmds/core/time"
	_ "github.com/u-root/u-root/cmds/core/timeout"
	_ "github.com/u-root/u-root/cmds/core/true"
	_ "github.com/u-root/u-root/cmds/core/umount"
	_ "github.com/u-root/u-root/cmds/core/uname"
	_ "github.com/u-root/u-root/cmds/core/uptime"
	_ "github.com/u-root/u-root/cmds/core/which"
	// kernel modules
	_ "github.com/u-root/u-root/cmds/core/insmod"
	_ "github.com/u-root/u-root/cmds/core/lsmod"
	_ "github.com/u-root/u-root/cmds/core/rmmod"
	// network
	_ "github.com/u-root/u-root/cmds/core/hostname"
	_ "github.com/u-root/u-root/cmds/core/ip"
	_ "github.com/u-root/u-root/cmds/core/netcat"
	_ "github.com/u-root/u-root/cmds/core/netstat"
	_ "github.com/u-root/u-root/cmds/core/ping"
)
