package station

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestMain doubles as a station process for TestKillDuringBurst: with
// STATION_HELPER=DIR,ADDR it runs a station on DIR at ADDR until killed.
func TestMain(m *testing.M) {
	if v := os.Getenv("STATION_HELPER"); v != "" {
		f := strings.SplitN(v, ",", 3)
		dir, addr, db := f[0], f[1], ""
		if len(f) == 3 {
			db = f[2]
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		err := Run(ctx, Config{Listen: addr, Data: dir, DB: db, Log: log.New(io.Discard, "", 0)})
		cancel()
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func startHelper(t *testing.T, dir, addr, db string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "STATION_HELPER="+dir+","+addr+","+db)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 200; i++ {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return cmd
		}
		time.Sleep(25 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	t.Fatal("the station did not start")
	return nil
}

// TestKillDuringBurst: boards post in a burst; the station is killed (SIGKILL) in the
// middle; a station started again on the store has every report it acknowledged.
func TestKillDuringBurst(t *testing.T) { killDuringBurst(t, "") }

// killDuringBurst runs the burst against a station on the bbolt store, or on db.
func killDuringBurst(t *testing.T, db string) {
	dir := t.TempDir()
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	cmd := startHelper(t, dir, addr, db)
	var mu sync.Mutex
	var acked []string
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 5 * time.Second}
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				id := fmt.Sprintf("k%d-%03d", w, i)
				resp, err := client.Post("http://"+addr+"/api/reports", "application/json", bytes.NewReader(report(id, "zc702", "PASS", 900)))
				if err != nil {
					return // the station is gone
				}
				resp.Body.Close()
				if resp.StatusCode == 201 {
					mu.Lock()
					acked = append(acked, id)
					mu.Unlock()
				}
			}
		}(w)
	}
	time.Sleep(300 * time.Millisecond)
	cmd.Process.Kill()
	cmd.Wait()
	wg.Wait()
	mu.Lock()
	n := len(acked)
	mu.Unlock()
	if n == 0 || n >= 800 {
		t.Fatalf("%d reports acknowledged before the kill: the kill did not land mid-burst", n)
	}
	cmd = startHelper(t, dir, addr, db)
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	resp, err := client.Get("http://" + addr + "/api/reports")
	if err != nil {
		t.Fatal(err)
	}
	var list []Summary
	json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	have := map[string]bool{}
	for _, s := range list {
		have[s.ID] = true
	}
	for _, id := range acked {
		if !have[id] {
			t.Errorf("report %s was acknowledged (201) and is gone after the kill", id)
		}
	}
	t.Logf("%d acknowledged before SIGKILL, %d stored after the restart", n, len(list))
}
