package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wharfdata/wharf/internal/testenv"
)

// The fleet's history check: what a job certifies is proven, not claimed. A randomized
// schedule runs one job on a fleet of the built binary — three workers and a fourth given one
// of their node ids, started together while a producer adds objects under the prefix; slow
// and failing GETs; workers SIGKILLed and started again; on NATS, a node of the cluster
// SIGKILLed and started again — and the checker (bfJob.certified) requires of its end: the
// status's plan succeeded, the certified manifest is that plan's, its parts hold every record
// of the plan's objects once and nothing else, the status's and the manifest's counts agree,
// and every worker that exited 0 named that plan. Of the two workers with one node id, one is
// told so (exit 2), and no other worker is. A deliberately broken backfill (the leader plans
// again without reading the plan that is there, and writes the manifest before checking that
// its plan is current: backfill.BreakForTest) fails the check.
//
// WHARF_BACKFILL_HISTORY_SEED replays a schedule (each run logs its seed).

// bfSchedule is one randomized schedule.
type bfSchedule struct {
	seed     uint64
	rng      *rand.Rand
	objects  int           // objects under the prefix at the start
	step     time.Duration // the producer adds one object every step …
	after    time.Duration // … until this long after the plan is made
	dup      int           // the worker whose node id a fourth worker is given
	kills    []time.Duration
	natsAt   time.Duration // when a NATS node is SIGKILLed (0: not at all)
	natsFor  time.Duration
	natsNode int
}

func newSchedule(t *testing.T, kind string) *bfSchedule {
	seed := uint64(time.Now().UnixNano())
	if v, err := strconv.ParseUint(os.Getenv("WHARF_BACKFILL_HISTORY_SEED"), 10, 64); err == nil {
		seed = v
	}
	rng := rand.New(rand.NewPCG(seed, 20))
	s := &bfSchedule{seed: seed, rng: rng, objects: 150 + rng.IntN(100), step: time.Duration(10+rng.IntN(20)) * time.Millisecond,
		after: time.Duration(1500+rng.IntN(1000)) * time.Millisecond, dup: rng.IntN(3)}
	for range 2 + rng.IntN(2) {
		s.kills = append(s.kills, time.Duration(800+rng.IntN(4000))*time.Millisecond)
	}
	slices.Sort(s.kills)
	if kind == "nats" {
		s.natsAt, s.natsFor = time.Duration(1000+rng.IntN(2000))*time.Millisecond, time.Duration(1000+rng.IntN(1000))*time.Millisecond
		s.natsNode = rng.IntN(3)
	}
	t.Logf("schedule (WHARF_BACKFILL_HISTORY_SEED=%d): %d objects, one added every %s until %s after the plan; w%d twice; kills at %v; NATS node down at %s for %s",
		seed, s.objects, s.step, s.after, s.dup, s.kills, s.natsAt, s.natsFor)
	return s
}

// workerEnv is a worker's faults: its GETs slowed by 50 to 150 ms, one in 50 or 20 failing
// (or none), one or two splits in flight, a split's objects read one at a time.
func (s *bfSchedule) workerEnv(broken bool) []string {
	env := []string{
		"WHARF_TEST_BACKFILL_PAUSE=" + []string{"50ms", "100ms", "150ms"}[s.rng.IntN(3)],
		"WHARF_TEST_BACKFILL_FAIL=" + []string{"0", "0.02", "0.05"}[s.rng.IntN(3)],
		"--max-in-flight=" + strconv.Itoa(1+s.rng.IntN(2)), "--read-concurrency=1", "--max-attempts=20",
	}
	if broken {
		env = append(env, "WHARF_TEST_BACKFILL_BROKEN=plan")
	}
	return env
}

