#!/usr/bin/env python3
"""Writes the captured trees under testdata/show/ that the golden tests of `show --root` read.

Each tree is what linerate reads on a machine: sys/ and proc/ files plus linerate/kernel.json
(the rtnetlink and ethtool answers, nic.Captured format 1). See README.md beside this file
for where each value comes from. Run it from the repository root; it rewrites both trees.
"""
import json, os, shutil, sys

HERE = os.path.dirname(os.path.abspath(__file__))

# Feature names in bit order, as kernel 6.18 reports ETH_SS_FEATURES (captured on veth).
FEATURES = json.load(open(os.path.join(HERE, "featnames.json")))


def write(root, path, text):
    p = os.path.join(root, path)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "w") as f:
        f.write(text)


def symlink(root, path, target):
    p = os.path.join(root, path)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    os.symlink(target, p)


def features(active, changeable, fixed_on=()):
    """Raw feature bits: active ones on; changeable ones hw (not fixed); fixed_on on but fixed."""
    out = []
    for n in FEATURES:
        on = n in active or n in fixed_on
        hw = n in changeable
        out.append({"name": n, "hw": hw, "wanted": on and hw, "active": on, "nochange": False})
    return out


def stats64(**kw):
    keys = ["rx_packets", "tx_packets", "rx_bytes", "tx_bytes", "rx_errors", "tx_errors",
            "rx_dropped", "tx_dropped", "multicast", "collisions", "rx_length_errors",
            "rx_over_errors", "rx_crc_errors", "rx_frame_errors", "rx_fifo_errors",
            "rx_missed_errors", "tx_aborted_errors", "tx_carrier_errors", "tx_fifo_errors",
            "tx_heartbeat_errors", "tx_window_errors", "rx_compressed", "tx_compressed",
            "rx_nohandler"]
    return {k: kw.get(k, 0) for k in keys}


def loopback(root, links, ethtool):
    links.append({"name": "lo", "index": 1, "kind": "", "mac": "00:00:00:00:00:00", "mtu": 65536,
                  "min_mtu": 0, "max_mtu": 0, "flags": 0x10049, "promiscuity": 0,
                  "operstate": "unknown", "num_rx_queues": 1, "num_tx_queues": 1,
                  "stats64": stats64(rx_packets=42, tx_packets=42, rx_bytes=3528, tx_bytes=3528)})
    ethtool["lo"] = {"driver": None, "link_modes": None, "channels": None, "rings": None,
                     "coalesce": None, "pause": None, "features": None, "driver_stats": None,
                     "unsupported": {"driver": "not supported by this interface"}}
    write(root, "sys/class/net/lo/queues/rx-0/rps_cpus", "0\n")
    write(root, "sys/class/net/lo/queues/rx-0/rps_flow_cnt", "0\n")
    write(root, "sys/class/net/lo/queues/tx-0/tx_timeout", "0\n")


def sysctls(root, core, tcp_rmem, tcp_wmem, cc):
    for k, v in core.items():
        write(root, "proc/sys/net/core/" + k, "%s\n" % v)
    write(root, "proc/sys/net/ipv4/tcp_rmem", tcp_rmem + "\n")
    write(root, "proc/sys/net/ipv4/tcp_wmem", tcp_wmem + "\n")
    write(root, "proc/sys/net/ipv4/tcp_congestion_control", cc + "\n")


# macb's ethtool -S names: gem_statistics[] in drivers/net/ethernet/cadence/macb.h, then
# the per-queue q0_* set of macb_main.c (49 on a one-queue Zynq-7000 GEM).
GEM_STATS = """tx_octets tx_frames tx_broadcast_frames tx_multicast_frames tx_pause_frames
tx_64_byte_frames tx_65_127_byte_frames tx_128_255_byte_frames tx_256_511_byte_frames
tx_512_1023_byte_frames tx_1024_1518_byte_frames tx_greater_than_1518_byte_frames tx_underrun
tx_single_collision_frames tx_multiple_collision_frames tx_excessive_collisions tx_late_collisions
tx_deferred_frames tx_carrier_sense_errors rx_octets rx_frames rx_broadcast_frames
rx_multicast_frames rx_pause_frames rx_64_byte_frames rx_65_127_byte_frames rx_128_255_byte_frames
rx_256_511_byte_frames rx_512_1023_byte_frames rx_1024_1518_byte_frames
rx_greater_than_1518_byte_frames rx_undersized_frames rx_oversize_frames rx_jabbers
rx_frame_check_sequence_errors rx_length_field_frame_errors rx_symbol_errors rx_alignment_errors
rx_resource_errors rx_overruns rx_ip_header_checksum_errors rx_tcp_checksum_errors
rx_udp_checksum_errors q0_rx_packets q0_rx_bytes q0_rx_dropped q0_tx_packets q0_tx_bytes
q0_tx_dropped""".split()


