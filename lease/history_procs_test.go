package lease

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/wharfdata/wharf/cas"
	"github.com/wharfdata/wharf/cas/natskv"
	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
)

// The history check on a real server runs each client in a process of its own: this test
// binary, started again as TestHistoryClientProcess with the client's number, the store's
// kind and URL, and the run's start; each process opens the store itself and prints its
// operations as JSON lines, which the parent merges and checks.

const (
	envHistoryClient = "WHARF_LEASE_HISTORY_CLIENT" // the client's number; set only in a client process
	envHistoryStore  = "WHARF_LEASE_HISTORY_STORE"  // kind and URL of the store: "s3 s3://…"
	envHistoryStart  = "WHARF_LEASE_HISTORY_START"  // the run's start, Unix nanoseconds
	envHistoryRounds = "WHARF_LEASE_HISTORY_ROUNDS"
	envHistoryBroken = "WHARF_LEASE_HISTORY_BROKEN" // "1": the store is expected to misbehave
)

// opLine is one operation as a client process prints it.
type opLine struct {
	Client   int    `json:"c"`
	Kind     opKind `json:"k"`
	Fence    int64  `json:"f"`
	Value    string `json:"v"`
	OK       bool   `json:"ok"`
	OutFence int64  `json:"of"`
	Seq      int64  `json:"s"`
	OutValue string `json:"ov"`
	Expired  bool   `json:"x,omitempty"`
	Unknown  bool   `json:"u,omitempty"`
	Call     int64  `json:"call"`
	Return   int64  `json:"ret"`
}

// storeConfigFor is how a client process reaches the servers of the test run (their
// variables are inherited).
func storeConfigFor(t testing.TB, kind string) *store.Config {
	switch kind {
	case "s3":
		return testenv.MinIO(t).StoreConfig(t)
	case "gs":
		srv := testenv.FakeGCS(t)
		return &store.Config{Getenv: os.Getenv, Set: []store.Setting{{Name: "endpoint", Value: srv.Endpoint}, {Name: "anonymous", Value: "true"}}}
	case "az":
		srv := testenv.Azurite(t)
		return &store.Config{Getenv: os.Getenv, Set: []store.Setting{{Name: "endpoint", Value: srv.Endpoint}, {Name: "account_key", Value: srv.KeyRef(t)}}}
	}
	return nil // file
}

// TestHistoryClientProcess is one client of a history check, when started by runProcesses.
func TestHistoryClientProcess(t *testing.T) {
	c, err := strconv.Atoi(os.Getenv(envHistoryClient))
	if err != nil {
		t.Skip("a client of the history check, started by runProcesses")
	}
	var kind, url string
	fmt.Sscan(os.Getenv(envHistoryStore), &kind, &url)
	start, _ := strconv.ParseInt(os.Getenv(envHistoryStart), 10, 64)
	rec := &recorder{start: time.Unix(0, start), wall: true}
	o := historySize()
	o.broken = os.Getenv(envHistoryBroken) == "1"
	historyClient(t, clientOpener(t, kind, url, o.broken), o, c, rec)
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	for _, op := range rec.ops {
		i, o := op.Input.(hInput), op.Output.(hOutput)
		b, _ := json.Marshal(opLine{Client: i.client, Kind: i.kind, Fence: i.fence, Value: i.value, OK: o.ok,
			OutFence: o.fence, Seq: o.seq, OutValue: o.value, Expired: o.expired, Unknown: o.unknown, Call: op.Call, Return: op.Return})
		fmt.Fprintf(w, "op %s\n", b)
	}
}

// clientOpener opens what a client process races on: the store of kind at url, or, for kind
// "nats", the key-value bucket url on the test cluster (with its revisions ignored when the
// run is the broken variant).
func clientOpener(t *testing.T, kind, url string, broken bool) opener {
	if kind == "nats" {
		kv, err := natskv.Open(t.Context(), natskv.Options{Servers: testenv.NATS(t).URL(), Bucket: url, RetryFor: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { kv.Close() })
		if broken {
			return casOpener(ignoringRevisions{kv})
		}
		return casOpener(kv)
	}
	s, err := store.Open(t.Context(), url, storeConfigFor(t, kind))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return bucketOpener(s, casResult(s))
}

// ignoringRevisions is a cas.Store that writes whatever revision it is given: last writer
// wins, as a key-value store without compare-and-set would.
type ignoringRevisions struct{ cas.Store }

func (s ignoringRevisions) Create(ctx context.Context, key string, value []byte) (string, error) {
	rev, err := s.Store.Create(ctx, key, value)
	if errors.Is(err, cas.ErrConflict) {
		return s.Update(ctx, key, value, "")
	}
	return rev, err
}

func (s ignoringRevisions) Update(ctx context.Context, key string, value []byte, _ string) (string, error) {
	for {
		_, cur, err := s.Store.Get(ctx, key)
		if errors.Is(err, cas.ErrNoRecord) {
			return s.Store.Create(ctx, key, value)
		}
		if err != nil {
			return "", err
		}
		rev, err := s.Store.Update(ctx, key, value, cur)
		if !errors.Is(err, cas.ErrConflict) {
			return rev, err
		}
	}
}

// runProcesses runs the history on the store of kind at url with one process per client,
// and returns the merged history.
func runProcesses(t *testing.T, kind, url string, o historyOptions, env ...string) []porcupine.Operation {
	t.Helper()
	start := time.Now()
	var mu sync.Mutex
	var ops []porcupine.Operation
	var wg sync.WaitGroup
	for c := range o.clients {
		wg.Go(func() {
			cmd := exec.Command(os.Args[0], "-test.run=^TestHistoryClientProcess$", "-test.count=1")
			cmd.Env = append(os.Environ(), envHistoryClient+"="+strconv.Itoa(c), envHistoryStore+"="+kind+" "+url,
				envHistoryStart+"="+strconv.FormatInt(start.UnixNano(), 10), envHistoryRounds+"="+strconv.Itoa(o.rounds))
			cmd.Env = append(cmd.Env, env...)
			out, err := cmd.Output()
			if err != nil {
				t.Errorf("client process %d: %v\n%s", c, err, out)
				return
			}
			mine := parseOps(t, out)
			mu.Lock()
			ops = append(ops, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	return ops
}

func parseOps(t *testing.T, out []byte) []porcupine.Operation {
	var ops []porcupine.Operation
	for line := range bytes.Lines(out) {
		b, ok := bytes.CutPrefix(line, []byte("op "))
		if !ok {
			continue
		}
		var l opLine
		if err := json.Unmarshal(b, &l); err != nil {
			t.Errorf("client output %q: %v", line, err)
			continue
		}
		ops = append(ops, porcupine.Operation{ClientId: l.Client, Call: l.Call, Return: l.Return,
			Input:  hInput{kind: l.Kind, client: l.Client, fence: l.Fence, value: l.Value},
			Output: hOutput{ok: l.OK, fence: l.OutFence, seq: l.Seq, value: l.OutValue, expired: l.Expired, unknown: l.Unknown}})
	}
	return ops
}
