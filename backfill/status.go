package backfill

import (
	"net/http"
	"sort"
	"time"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/internal/listen"
	"github.com/wharfdata/wharf/internal/statuspage"
)

// The states of a worker, as /status names them.
const (
	StateStarting  = "starting"
	StatePlanning  = "planning"  // this worker leads and lists the prefix
	StateRunning   = "running"   // reading splits
	StateFinishing = "finishing" // every split is final; the leader finishes the sink
	StateSucceeded = "succeeded"
	StateFailed    = "failed"
)

// Status is one worker's view of the job, as /status serves it (JSON).
type Status struct {
	Component   string      `json:"component"` // "backfill"
	Job         string      `json:"job"`
	Node        string      `json:"node"`
	State       string      `json:"state"`
	Leader      bool        `json:"leader"`
	Coordinator string      `json:"coordinator"`
	Source      string      `json:"source"`
	Sink        string      `json:"sink"`
	Started     time.Time   `json:"started"`
	Plan        string      `json:"plan,omitempty"`
	Splits      SplitCounts `json:"splits"`
	Objects     int64       `json:"objects"`
	Bytes       int64       `json:"bytes"`
	Records     int64       `json:"records"` // handed to the sink by this worker
	InFlight    []InFlight  `json:"in_flight"`
	LastError   *ErrorInfo  `json:"last_error,omitempty"`
	// RecentErrors are this worker's last errors (up to recentErrors), oldest first;
	// LastError is the last of them.
	RecentErrors []ErrorInfo `json:"recent_errors"`
}

// recentErrors is how many errors /status and the status page keep.
const recentErrors = 10

// SplitCounts counts the plan's splits as this worker knows them.
type SplitCounts struct {
	Planned     int `json:"planned"`
	Done        int `json:"done"`
	Quarantined int `json:"quarantined"`
	DoneHere    int `json:"done_here"` // by this worker
}

// InFlight is a split this worker reads now.
type InFlight struct {
	Split   string    `json:"split"`
	Member  int       `json:"member"`
	Key     string    `json:"key"`
	Records int64     `json:"records"`
	Since   time.Time `json:"since"`
}

// ErrorInfo is an error as /status shows it.
type ErrorInfo struct {
	Time    time.Time `json:"time"`
	Message string    `json:"message"`
	Code    string    `json:"code,omitempty"`
}

// status is the mutable state behind Status, guarded by Job.mu.
type status struct {
	state    string
	leader   bool
	started  time.Time
	inflight map[string]*flight
	final    map[string]string
	doneHere int
	records  int64
	lastErr  *ErrorInfo
	recent   []ErrorInfo
}

type flight struct {
	split   *Split
	member  int
	records int64
	since   time.Time
}

// Status returns this worker's view now.
func (j *Job) Status() Status {
	j.mu.Lock()
	defer j.mu.Unlock()
	st := Status{Component: "backfill", Job: j.cfg.Job, Node: j.cfg.Node, State: j.stat.state, Leader: j.stat.leader,
		Coordinator: j.coord.Describe(), Source: j.cfg.Source, Sink: j.sink.URL(), Started: j.stat.started.UTC(),
		Records: j.stat.records, LastError: j.stat.lastErr, InFlight: []InFlight{}, RecentErrors: append([]ErrorInfo{}, j.stat.recent...)}
	if j.plan != nil {
		st.Plan, st.Splits.Planned, st.Objects, st.Bytes = j.plan.ID, j.plan.Splits, j.plan.Objects, j.plan.Bytes
	}
	for _, s := range j.stat.final {
		if s == StatusDone {
			st.Splits.Done++
		} else {
			st.Splits.Quarantined++
		}
	}
	st.Splits.DoneHere = j.stat.doneHere
	for id, f := range j.stat.inflight {
		st.InFlight = append(st.InFlight, InFlight{Split: id, Member: f.member, Key: f.split.Members[min(f.member, len(f.split.Members)-1)].Key,
			Records: f.records, Since: f.since.UTC()})
	}
	sort.Slice(st.InFlight, func(a, b int) bool { return st.InFlight[a].Split < st.InFlight[b].Split })
	return st
}

func (j *Job) setState(s string) {
	j.mu.Lock()
	j.stat.state = s
	j.mu.Unlock()
}

func (j *Job) setLeader(b bool) {
	j.mu.Lock()
	j.stat.leader = b
	j.mu.Unlock()
}

func (j *Job) setEnd(err error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.stat.state = StateSucceeded
	if err != nil {
		j.stat.state = StateFailed
		j.noteLocked(err)
	}
}

func (j *Job) noteError(err error) {
	j.mu.Lock()
	j.noteLocked(err)
	j.mu.Unlock()
}

// noteLocked records err as the last error (j.mu held).
func (j *Job) noteLocked(err error) {
	info := ErrorInfo{Time: j.now().UTC(), Message: err.Error(), Code: errcode.NameOf(err)}
	j.stat.lastErr = &info
	if len(j.stat.recent) == recentErrors {
		j.stat.recent = append(j.stat.recent[:0], j.stat.recent[1:]...)
	}
	j.stat.recent = append(j.stat.recent, info)
}

func (j *Job) setFinal(id, s string) {
	j.mu.Lock()
	if _, ok := j.stat.final[id]; !ok && s == StatusDone && j.stat.inflight[id] != nil {
		j.stat.doneHere++
	}
	j.stat.final[id] = s
	j.mu.Unlock()
}

func (j *Job) known(id string) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	_, final := j.stat.final[id]
	return final || j.stat.inflight[id] != nil
}

func (j *Job) allFinal() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.stat.final) >= len(j.ids) && len(j.stat.inflight) == 0
}

func (j *Job) startFlight(sp *Split, from Watermark) {
	j.mu.Lock()
	j.stat.inflight[sp.ID] = &flight{split: sp, member: from.Member, since: j.now()}
	j.mu.Unlock()
}

func (j *Job) endFlight(id string) {
	j.mu.Lock()
	delete(j.stat.inflight, id)
	j.mu.Unlock()
}

func (j *Job) progress(id string, b *Batch) {
	j.mu.Lock()
	if f := j.stat.inflight[id]; f != nil {
		f.member, f.records = b.Member, f.records+int64(b.Len())
	}
	j.stat.records += int64(b.Len())
	j.mu.Unlock()
	j.m.delivered.Add(j.now(), float64(b.Len()))
}

// Handler serves the status page at / (HTML: this worker's figures and the whole job as its
// coordinator records it), /metrics (Prometheus), /status (JSON) and /healthz: 200 and the
// worker's state, 503 once it failed.
func (j *Job) Handler() http.Handler {
	mux := listen.Mux(j.m.reg, func() any { return j.Status() }, func() (int, string) {
		st := j.Status().State
		if st == StateFailed {
			return http.StatusServiceUnavailable, st
		}
		return http.StatusOK, st
	})
	mux.Handle("GET /{$}", statuspage.Handler(j.page))
	return mux
}