def zynq7000(root):
    links, ethtool = [], {}
    loopback(root, links, ethtool)
    links.append({"name": "eth0", "index": 2, "kind": "", "mac": "00:0a:35:00:01:22",
                  "perm_mac": "", "mtu": 1500, "min_mtu": 68, "max_mtu": 1500, "flags": 0x11043,
                  "promiscuity": 0, "operstate": "up", "num_rx_queues": 1, "num_tx_queues": 1,
                  "stats64": stats64(rx_packets=1048576, tx_packets=524288, rx_bytes=1509949440,
                                     tx_bytes=34603008, multicast=12, rx_errors=3, rx_crc_errors=3)})
    vals = {n: 0 for n in GEM_STATS}
    vals.update(tx_frames=524288, tx_64_byte_frames=520000, tx_65_127_byte_frames=4288,
                rx_frames=1048579, rx_1024_1518_byte_frames=1048000, rx_65_127_byte_frames=579,
                rx_broadcast_frames=40, rx_multicast_frames=12, rx_frame_check_sequence_errors=3,
                q0_rx_packets=1048576, q0_rx_bytes=1509949440, q0_tx_packets=524288,
                q0_tx_bytes=34603008)
    mii = ["10baseT/Half", "10baseT/Full", "100baseT/Half", "100baseT/Full", "1000baseT/Full"]
    ethtool["eth0"] = {
        "driver": {"name": "macb", "version": "6.1.0", "firmware": "", "bus": "e000b000.ethernet"},
        "link_modes": {"speed_mbps": 1000, "duplex": "full", "autoneg": True, "port": "MII",
                       "supported": mii + ["Autoneg", "TP", "MII"],
                       "advertised": mii + ["Autoneg", "TP", "MII"],
                       "partner": mii + ["Autoneg", "Pause"]},
        "channels": None,
        "rings": {"rx": 512, "tx": 512, "rx_max": 8192, "tx_max": 4096, "rx_mini": 0,
                  "rx_mini_max": 0, "rx_jumbo": 0, "rx_jumbo_max": 0},
        "coalesce": None, "pause": None,
        "features": features(
            active={"tx-scatter-gather", "tx-checksum-ip-generic", "rx-checksum",
                    "tx-generic-segmentation", "rx-gro"},
            changeable={"tx-scatter-gather", "tx-checksum-ip-generic", "rx-checksum",
                        "tx-generic-segmentation", "rx-gro", "tx-nocache-copy", "rx-gro-list",
                        "rx-udp-gro-forwarding"}),
        "driver_stats": {n: vals[n] for n in GEM_STATS},
        "unsupported": {"channels": "not supported by macb", "coalesce": "not supported by macb",
                        "pause": "not supported by macb"}}
    json.dump({"format": 1, "api": "netlink", "links": links, "ethtool": ethtool},
              open_w(root, "linerate/kernel.json"), indent=1)

    e = "sys/class/net/eth0/"
    write(root, e + "queues/rx-0/rps_cpus", "0\n")
    write(root, e + "queues/rx-0/rps_flow_cnt", "0\n")
    write(root, e + "queues/tx-0/tx_timeout", "0\n")
    for k in ("napi_defer_hard_irqs", "gro_flush_timeout", "threaded"):
        write(root, e + k, "0\n")
    write(root, "sys/devices/platform/axi/e000b000.ethernet/modalias", "of:NethernetT(null)Ccdns,zynq-gem\n")
    symlink(root, e + "device", "../../../devices/platform/axi/e000b000.ethernet")
    write(root, "sys/devices/system/cpu/online", "0-1\n")
    for c in (0, 1):
        d = "sys/devices/system/cpu/cpu%d/" % c
        write(root, d + "cpufreq/scaling_governor", "ondemand\n")
        write(root, d + "cpufreq/scaling_cur_freq", "333333\n")
        write(root, d + "cpufreq/scaling_min_freq", "222222\n")
        write(root, d + "cpufreq/scaling_max_freq", "666666\n")
        for i, (name, lat) in enumerate([("WFI", 1), ("RAM_SR", 10)]):
            write(root, d + "cpuidle/state%d/name" % i, name + "\n")
            write(root, d + "cpuidle/state%d/latency" % i, "%d\n" % lat)
            write(root, d + "cpuidle/state%d/disable" % i, "0\n")
    write(root, "proc/interrupts",
          "           CPU0       CPU1       \n"
          " 24:          0          0     GIC-0  27 Edge      gt\n"
          " 25:     187442     181920     GIC-0  29 Edge      twd\n"
          " 27:    1572866          0     GIC-0  54 Level     eth0\n"
          " 28:        436          0     GIC-0  82 Level     xuartps\n"
          "IPI0:          0          0  CPU wakeup interrupts\n"
          "IPI1:          0          0  Timer broadcast interrupts\n"
          "Err:          0\n")
    write(root, "proc/irq/27/smp_affinity_list", "0-1\n")
    write(root, "proc/irq/27/smp_affinity", "3\n")
    write(root, "proc/irq/27/effective_affinity_list", "0\n")
    write(root, "proc/1/comm", "init\n")
    sysctls(root, {"rmem_max": 163840, "wmem_max": 163840, "rmem_default": 163840,
                   "wmem_default": 163840, "netdev_max_backlog": 1000, "dev_weight": 64,
                   "netdev_budget": 300, "netdev_budget_usecs": 20000,
                   "rps_sock_flow_entries": 0, "busy_read": 0, "busy_poll": 0},
            "4096\t131072\t3375104", "4096\t16384\t3375104", "cubic")
    write(root, "proc/sys/kernel/osrelease", "6.1.0\n")
    procnet(root, 2, [52000, 800])
    # The GEM node as a vendor BSP leaves it: status okay, and the dma-rx-depth property
    # that no upstream driver reads (big-endian u32 1024).
    g = "sys/firmware/devicetree/base/axi/ethernet@e000b000/"
    write(root, g + "compatible", "cdns,zynq-gem\0cdns,gem\0")
    write(root, g + "status", "okay\0")
    write(root, g + "phy-mode", "rgmii-id\0")
    write(root, g + "name", "ethernet\0")
    with open_w(root, g + "dma-rx-depth") as f:
        f.write("\x00\x00\x04\x00")
    write(root, "sys/firmware/devicetree/base/model", "Xilinx ZC702 board\0")
    write(root, "sys/firmware/devicetree/base/compatible", "xlnx,zynq-zc702\0xlnx,zynq-7000\0")


