// Package iperf3 speaks the iperf3 control and data protocol, as a client and as a
// server, so that a stock iperf3 is the peer in either role. The protocol is read from
// esnet/iperf's src/iperf_api.c, iperf_tcp.c, iperf_udp.c and net.c (facts in
// ../shared/IPERF3.md); nothing here links iperf3.
//
// A test: the client connects the control channel (TCP, default port 5201) and sends a
// 37-byte cookie; the server drives the states PARAM_EXCHANGE (the client's parameters as
// length-prefixed JSON), CREATE_STREAMS (the client opens the data streams, each
// introduced by the cookie, or by a 4-byte datagram for UDP), TEST_START, TEST_RUNNING;
// the client decides the end (TEST_END), results are exchanged as JSON both ways
// (EXCHANGE_RESULTS), and DISPLAY_RESULTS, IPERF_DONE close the test.
package iperf3

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"strconv"
	"time"
)

// States of the control channel (iperf_api.h), sent as one signed byte.
const (
	TestStart        int8 = 1
	TestRunning      int8 = 2
	TestEnd          int8 = 4
	ParamExchange    int8 = 9
	CreateStreams    int8 = 10
	ServerTerminate  int8 = 11
	ClientTerminate  int8 = 12
	ExchangeResults  int8 = 13
	DisplayResults   int8 = 14
	IperfDone        int8 = 16
	AccessDenied     int8 = -1
	ServerErrorState int8 = -2
)

// Error numbers a server sends with ServerError (iperf_api.h i_errno).
const (
	ieNumStreams     = 6
	ieBlockSize      = 7
	ieUDPBlockSize   = 20
	ieMaxDuration    = 37
	ieTotalRate      = 27
	ieRecvParams     = 114
	ieServerTerminal = 120
	ieAffinity       = 132
	ieAuthTest       = 142
)

// DefaultPort is iperf3's port.
const DefaultPort = 5201

// ParseListen reads a server's ADDR:PORT (":5201": every address).
func ParseListen(s string) (host string, port int, err error) {
	host, p, err := net.SplitHostPort(s)
	n, perr := strconv.Atoi(p)
	if err != nil || perr != nil || n < 1 || n > 65535 {
		return "", 0, fmt.Errorf("%q: want ADDR:PORT, such as :5201", s)
	}
	return host, n, nil
}

// CookieSize is the cookie's length on the wire: 36 characters and a NUL.
const CookieSize = 37

const cookieChars = "abcdefghijklmnopqrstuvwxyz234567"

// NewCookie makes a random cookie as iperf3 does (make_cookie in iperf_util.c). It only
// has to tell tests apart, so it comes from math/rand/v2, which the Go runtime seeds
// without waiting: crypto/rand's getrandom() blocks at boot until the kernel's CRNG is
// ready, which an idle board without a hardware RNG may not be for minutes.
func NewCookie() []byte {
	b := make([]byte, CookieSize)
	for i := 0; i < CookieSize-1; i++ {
		b[i] = cookieChars[rand.IntN(len(cookieChars))]
	}
	b[CookieSize-1] = 0
	return b
}

// Caps on JSON messages: iperf3 3.18 caps the parameters at 8 KiB; results have no cap
// in iperf3, this implementation takes up to MaxResultsJSON (a long test's server output
// with -J and --get-server-output stays well below it).
const (
	MaxParamsJSON  = 8 << 10
	MaxResultsJSON = 4 << 20
)

// ErrTooLarge is a JSON message above its cap.
var ErrTooLarge = errors.New("JSON message above the size cap")

// writeJSON sends a 4-byte big-endian length and the JSON text (no NUL).
func writeJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	buf := make([]byte, 4+len(b))
	binary.BigEndian.PutUint32(buf, uint32(len(b)))
	copy(buf[4:], b)
	_, err = w.Write(buf)
	return err
}

