package command

// Usage is the command's help: iperf3 3.12's options, each as linerate takes it.
const Usage = `Usage: linerate iperf3 [-s|-c host] [options]
       linerate iperf3 [-h|--help] [-v|--version]

An iperf3 wire-compatible server and client: a stock iperf3 (3.7 to 3.18) is the peer
in either role. Options, defaults and output are iperf3 3.12's, parsed as getopt_long
does (-t1, -uR, --time=1).

Server or Client:
  -p, --port      #         server port to listen on/connect to (default 5201)
  -f, --format   [kmgtKMGT] format to report: Kbits, Mbits, Gbits, Tbits
  -i, --interval  #         seconds between periodic throughput reports (default 1)
  -I, --pidfile file        write PID file
  -F, --file name           xmit/recv the specified file (TCP)
  -A, --affinity n[,m]      set CPU affinity (n: here; m: the server's)
  -B, --bind <host>[%<dev>] bind to the address <host> (and the device <dev>)
  --bind-dev <dev>          bind to the network interface with SO_BINDTODEVICE
  -V, --verbose             more detailed output
  -J, --json                output in JSON format
  --logfile f               send output to a log file
  --forceflush              force flushing output at every interval (output is
                            never buffered here: accepted for scripts)
  --timestamps[=format]     emit a timestamp at the start of each output line
                            (strftime(3) format, default "%c ")
  --rcv-timeout #           idle timeout for receiving data, ms (default 120000)
  --snd-timeout #           timeout for unacknowledged TCP data, ms
  -d, --debug[=#]           emit debugging output
  -v, --version             show version information and quit
  -h, --help                show this message and quit
Server specific:
  -s, --server              run in server mode
  -D, --daemon              run the server as a daemon
  -1, --one-off             handle one client connection then exit
  --server-bitrate-limit #[KMG]  refuse tests asking for more in total
  --idle-timeout #          drop a client silent for # seconds (default 30)
  --rsa-private-key-path    path to the RSA private key used to decrypt
                            authentication credentials
  --authorized-users-path   path to the configuration file containing user
                            credentials (lines: user,sha256("{user}password"))
  --time-skew-threshold     time skew threshold (in seconds) between the server
                            and client during the authentication process (default 10)
Client specific:
  -c, --client <host>[%<dev>] run in client mode, connecting to <host>
  -u, --udp                 use UDP rather than TCP
  --connect-timeout #       timeout for control connection setup (ms)
  -b, --bitrate #[KMG][/#]  target bitrate in bits/sec (0 for unlimited)
                            (default 1 Mbit/sec for UDP, unlimited for TCP)
                            (optional slash and packet count for burst mode)
  --pacing-timer #[KMG]     set the timing for pacing, in microseconds (default 1000)
  --fq-rate #[KMG]          enable fair-queuing based socket pacing in bits/sec
  -t, --time      #         time in seconds to transmit for (default 10 secs)
  -n, --bytes     #[KMG]    number of bytes to transmit (instead of -t)
  -k, --blockcount #[KMG]   number of blocks (packets) to transmit (instead of -t or -n)
  -l, --length    #[KMG]    length of buffer to read or write
                            (default 128 KB for TCP, 1460 for UDP)
  --cport         <port>    bind the data streams to this client port (and the next)
  -P, --parallel  #         number of parallel client streams to run
  -R, --reverse             run in reverse mode (server sends, client receives)
  --bidir                   run in bidirectional mode
  -w, --window    #[KMG]    set send/receive socket buffer sizes
  -C, --congestion <algo>   set TCP congestion control algorithm
  -M, --set-mss   #         set TCP maximum segment size (MTU - 40 bytes)
  -N, --no-delay            set TCP no delay, disabling Nagle's Algorithm
  -4, --version4            only use IPv4
  -6, --version6            only use IPv6
  -S, --tos N               set the IP type of service, 0-255 (52, 064, 0x34)
  --dscp N or --dscp val    set the IP dscp value, 0-63 or symbolic (AF11, EF, CS5...)
  -Z, --zerocopy            use a 'zero copy' method of sending data (sendfile)
  -O, --omit N              omit the first N seconds
  -T, --title str           prefix every output line with this string
  --extra-data str          data string to include in client and server JSON
  --get-server-output       get results from server
  --udp-counters-64bit      use 64-bit counters in UDP test packets
  --repeating-payload       use repeating pattern in payload
  --dont-fragment           set IPv4 Don't Fragment flag
  --username                username for authentication (password from
                            IPERF3_PASSWORD, or asked for)
  --rsa-public-key-path     path to the RSA public key used to encrypt
                            authentication credentials
linerate only:
  --copy                    read received TCP data into memory, as iperf3 does; by
                            default the kernel discards it (recv MSG_TRUNC), so the
                            figure is the link's and not the receiving CPU's copy

Not here, each refused with the reason: -L/--flowlabel (Go's connect cannot carry an
IPv6 flow label), --sctp, -X/--xbind, --nstreams (TCP and UDP only).
`