// runHistory runs one schedule on the coordinator kind: it returns what the workers' ends
// break of the rules (an unexpected exit, two live workers of one node id neither told so)
// and the checker's verdict on the job's end. A failure of the harness itself fails t.
func runHistory(t *testing.T, kind string, broken bool) (exits []string, check error) {
	var cluster testenv.NATSCluster
	if kind == "nats" {
		cluster = testenv.PrivateNATS(t)
	}
	s := newSchedule(t, kind)
	b := newBfJob(t, kind, cluster)
	for i := range s.objects {
		b.add(t, fmt.Sprintf("in/obj-%05d.ndjson", i), 5+s.rng.IntN(25))
	}
	stop := b.produce(t, s.step, s.objects)
	start := time.Now()
	var mu sync.Mutex
	var all []*bfProc
	launch := func(node string) *bfProc {
		p := b.start(t, node, s.workerEnv(broken)...)
		mu.Lock()
		all = append(all, p)
		mu.Unlock()
		return p
	}
	live := map[string]*bfProc{}
	for i := range 3 {
		live[fmt.Sprintf("w%d", i)] = launch(fmt.Sprintf("w%d", i))
		time.Sleep(time.Duration(s.rng.IntN(100)) * time.Millisecond)
	}
	twin := launch(fmt.Sprintf("w%d", s.dup))
	pair := []*bfProc{live[fmt.Sprintf("w%d", s.dup)], twin}

	var faults sync.WaitGroup
	var planErr error
	faults.Go(func() {
		planErr = b.waitPlanned(time.Minute)
		time.Sleep(s.after)
		stop()
	})
	if s.natsAt > 0 {
		faults.Go(func() {
			time.Sleep(s.natsAt)
			restart := cluster.KillNode(t, s.natsNode)
			time.Sleep(s.natsFor)
			restart()
		})
	}
	for _, at := range s.kills {
		time.Sleep(max(0, at-time.Since(start)))
		var victims []string
		for node, p := range live {
			if node != fmt.Sprintf("w%d", s.dup) && p.running() {
				victims = append(victims, node)
			}
		}
		if len(victims) == 0 {
			break
		}
		node := victims[s.rng.IntN(len(victims))]
		live[node].kill()
		time.Sleep(time.Duration(200+s.rng.IntN(600)) * time.Millisecond)
		live[node] = launch(node)
	}
	faults.Wait()
	if planErr != nil {
		t.Fatal(planErr)
	}
	ok, exits := judge(t, all, pair)
	return exits, b.certified(t, ok)
}

// judge waits for every worker and sorts them: those that exited 0, and what the others'
// ends break of the rules. A worker SIGKILLed by the schedule ends as it may; one started
// again after the job ended finds it complete (exit 5); one of the two workers of one node id
// is told so (exit 2), and no other worker is.
func judge(t *testing.T, all, pair []*bfProc) (ok []*bfProc, problems []string) {
	for _, p := range all {
		p.wait(t, 3*time.Minute)
		switch {
		case p.killed:
		case p.code == 0:
			ok = append(ok, p)
		case p.code == 5 && strings.Contains(p.err.String(), "WHARF_BACKFILL_ALREADY_COMPLETE"):
		case p.nodeInUse() && (p == pair[0] || p == pair[1]):
		default:
			problems = append(problems, fmt.Sprintf("worker %s exited %d:\n%s", p.node, p.code, p.err.String()))
		}
	}
	if !pair[0].nodeInUse() && !pair[1].nodeInUse() {
		problems = append(problems, fmt.Sprintf("two live workers had node id %s and neither was told so (exits %d and %d)", pair[0].node, pair[0].code, pair[1].code))
	}
	if len(ok) == 0 {
		problems = append(problems, "no worker exited 0")
	}
	return ok, problems
}

func TestE2EBackfillHistoryOnTheBucket(t *testing.T) { historyHolds(t, "bucket") }

func TestE2EBackfillHistoryOnNATS(t *testing.T) { historyHolds(t, "nats") }

func historyHolds(t *testing.T, kind string) {
	exits, err := runHistory(t, kind, false)
	for _, e := range exits {
		t.Error(e)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// The checker is not vacuous: a backfill whose leader does not read the plan that is there
// makes several plans of one job and certifies any of them, and the check finds it.
func TestE2EBackfillHistoryCatchesTwoPlans(t *testing.T) {
	exits, err := runHistory(t, "bucket", true)
	if err == nil {
		t.Fatalf("the check passed a backfill that plans a job again and certifies a superseded plan (the workers' ends: %q)", exits)
	}
	t.Logf("the broken backfill fails the check: %v", err)
}