// readJSON reads one length-prefixed JSON message into a generic object, refusing
// messages above max before reading them.
func readJSON(r io.Reader, max int) (map[string]any, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, fmt.Errorf("read JSON length: %w", err)
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > uint32(max) {
		return nil, fmt.Errorf("%w: %d bytes, cap %d", ErrTooLarge, n, max)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, fmt.Errorf("read JSON (%d bytes): %w", n, err)
	}
	return decodeObject(b)
}

func decodeObject(b []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("malformed JSON: %w", err)
	}
	if m == nil {
		return nil, errors.New("malformed JSON: not an object")
	}
	return m, nil
}

// num reads a number the way iperf3 writes them: 3.12 and 3.13 print -1 as
// 18446744073709551615, so anything at or above 2^63 means -1 (not applicable).
func num(m map[string]any, key string) (float64, bool) {
	v, ok := m[key]
	if !ok {
		return 0, false
	}
	n, ok := v.(json.Number)
	if !ok {
		if b, isBool := v.(bool); isBool {
			if b {
				return 1, true
			}
			return 0, true
		}
		return 0, false
	}
	if u, err := strconv.ParseUint(string(n), 10, 64); err == nil {
		if u >= 1<<63 {
			return -1, true
		}
		return float64(u), true
	}
	f, err := n.Float64()
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	if f >= 1<<63 {
		return -1, true
	}
	return f, true
}

func numInt(m map[string]any, key string) int64 {
	f, _ := num(m, key)
	return int64(f)
}

func flag(m map[string]any, key string) bool {
	v, ok := m[key]
	if !ok {
		return false
	}
	switch x := v.(type) {
	case bool:
		return x
	case json.Number:
		f, _ := x.Float64()
		return f != 0
	}
	return false
}

func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// Params are the test parameters the client sends.
type Params struct {
	UDP       bool
	Omit      int
	Time      int
	Bytes     uint64
	Blocks    uint64
	MSS       int
	NoDelay   bool
	Parallel  int
	Reverse   bool
	Bidir     bool
	Window    int
	Len       int
	Bandwidth uint64
	// RateGiven says -b was given: a UDP test's 0 is then no limit, as in iperf3,
	// where without -b it is 1 Mbit/s.
	RateGiven        bool
	PacingTimer      int
	TOS              int
	Title            string
	Congestion       string
	GetServerOutput  bool
	UDPCounters64Bit bool
	RepeatingPayload bool
	ClientVersion    string
	// FQRate is fair-queuing pacing of each data socket, bit/s (--fq-rate:
	// SO_MAX_PACING_RATE); DontFragment sets IPv4 DF on UDP (--dont-fragment). Both are
	// sent to the server, which applies them too.
	FQRate       uint64
	DontFragment bool
	// Burst is -b rate/N: N packets back to back at each pacing step; 0 paces each.
	Burst int
	// ServerAffinity pins the server to a CPU (-A n,m's m); -1 or 0 with HasServerAffinity false: none.
	ServerAffinity    int
	HasServerAffinity bool
	// ExtraData is --extra-data: a string both ends put in their JSON.
	ExtraData string
	// AuthToken is the client's credentials for a server that asks for them (AuthToken).
	AuthToken string
	// Local is this end's own socket options, never sent.
	Local LocalOpts
}

// LocalOpts are socket options one end applies to its own data sockets.
type LocalOpts struct {
	BindDev    string        // SO_BINDTODEVICE (-B host%dev, --bind-dev)
	SndTimeout time.Duration // TCP_USER_TIMEOUT (--snd-timeout)
	ZeroCopy   bool          // -Z: TCP data sent with sendfile(2) from a memory file
	// File is -F: TCP streams this side sends send the file's bytes; streams it
	// receives write what they get into it.
	File string
}