def procnet(root, ncpu, busy):
    """softnet_stat (15 columns as 6.x prints), /proc/stat per-CPU times, no packet sockets."""
    lines = []
    for c in range(ncpu):
        cols = [busy[c], 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, c, 0, 0]
        lines.append(" ".join("%08x" % v for v in cols))
    write(root, "proc/net/softnet_stat", "\n".join(lines) + "\n")
    st = ["cpu  %d 0 %d %d 0 %d %d 0 0 0" % (sum(busy), sum(busy) // 2, 100000 * ncpu, sum(busy) // 4, sum(busy) // 4)]
    for c in range(ncpu):
        st.append("cpu%d %d 0 %d %d 0 %d %d 0 0 0" % (c, busy[c], busy[c] // 2, 100000, busy[c] // 4, busy[c] // 4))
    st.append("intr 0")
    write(root, "proc/stat", "\n".join(st) + "\n")
    write(root, "proc/net/packet", "sk               RefCnt Type Proto  Iface R Rmem   User   Inode\n")


def open_w(root, path):
    p = os.path.join(root, path)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    return open(p, "w")


IGB_STATS = """rx_packets tx_packets rx_bytes tx_bytes rx_broadcast tx_broadcast rx_multicast
tx_multicast multicast collisions rx_crc_errors rx_no_buffer_count rx_missed_errors
tx_aborted_errors tx_carrier_errors tx_window_errors tx_abort_late_coll tx_deferred_ok
tx_single_coll_ok tx_multi_coll_ok tx_timeout_count rx_long_length_errors
rx_short_length_errors rx_align_errors tx_tcp_seg_good tx_tcp_seg_failed rx_flow_control_xon
rx_flow_control_xoff tx_flow_control_xon tx_flow_control_xoff rx_long_byte_count
tx_dma_out_of_sync tx_queue_0_packets tx_queue_0_bytes tx_queue_0_restart tx_queue_1_packets
tx_queue_1_bytes tx_queue_1_restart tx_queue_2_packets tx_queue_2_bytes tx_queue_2_restart
tx_queue_3_packets tx_queue_3_bytes tx_queue_3_restart rx_queue_0_packets rx_queue_0_bytes
rx_queue_0_drops rx_queue_0_csum_err rx_queue_0_alloc_failed rx_queue_1_packets
rx_queue_1_bytes rx_queue_1_drops rx_queue_1_csum_err rx_queue_1_alloc_failed
rx_queue_2_packets rx_queue_2_bytes rx_queue_2_drops rx_queue_2_csum_err
rx_queue_2_alloc_failed rx_queue_3_packets rx_queue_3_bytes rx_queue_3_drops
rx_queue_3_csum_err rx_queue_3_alloc_failed""".split()


def pcie_igb(root):
    links, ethtool = [], {}
    loopback(root, links, ethtool)
    links.append({"name": "enp3s0f0", "index": 2, "kind": "", "mac": "a0:36:9f:12:34:56",
                  "perm_mac": "a0:36:9f:12:34:56", "mtu": 1500, "min_mtu": 68, "max_mtu": 9216,
                  "flags": 0x11043, "promiscuity": 0, "operstate": "up", "num_rx_queues": 8,
                  "num_tx_queues": 8,
                  "stats64": stats64(rx_packets=9000000, tx_packets=8000000,
                                     rx_bytes=13000000000, tx_bytes=11000000000, multicast=900,
                                     rx_missed_errors=1520, rx_dropped=0)})
    vals = {n: 0 for n in IGB_STATS}
    vals.update(rx_packets=9000000, tx_packets=8000000, rx_bytes=13000000000,
                tx_bytes=11000000000, rx_broadcast=310, rx_multicast=900, multicast=900,
                rx_missed_errors=1520, rx_no_buffer_count=230, tx_tcp_seg_good=120000,
                rx_long_byte_count=13000000000)
    for q in range(4):
        vals["tx_queue_%d_packets" % q] = 2000000
        vals["tx_queue_%d_bytes" % q] = 2750000000
        vals["rx_queue_%d_packets" % q] = 2250000
        vals["rx_queue_%d_bytes" % q] = 3250000000
    copper = ["10baseT/Half", "10baseT/Full", "100baseT/Half", "100baseT/Full", "1000baseT/Full"]
    off = {"tx-checksum-ipv4", "tx-checksum-ipv6", "tx-checksum-sctp", "rx-checksum",
           "tx-scatter-gather", "tx-tcp-segmentation", "tx-tcp6-segmentation",
           "tx-tcp-mangleid-segmentation", "tx-generic-segmentation", "rx-gro", "rx-hashing",
           "rx-vlan-hw-parse", "tx-vlan-hw-insert", "tx-udp-segmentation"}
    ethtool["enp3s0f0"] = {
        "driver": {"name": "igb", "version": "6.1.0-18-amd64", "firmware": "1.63, 0x800009fa",
                   "bus": "0000:03:00.0"},
        "link_modes": {"speed_mbps": 1000, "duplex": "full", "autoneg": True,
                       "port": "Twisted Pair",
                       "supported": copper + ["Autoneg", "TP", "Pause", "Asym_Pause"],
                       "advertised": copper + ["Autoneg", "TP", "Pause", "Asym_Pause"],
                       "partner": copper + ["Autoneg", "Pause"]},
        "channels": {"rx": 0, "tx": 0, "other": 1, "combined": 4, "rx_max": 0, "tx_max": 0,
                     "other_max": 1, "combined_max": 8},
        "rings": {"rx": 256, "tx": 256, "rx_max": 4096, "tx_max": 4096, "rx_mini": 0,
                  "rx_mini_max": 0, "rx_jumbo": 0, "rx_jumbo_max": 0},
        "coalesce": {"rx-usecs": 3, "tx-usecs": 3},
        "pause": {"autoneg": True, "rx": True, "tx": True},
        "features": features(active=off | {"highdma"},
                             changeable=off | {"tx-nocache-copy", "rx-gro-list",
                                               "rx-udp-gro-forwarding", "rx-all", "loopback",
                                               "rx-vlan-filter"},
                             fixed_on={"highdma"}),
        "driver_stats": {n: vals[n] for n in IGB_STATS}}
    json.dump({"format": 1, "api": "netlink", "links": links, "ethtool": ethtool},
              open_w(root, "linerate/kernel.json"), indent=1)

    e = "sys/class/net/enp3s0f0/"
    for q in range(8):
        write(root, e + "queues/rx-%d/rps_cpus" % q, "0\n")
        write(root, e + "queues/rx-%d/rps_flow_cnt" % q, "0\n")
        write(root, e + "queues/tx-%d/xps_cpus" % q, "%x\n" % (1 << (q % 4)))
    for k in ("napi_defer_hard_irqs", "gro_flush_timeout", "threaded"):
        write(root, e + k, "0\n")
    dev = "sys/devices/pci0000:00/0000:00:1c.0/0000:03:00.0/"
    write(root, dev + "current_link_speed", "5.0 GT/s PCIe\n")
    write(root, dev + "max_link_speed", "5.0 GT/s PCIe\n")
    write(root, dev + "current_link_width", "2\n")
    write(root, dev + "max_link_width", "4\n")
    for irq in range(125, 130):
        write(root, dev + "msi_irqs/%d" % irq, "msix\n")
    symlink(root, e + "device", "../../../devices/pci0000:00/0000:00:1c.0/0000:03:00.0")
    write(root, "sys/module/pcie_aspm/parameters/policy", "[default] performance powersave powersupersave\n")
    write(root, "sys/devices/system/cpu/online", "0-3\n")
    for c in range(4):
        d = "sys/devices/system/cpu/cpu%d/" % c
        write(root, d + "cpufreq/scaling_governor", "powersave\n")
        write(root, d + "cpufreq/scaling_cur_freq", "800000\n")
        write(root, d + "cpufreq/scaling_min_freq", "800000\n")
        write(root, d + "cpufreq/scaling_max_freq", "3600000\n")
        for i, (name, lat) in enumerate([("POLL", 0), ("C1", 2), ("C1E", 10), ("C6", 133)]):
            write(root, d + "cpuidle/state%d/name" % i, name + "\n")
            write(root, d + "cpuidle/state%d/latency" % i, "%d\n" % lat)
            write(root, d + "cpuidle/state%d/disable" % i, "0\n")
    lines = ["            CPU0       CPU1       CPU2       CPU3       "]
    lines.append("   0:         22          0          0          0   IO-APIC    2-edge      timer")
    lines.append(" 125:          1          0          0          0  IR-PCI-MSIX-0000:03:00.0    0-edge      enp3s0f0")
    for q in range(4):
        counts = ["0"] * 4
        counts[0] = "2301447"
        lines.append(" %d: %s  IR-PCI-MSIX-0000:03:00.0    %d-edge      enp3s0f0-TxRx-%d" % (
            126 + q, " ".join("%10s" % c for c in counts), q + 1, q))
    lines.append(" NMI:          0          0          0          0   Non-maskable interrupts")
    lines.append(" LOC:   10446081    9823372    9932110    9615222   Local timer interrupts")
    write(root, "proc/interrupts", "\n".join(lines) + "\n")
    for irq in range(125, 130):
        write(root, "proc/irq/%d/smp_affinity_list" % irq, "0-3\n")
        write(root, "proc/irq/%d/smp_affinity" % irq, "f\n")
        write(root, "proc/irq/%d/effective_affinity_list" % irq, "0\n")
    write(root, "proc/1/comm", "systemd\n")
    write(root, "proc/812/comm", "irqbalance\n")
    sysctls(root, {"rmem_max": 212992, "wmem_max": 212992, "rmem_default": 212992,
                   "wmem_default": 212992, "netdev_max_backlog": 1000, "dev_weight": 64,
                   "netdev_budget": 300, "netdev_budget_usecs": 8000,
                   "rps_sock_flow_entries": 0, "busy_read": 0, "busy_poll": 0},
            "4096\t131072\t6291456", "4096\t16384\t4194304", "cubic")
    write(root, "proc/sys/kernel/osrelease", "6.1.0-18-amd64\n")
    procnet(root, 4, [90000, 12000, 11000, 10500])


for name, fn in (("zynq7000-gem", zynq7000), ("pcie-igb", pcie_igb)):
    root = os.path.join(HERE, name)
    shutil.rmtree(root, ignore_errors=True)
    fn(root)
    print("wrote", root)
