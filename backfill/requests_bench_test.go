package backfill

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wharfdata/wharf/lease"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
	"github.com/wharfdata/wharf/store/probe"
)

// BenchmarkCoordinatorRequestsPerSplit counts what the bucket coordinator costs: one worker
// runs a job in splits of 3 objects over a mem store whose requests are counted by what
// they do to a split's lease record (read it; acquire, check, commit, renew, release it done
// or handed back), besides the rest of the job's records (the leader's and the node's leases,
// the plan, the descriptors). Requests are reported per split (a count, not a speed):
//
//	go test ./backfill -run '^$' -bench CoordinatorRequests -benchtime 1x
func BenchmarkCoordinatorRequestsPerSplit(b *testing.B) {
	for _, sc := range []requestScenario{
		{name: "store", sink: "store", objects: 60, read: 5 * time.Millisecond},
		{name: "stdout", sink: "stdout", objects: 60, read: 5 * time.Millisecond},
		// splits that take 2.1 s (their objects read one at a time, each committed when read),
		// with a 3 s lease (renewed every second)
		{name: "stdout-long", sink: "stdout", objects: 12, read: 700 * time.Millisecond, ttl: 3 * time.Second, commit: 100 * time.Millisecond},
	} {
		b.Run(sc.name, func(b *testing.B) {
			for b.Loop() {
				c, splits := countJob(b, sc)
				all := 0
				for _, k := range []string{"split-read", "split-acquire", "split-check", "split-commit", "split-renew", "split-done"} {
					b.ReportMetric(float64(c.n[k])/float64(splits), k+"/split")
					all += c.n[k]
				}
				b.ReportMetric(float64(all)/float64(splits), "split-all/split")
				b.ReportMetric(float64(c.n["job"]), "job-records/job")
			}
		})
	}
}

// requestScenario is a job of objects, each read in read, into sink, with a lease TTL and a
// commit interval (0: the test config's).
type requestScenario struct {
	name, sink  string
	objects     int
	read        time.Duration
	ttl, commit time.Duration
}

// countJob runs the job once and returns the counts and the number of splits.
func countJob(b *testing.B, sc requestScenario) (*requestCounter, int) {
	src := memStore()
	fill(b, src, "logs/", sc.objects, 400, "plain", "gz")
	c := &requestCounter{Bucket: src.Bucket(), read: sc.read, n: map[string]int{}, last: map[string]lease.Record{}}
	counted := store.New(c, nil)
	cfg := testConfig("mem://src/logs/", "-")
	cfg.SplitMaxObjects, cfg.CommitInterval = 3, 5*time.Millisecond
	if sc.ttl > 0 {
		cfg.LeaseTTL, cfg.CommitInterval, cfg.ReadConcurrency = sc.ttl, sc.commit, 1
	}
	jobs := counted.Sub(BucketPrefix("count"))
	coord := NewBucket(jobs, &lease.Options{Probe: &probe.Result{Store: jobs.Describe(), Coordination: probe.CAS}})
	var s Sink = NewStdout(io.Discard, cfg.CommitInterval)
	if sc.sink == "store" {
		s = NewStoreSink(src.Sub("out/"), "mem://src/out/", cfg.Job, "test")
	}
	j, err := runJob(context.Background(), b, cfg, coord, counted, s, false)
	if err != nil {
		b.Fatal(err)
	}
	return c, j.plan.Splits
}

// requestCounter counts the requests of the job's records by what they do.
type requestCounter struct {
	driver.Bucket
	read time.Duration // what reading a source object takes
	mu   sync.Mutex
	n    map[string]int
	last map[string]lease.Record // each split lease record as last written
}

func (c *requestCounter) Unwrap() driver.Bucket { return c.Bucket }

func (c *requestCounter) count(k string) {
	c.mu.Lock()
	c.n[k]++
	c.mu.Unlock()
}

func (c *requestCounter) Get(ctx context.Context, key string, o *driver.GetOptions) (*driver.Object, error) {
	switch {
	case strings.Contains(key, lease.LeasePrefix+"split-"):
		c.count("split-read")
	case IsState(key):
		c.count("job")
	default:
		time.Sleep(c.read) // a source object
	}
	return c.Bucket.Get(ctx, key, o)
}

func (c *requestCounter) Head(ctx context.Context, key string) (driver.ObjectInfo, error) {
	if IsState(key) {
		c.count("job")
	}
	return c.Bucket.Head(ctx, key)
}

func (c *requestCounter) Put(ctx context.Context, key string, body io.Reader, o *driver.PutOptions) (driver.ObjectInfo, error) {
	if !strings.Contains(key, lease.LeasePrefix+"split-") {
		if IsState(key) {
			c.count("job")
		}
		return c.Bucket.Put(ctx, key, body, o)
	}
	raw, err := io.ReadAll(body)
	if err != nil {
		return driver.ObjectInfo{}, err
	}
	var rec lease.Record
	_ = json.Unmarshal(raw, &rec)
	info, err := c.Bucket.Put(ctx, key, bytes.NewReader(raw), o)
	c.mu.Lock()
	defer c.mu.Unlock()
	prev, seen := c.last[key]
	switch {
	case seen && rec.Fence == prev.Fence && err != nil:
		c.n["split-check"]++ // the write at a revision already replaced, refused
	case !seen || rec.Fence > prev.Fence:
		c.n["split-acquire"]++
	case rec.Released:
		c.n["split-done"]++ // done, or handed back
	case !bytes.Equal(rec.State, prev.State):
		c.n["split-commit"]++
	default:
		c.n["split-renew"]++
	}
	if err == nil {
		c.last[key] = rec
	}
	return info, err
}