// paramsJSON is the object iperf3's send_parameters writes.
func (p *Params) paramsJSON() map[string]any {
	m := map[string]any{
		"omit": p.Omit, "time": p.Time, "num": p.Bytes, "blockcount": p.Blocks,
		"parallel": p.Parallel, "len": p.Len, "client_version": p.ClientVersion,
	}
	if p.UDP {
		m["udp"] = true
	} else {
		m["tcp"] = true
	}
	if p.MSS > 0 {
		m["MSS"] = p.MSS
	}
	if p.NoDelay {
		m["nodelay"] = true
	}
	if p.Reverse {
		m["reverse"] = true
	}
	if p.Bidir {
		m["bidirectional"] = true
	}
	if p.Window > 0 {
		m["window"] = p.Window
	}
	if p.Bandwidth > 0 {
		m["bandwidth"] = p.Bandwidth
	}
	if p.PacingTimer > 0 {
		m["pacing_timer"] = p.PacingTimer
	}
	if p.TOS > 0 {
		m["TOS"] = p.TOS
	}
	if p.Title != "" {
		m["title"] = p.Title
	}
	if p.Congestion != "" {
		m["congestion"] = p.Congestion
	}
	if p.GetServerOutput {
		m["get_server_output"] = 1
	}
	if p.UDPCounters64Bit {
		m["udp_counters_64bit"] = 1
	}
	if p.RepeatingPayload {
		m["repeating_payload"] = 1
	}
	if p.FQRate > 0 {
		m["fqrate"] = p.FQRate
	}
	if p.Burst > 0 {
		m["burst"] = p.Burst
	}
	if p.Local.ZeroCopy {
		m["zerocopy"] = 1
	}
	if p.DontFragment {
		m["dont_fragment"] = 1
	}
	if p.HasServerAffinity {
		m["server_affinity"] = p.ServerAffinity
	}
	if p.ExtraData != "" {
		m["extra_data"] = p.ExtraData
	}
	if p.AuthToken != "" {
		m["authtoken"] = p.AuthToken
	}
	return m
}

// Limits a server puts on what a client asks for.
const (
	MaxParallel = 128
	MaxTCPLen   = 1 << 20
	MaxUDPLen   = 65507
	MaxDuration = 86400
)

// paramError is a parameter a server refuses, with the i_errno it sends.
type paramError struct {
	ierrno int32
	msg    string
}

func (e *paramError) Error() string { return e.msg }

// parseParams reads and checks the client's parameters.
func parseParams(m map[string]any) (*Params, error) {
	p := &Params{
		UDP:              flag(m, "udp"),
		Omit:             int(numInt(m, "omit")),
		Time:             int(numInt(m, "time")),
		MSS:              int(numInt(m, "MSS")),
		NoDelay:          flag(m, "nodelay"),
		Parallel:         int(numInt(m, "parallel")),
		Reverse:          flag(m, "reverse"),
		Bidir:            flag(m, "bidirectional"),
		Window:           int(numInt(m, "window")),
		Len:              int(numInt(m, "len")),
		PacingTimer:      int(numInt(m, "pacing_timer")),
		TOS:              int(numInt(m, "TOS")),
		Title:            str(m, "title"),
		Congestion:       str(m, "congestion"),
		GetServerOutput:  flag(m, "get_server_output"),
		UDPCounters64Bit: flag(m, "udp_counters_64bit"),
		RepeatingPayload: flag(m, "repeating_payload"),
		ClientVersion:    str(m, "client_version"),
	}
	if v, _ := num(m, "num"); v > 0 {
		p.Bytes = uint64(v)
	}
	if v, _ := num(m, "blockcount"); v > 0 {
		p.Blocks = uint64(v)
	}
	if v, _ := num(m, "bandwidth"); v > 0 {
		p.Bandwidth = uint64(v)
	}
	if v, _ := num(m, "fqrate"); v > 0 {
		p.FQRate = uint64(v)
	}
	p.DontFragment = flag(m, "dont_fragment")
	// -Z asks both ends to send with sendfile (3.12 sends it); newer clients' gso, gro,
	// skip_rx_copy and mptcp change nothing on the wire and are left to them.
	p.Local.ZeroCopy = flag(m, "zerocopy")
	if v, _ := num(m, "burst"); v > 0 && v <= 100000 {
		p.Burst = int(v)
	}
	if v, ok := num(m, "server_affinity"); ok && v >= 0 {
		p.ServerAffinity, p.HasServerAffinity = int(v), true
	}
	p.ExtraData = str(m, "extra_data")
	p.AuthToken = str(m, "authtoken")
	if !p.UDP && !flag(m, "tcp") {
		return nil, &paramError{ieRecvParams, "parameters name neither tcp nor udp"}
	}
	if p.Parallel == 0 {
		p.Parallel = 1
	}
	switch {
	case p.Parallel < 1 || p.Parallel > MaxParallel:
		return nil, &paramError{ieNumStreams, fmt.Sprintf("parallel %d outside 1..%d", p.Parallel, MaxParallel)}
	case p.Time < 0 || p.Time > MaxDuration || p.Omit < 0 || p.Omit > 600:
		return nil, &paramError{ieMaxDuration, fmt.Sprintf("time %d / omit %d out of range", p.Time, p.Omit)}
	case p.UDP && (p.Len < 0 || p.Len > MaxUDPLen || p.Len > 0 && p.Len < 16):
		return nil, &paramError{ieUDPBlockSize, fmt.Sprintf("UDP length %d outside 16..%d", p.Len, MaxUDPLen)}
	case !p.UDP && (p.Len < 0 || p.Len > MaxTCPLen):
		return nil, &paramError{ieBlockSize, fmt.Sprintf("length %d above %d", p.Len, MaxTCPLen)}
	case p.Window < 0 || p.Window > 512<<20:
		return nil, &paramError{ieRecvParams, fmt.Sprintf("window %d out of range", p.Window)}
	}
	if p.Len == 0 {
		p.Len = defaultLen(p.UDP)
	}
	// No bandwidth from the client is no limit (-b 0): iperf3's client sends its 1
	// Mbit/s UDP default itself.
	if p.PacingTimer <= 0 {
		p.PacingTimer = 1000
	}
	return p, nil
}

