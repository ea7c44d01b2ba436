package main

import (
	"io"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/wharfdata/wharf/ship"
	"github.com/wharfdata/wharf/spool"
)

// envTestShip is a TEST-ONLY hook, read by `wharf ship` so that the crash tests can kill the
// process at chosen points: a comma-separated list of point:value, where point is
//
//	kill-after-put:N     SIGKILL itself the Nth time an object is in the store but not yet
//	                     recorded in the spool
//	kill-after-record:N  SIGKILL itself the Nth time an upload is recorded, before local
//	                     retention
//	kill-mid-body:N      SIGKILL itself once N bytes of one upload's body were read (aim it
//	                     past the first part of a multipart upload)
//	pause:D              sleep D after each read of an upload's body (spreads uploads out
//	                     so that a kill at a random time lands inside one)
//
// for example WHARF_TEST_SHIP=kill-after-put:2. Unset (always, outside tests) it costs nothing.
const envTestShip = "WHARF_TEST_SHIP"

// shipTestHooks parses the hook spec in the environment; without one it returns no hooks.
func shipTestHooks(getenv func(string) string) ship.Hooks {
	spec := getenv(envTestShip)
	if spec == "" {
		return ship.Hooks{}
	}
	var afterPut, afterRecord, midBody int64
	var pause time.Duration
	for item := range strings.SplitSeq(spec, ",") {
		name, v, _ := strings.Cut(strings.TrimSpace(item), ":")
		n, _ := strconv.ParseInt(v, 10, 64)
		switch name {
		case "kill-after-put":
			afterPut = n
		case "kill-after-record":
			afterRecord = n
		case "kill-mid-body":
			midBody = n
		case "pause":
			pause, _ = time.ParseDuration(v)
		}
	}
	var puts, records atomic.Int64
	h := ship.Hooks{Point: func(name string, _ spool.File) {
		switch {
		case name == "after-put" && afterPut > 0 && puts.Add(1) == afterPut:
			killSelf()
		case name == "after-record" && afterRecord > 0 && records.Add(1) == afterRecord:
			killSelf()
		}
	}}
	if midBody > 0 || pause > 0 {
		h.Body = func(_ spool.File, r io.Reader) io.Reader {
			return &hookedBody{r: r, killAt: midBody, pause: pause}
		}
	}
	return h
}

// hookedBody reads an upload's body, pausing after each read and killing the process once
// killAt bytes were read.
type hookedBody struct {
	r      io.Reader
	n      int64
	killAt int64
	pause  time.Duration
}

func (b *hookedBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.n += int64(n)
	if b.killAt > 0 && b.n >= b.killAt {
		killSelf()
	}
	if b.pause > 0 && n > 0 {
		time.Sleep(b.pause)
	}
	return n, err
}

// killSelf ends the process as a crash would: SIGKILL, no deferred code, no cleanup.
func killSelf() {
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}
