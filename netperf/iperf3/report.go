package iperf3

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// StreamInterval is one stream's numbers over one reporting interval, or over the test.
type StreamInterval struct {
	Socket        int     `json:"socket"`
	Start         float64 `json:"start"`
	End           float64 `json:"end"`
	Seconds       float64 `json:"seconds"`
	Bytes         uint64  `json:"bytes"`
	BitsPerSecond float64 `json:"bits_per_second"`
	Retransmits   *int64  `json:"retransmits,omitempty"`
	SndCwnd       *uint64 `json:"snd_cwnd,omitempty"`
	SndWnd        *uint64 `json:"snd_wnd,omitempty"`
	RTT           *uint32 `json:"rtt,omitempty"`
	RTTVar        *uint32 `json:"rttvar,omitempty"`
	PMTU          *uint32 `json:"pmtu,omitempty"`
	// A TCP sender's summary: the extremes of the interval samples.
	MaxSndCwnd  *uint64  `json:"max_snd_cwnd,omitempty"`
	MaxSndWnd   *uint64  `json:"max_snd_wnd,omitempty"`
	MaxRTT      *uint32  `json:"max_rtt,omitempty"`
	MinRTT      *uint32  `json:"min_rtt,omitempty"`
	MeanRTT     *uint32  `json:"mean_rtt,omitempty"`
	Packets     *int64   `json:"packets,omitempty"`
	JitterMS    *float64 `json:"jitter_ms,omitempty"`
	LostPackets *int64   `json:"lost_packets,omitempty"`
	LostPercent *float64 `json:"lost_percent,omitempty"`
	OutOfOrder  *int64   `json:"out_of_order,omitempty"`
	Omitted     bool     `json:"omitted"`
	Sender      bool     `json:"sender"`
}

// Interval is one reporting interval: every stream, and their sum.
type Interval struct {
	Streams         []StreamInterval `json:"streams"`
	Sum             StreamInterval   `json:"sum"`
	SumBidirReverse *StreamInterval  `json:"sum_bidir_reverse,omitempty"`
}

// EndStream is a stream's summary: sender and receiver sides (TCP), or udp.
type EndStream struct {
	Sender   *StreamInterval `json:"sender,omitempty"`
	Receiver *StreamInterval `json:"receiver,omitempty"`
	UDP      *StreamInterval `json:"udp,omitempty"`
	// Diskfile is -F's account: bytes sent and received against the file's size.
	Diskfile *Diskfile `json:"diskfile,omitempty"`
	// local: the stream sends on this side; outOfOrder its UDP datagrams that came late.
	local      bool
	outOfOrder int64
}

// Diskfile is a stream's -F figures, as iperf3 -J reports them.
type Diskfile struct {
	Sent            uint64 `json:"sent"`
	Received        uint64 `json:"received"`
	Size            int64  `json:"size"`
	PercentSent     int    `json:"percent_sent"`
	PercentReceived int    `json:"percent_received"`
	Filename        string `json:"filename"`
}

// CPU is the CPU use of both ends.
type CPU struct {
	HostTotal    float64 `json:"host_total"`
	HostUser     float64 `json:"host_user"`
	HostSystem   float64 `json:"host_system"`
	RemoteTotal  float64 `json:"remote_total"`
	RemoteUser   float64 `json:"remote_user"`
	RemoteSystem float64 `json:"remote_system"`
}

// End is the summary of a test, in iperf3 -J's shape.
type End struct {
	Streams                 []EndStream     `json:"streams"`
	Sum                     *StreamInterval `json:"sum,omitempty"`
	SumSent                 StreamInterval  `json:"sum_sent"`
	SumReceived             StreamInterval  `json:"sum_received"`
	SumSentBidirReverse     *StreamInterval `json:"sum_sent_bidir_reverse,omitempty"`
	SumReceivedBidirReverse *StreamInterval `json:"sum_received_bidir_reverse,omitempty"`
	CPU                     CPU             `json:"cpu_utilization_percent"`
	SenderCongestion        string          `json:"sender_tcp_congestion,omitempty"`
	ReceiverCongestion      string          `json:"receiver_tcp_congestion,omitempty"`
	// done: the test got as far as its results; before that -J's end is {}, as iperf3
	// writes it on an error.
	done bool
}

// Received is what the receiving side counted: sum_received, or, for UDP, whose
// receiver sums in sum, that.
func (e *End) Received() StreamInterval {
	if e.SumReceived.Bytes == 0 && e.Sum != nil {
		return *e.Sum
	}
	return e.SumReceived
}

// MarshalJSON writes {} for a test that ended before its results.
func (e End) MarshalJSON() ([]byte, error) {
	if !e.done {
		return []byte("{}"), nil
	}
	type plain End
	return json.Marshal(plain(e))
}