func defaultLen(udp bool) int {
	if udp {
		return 1460
	}
	return 128 << 10
}

// StreamResult is one stream's entry in the results exchange.
type StreamResult struct {
	ID             int
	Bytes          uint64
	Retransmits    int64
	Jitter         float64
	Errors         int64
	OmittedErrors  int64
	Packets        int64
	OmittedPackets int64
	// HasOmitted: the peer sent omitted_* (iperf3 3.14 and later).
	HasOmitted bool
	StartTime  float64
	EndTime    float64
}

// Results is one side's results message.
type Results struct {
	CPUTotal, CPUUser, CPUSystem float64
	SenderHasRetransmits         int64
	CongestionUsed               string
	Streams                      []StreamResult
	ServerOutputJSON             json.RawMessage
	ServerOutputText             string
}

func (r *Results) toJSON() map[string]any {
	streams := make([]map[string]any, len(r.Streams))
	for i, s := range r.Streams {
		streams[i] = map[string]any{
			"id": s.ID, "bytes": s.Bytes, "retransmits": s.Retransmits, "jitter": s.Jitter,
			"errors": s.Errors, "omitted_errors": s.OmittedErrors, "packets": s.Packets,
			"omitted_packets": s.OmittedPackets, "start_time": s.StartTime, "end_time": s.EndTime,
		}
	}
	m := map[string]any{
		"cpu_util_total": r.CPUTotal, "cpu_util_user": r.CPUUser, "cpu_util_system": r.CPUSystem,
		"sender_has_retransmits": r.SenderHasRetransmits, "streams": streams,
	}
	if r.CongestionUsed != "" {
		m["congestion_used"] = r.CongestionUsed
	}
	if len(r.ServerOutputJSON) > 0 {
		m["server_output_json"] = r.ServerOutputJSON
	}
	if r.ServerOutputText != "" {
		m["server_output_text"] = r.ServerOutputText
	}
	return m
}

// parseResults reads a peer's results as get_results does: the cpu and retransmit fields
// and each stream's id, bytes, retransmits, jitter, errors and packets are required.
func parseResults(m map[string]any) (*Results, error) {
	r := &Results{CongestionUsed: str(m, "congestion_used"), ServerOutputText: str(m, "server_output_text")}
	var ok [4]bool
	r.CPUTotal, ok[0] = num(m, "cpu_util_total")
	r.CPUUser, ok[1] = num(m, "cpu_util_user")
	r.CPUSystem, ok[2] = num(m, "cpu_util_system")
	var shr float64
	shr, ok[3] = num(m, "sender_has_retransmits")
	r.SenderHasRetransmits = int64(shr)
	if !ok[0] || !ok[1] || !ok[2] || !ok[3] {
		return nil, errors.New("results lack cpu_util_* or sender_has_retransmits")
	}
	if so, ok := m["server_output_json"]; ok {
		b, _ := json.Marshal(so)
		r.ServerOutputJSON = b
	}
	arr, isArr := m["streams"].([]any)
	if !isArr {
		return nil, errors.New("results lack a streams array")
	}
	for i, e := range arr {
		sm, isObj := e.(map[string]any)
		if !isObj {
			return nil, fmt.Errorf("results stream %d is not an object", i)
		}
		var s StreamResult
		var have [6]bool
		var f float64
		f, have[0] = num(sm, "id")
		s.ID = int(f)
		f, have[1] = num(sm, "bytes")
		if f > 0 {
			s.Bytes = uint64(f)
		}
		f, have[2] = num(sm, "retransmits")
		s.Retransmits = int64(f)
		s.Jitter, have[3] = num(sm, "jitter")
		f, have[4] = num(sm, "errors")
		s.Errors = int64(f)
		f, have[5] = num(sm, "packets")
		s.Packets = int64(f)
		for _, h := range have {
			if !h {
				return nil, fmt.Errorf("results stream %d lacks id, bytes, retransmits, jitter, errors or packets", i)
			}
		}
		s.OmittedErrors = numInt(sm, "omitted_errors")
		s.OmittedPackets = numInt(sm, "omitted_packets")
		_, s.HasOmitted = sm["omitted_packets"]
		s.StartTime, _ = num(sm, "start_time")
		s.EndTime, _ = num(sm, "end_time")
		r.Streams = append(r.Streams, s)
	}
	return r, nil
}

// streamID is the id of the i-th stream (0-based) as iperf3 numbers them: 1, 3, 4, ...
// (iperf_add_stream skips 2).
// streamSocket is the number iperf3 prints for the i-th stream ("[  5]", and "socket"
// in -J): its file descriptor, which follows from what iperf3 opens before and for each
// stream. Measured with stock 3.12 at both ends, -P 1..12, -R, --bidir, -u, -F: a
// client's streams are 5, 7, 9, 12, 14, ... in the order they connect (TCP and UDP,
// both directions, a --bidir test's receiving streams after its sending ones), with -F
// (a descriptor more each) 5, 8, 12, 15, ...; a TCP server's 5, 8, 11, 13, 15, ..., with
// -F 5, 9, 13, 16, ...; a UDP server's 5, 6, 9, 12, 14, ... (after the second, a stock
// UDP server's numbers vary from run to run: its listening socket is reopened as
// streams arrive). A stock end writing a --logfile numbers from 6 (client 6, 8, 11,
// 13, ...; server 6, 9, 12, 14, ...); linerate numbers as without one.
// Only what is printed follows the descriptors: the results exchanged name streams by
// streamID, as iperf3's do.
func streamSocket(i int, server, udp, file bool) int {
	switch {
	case server && udp:
		return pick(i, []int{5, 6, 9}, 12, 2)
	case server && file:
		return pick(i, []int{5, 9, 13}, 16, 3)
	case server:
		return pick(i, []int{5, 8, 11}, 13, 2)
	case file:
		return pick(i, []int{5, 8}, 12, 3)
	}
	return pick(i, []int{5, 7, 9}, 12, 2)
}

// pick is first[i], or after first from next in steps of step.
func pick(i int, first []int, next, step int) int {
	if i < len(first) {
		return first[i]
	}
	return next + step*(i-len(first))
}

func streamID(i int) int {
	if i == 0 {
		return 1
	}
	return i + 2
}