// Connected is one data connection.
type Connected struct {
	Socket     int    `json:"socket"`
	LocalHost  string `json:"local_host"`
	LocalPort  int    `json:"local_port"`
	RemoteHost string `json:"remote_host"`
	RemotePort int    `json:"remote_port"`
}

// TestStart describes the test.
type TestInfo struct {
	Protocol   string `json:"protocol"`
	NumStreams int    `json:"num_streams"`
	Blksize    int    `json:"blksize"`
	Omit       int    `json:"omit"`
	Duration   int    `json:"duration"`
	Bytes      uint64 `json:"bytes"`
	Blocks     uint64 `json:"blocks"`
	Reverse    int    `json:"reverse"`
	Bidir      int    `json:"bidir"`
	TOS        int    `json:"tos"`
	Bitrate    uint64 `json:"target_bitrate"`
}

// Start is the head of the report.
type Start struct {
	Connected    []Connected    `json:"connected"`
	Version      string         `json:"version"`
	SystemInfo   string         `json:"system_info"`
	Timestamp    map[string]any `json:"timestamp"`
	ConnectingTo map[string]any `json:"connecting_to,omitempty"`
	AcceptedFrom map[string]any `json:"accepted_connection,omitempty"`
	Cookie       string         `json:"cookie"`
	// TCP: the MSS -M asked for, or else the control connection's (iperf3's
	// ctrl_sck_mss).
	TCPMSS        *int `json:"tcp_mss,omitempty"`
	TCPMSSDefault *int `json:"tcp_mss_default,omitempty"`
	// The bitrate asked for (-b), the buffer size asked for (-w) and the buffers the
	// kernel gave the first data socket.
	TargetBitrate uint64   `json:"target_bitrate"`
	SockBufsize   int      `json:"sock_bufsize"`
	SndbufActual  int      `json:"sndbuf_actual"`
	RcvbufActual  int      `json:"rcvbuf_actual"`
	TestStart     TestInfo `json:"test_start"`
	// ExtraData is the client's --extra-data, on both ends.
	ExtraData string            `json:"extra_data,omitempty"`
	Extra     map[string]string `json:"-"`
}

// Report is a whole test in iperf3 -J's top-level shape, so scripts written for
// iperf3 -J read it unchanged.
type Report struct {
	Start            Start      `json:"start"`
	Intervals        []Interval `json:"intervals"`
	End              End        `json:"end"`
	ServerOutputJSON any        `json:"server_output_json,omitempty"`
	ServerOutputText string     `json:"server_output_text,omitempty"`
	Error            string     `json:"error,omitempty"`
}

// unitBytes formats like iperf3's unit_snprintf with 'A' for bytes (1024 steps).
func unitBytes(b float64) string {
	units := []string{"Bytes", "KBytes", "MBytes", "GBytes", "TBytes"}
	i := 0
	for b >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	return fmtUnit(b) + " " + units[i]
}

// unitBits formats bit rates in 1000 steps.
func unitBits(b float64) string { return unitRate(b, 0) }

// unitRate formats a rate in bit/s as iperf3's unit_snprintf does for -f: k, m, g, t
// fix the unit in bits (1000 steps), K, M, G, T in bytes (1024 steps), 0 (or a, A)
// adapts in bits (bytes for A).
func unitRate(bits float64, format byte) string {
	bitUnits := []string{"bits/sec", "Kbits/sec", "Mbits/sec", "Gbits/sec", "Tbits/sec"}
	byteUnits := []string{"Bytes/sec", "KBytes/sec", "MBytes/sec", "GBytes/sec", "TBytes/sec"}
	v, step, units := bits, 1000.0, bitUnits
	if format >= 'A' && format <= 'Z' {
		v, step, units = bits/8, 1024, byteUnits
	}
	if i := strings.IndexByte("kmgt", format|0x20); i >= 0 {
		for j := 0; j <= i; j++ {
			v /= step
		}
		return fmtUnit(v) + " " + units[i+1]
	}
	i := 0
	for v >= step && i < len(units)-1 {
		v /= step
		i++
	}
	return fmtUnit(v) + " " + units[i]
}

func fmtUnit(v float64) string {
	switch {
	case v < 9.995:
		return fmt.Sprintf("%4.2f", v)
	case v < 99.95:
		return fmt.Sprintf("%4.1f", v)
	}
	return fmt.Sprintf("%4.0f", v)
}

func rate(bytes uint64, secs float64) float64 {
	if secs <= 0 {
		return 0
	}
	return float64(bytes) * 8 / secs
}

func nowStamp(t time.Time) map[string]any {
	return map[string]any{"time": t.UTC().Format(time.RFC1123), "timesecs": t.Unix()}
}

func p64(v int64) *int64      { return &v }
func pu64(v uint64) *uint64   { return &v }
func pf64(v float64) *float64 { return &v }
func pu32(v uint32) *uint32   { return &v }
