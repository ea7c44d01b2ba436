package cas_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wharfdata/wharf/cas"
	"github.com/wharfdata/wharf/cas/castest"
	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
	_ "github.com/wharfdata/wharf/store/azure" // the az:// backend
	"github.com/wharfdata/wharf/store/driver"
	"github.com/wharfdata/wharf/store/file"
	_ "github.com/wharfdata/wharf/store/gcs" // the gs:// backend
	"github.com/wharfdata/wharf/store/mem"
	_ "github.com/wharfdata/wharf/store/s3" // the s3:// backend
)

var bucketSeq atomic.Int64

func uniqueBucket() string {
	return fmt.Sprintf("wharf-cas-%d-%d", os.Getpid(), bucketSeq.Add(1))
}

// runOn runs the suite in one fresh bucket at url, each case below a prefix of its own, and
// empties the bucket when t ends.
func runOn(t *testing.T, url string, cfg *store.Config) {
	t.Helper()
	s, err := store.Open(context.Background(), url, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.MakeBucket(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { empty(t, s) })
	var n atomic.Int64
	castest.Run(t, func(t *testing.T) cas.Store {
		return cas.NewBucket(s.Sub(fmt.Sprintf("case-%d/", n.Add(1))))
	})
}

func empty(t *testing.T, s *store.Store) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	objs, err := s.ListAll(ctx, "")
	if err == nil {
		keys := make([]string, len(objs))
		for i, o := range objs {
			keys[i] = o.Key
		}
		err = s.DeleteMany(ctx, keys)
	}
	if err != nil {
		t.Logf("cleanup: %v", err)
	}
	s.Close()
}

func TestBucketOnMinIOKeepsTheContract(t *testing.T) {
	srv := testenv.MinIO(t)
	b := uniqueBucket()
	srv.RemoveBucketOnCleanup(t, b)
	runOn(t, "s3://"+b, srv.StoreConfig(t))
}

func TestBucketOnSeaweedFSKeepsTheContract(t *testing.T) {
	srv := testenv.SeaweedFS(t)
	b := uniqueBucket()
	srv.RemoveBucketOnCleanup(t, b)
	runOn(t, "s3://"+b, srv.StoreConfig(t))
}

func TestBucketOnFakeGCSKeepsTheContract(t *testing.T) {
	srv := testenv.FakeGCS(t)
	runOn(t, "gs://"+uniqueBucket(), &store.Config{Getenv: os.Getenv,
		Set: []store.Setting{{Name: "endpoint", Value: srv.Endpoint}, {Name: "anonymous", Value: "true"}}})
}

func TestBucketOnAzuriteKeepsTheContract(t *testing.T) {
	srv := testenv.Azurite(t)
	runOn(t, "az://"+srv.Account+"/"+uniqueBucket(), &store.Config{Getenv: os.Getenv,
		Set: []store.Setting{{Name: "endpoint", Value: srv.Endpoint}, {Name: "account_key", Value: srv.KeyRef(t)}}})
}

func TestBucketOnTheFileStoreKeepsTheContract(t *testing.T) {
	fb, err := file.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := store.New(fb, nil)
	if err := s.MakeBucket(context.Background()); err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	castest.Run(t, func(t *testing.T) cas.Store { return cas.NewBucket(s.Sub(fmt.Sprintf("case-%d/", n.Add(1)))) })
}

func TestMemoryKeepsTheContract(t *testing.T) {
	castest.Run(t, func(t *testing.T) cas.Store { return cas.NewMemory() })
}

// lossy applies a put and then loses its answer (a transport fault), for the next n puts.
type lossy struct {
	driver.Bucket
	mu   sync.Mutex
	n    int
	puts int
}

func (b *lossy) Unwrap() driver.Bucket { return b.Bucket }

func (b *lossy) Put(ctx context.Context, key string, body io.Reader, o *driver.PutOptions) (driver.ObjectInfo, error) {
	info, err := b.Bucket.Put(ctx, key, body, o)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.puts++
	if err == nil && b.n > 0 {
		b.n--
		return driver.ObjectInfo{}, &driver.Error{Op: "put", Key: key, Kind: driver.ErrUnavailable, Fault: driver.FaultTransport,
			Err: errors.New("connection reset after the request was sent")}
	}
	return info, err
}

// A write whose answer was lost is settled by reading its put-id back: it landed, the
// caller is told so with the revision it made, and nothing is sent again.
func TestBucketSettlesALostAnswerByItsPutID(t *testing.T) {
	ctx := context.Background()
	b := &lossy{Bucket: mem.New()}
	c := cas.NewBucket(store.New(b, nil))
	b.n = 1
	rev, err := c.Create(ctx, "k", []byte(`{"v":1}`))
	if err != nil || b.puts != 1 {
		t.Fatalf("create with its answer lost: %q %v after %d puts, want success after one", rev, err, b.puts)
	}
	if _, got, _ := c.Get(ctx, "k"); got != rev {
		t.Fatalf("revision %q, the record is at %q", rev, got)
	}
	b.n = 1
	rev2, err := c.Update(ctx, "k", []byte(`{"v":2}`), rev)
	if err != nil || b.puts != 2 {
		t.Fatalf("update with its answer lost: %v after %d puts in all", err, b.puts)
	}
	if _, err := c.Update(ctx, "k", []byte(`{"v":3}`), rev); !errors.Is(err, cas.ErrConflict) {
		t.Fatalf("update at the revision the lost update replaced: %v, want a conflict", err)
	}
	if v, got, _ := c.Get(ctx, "k"); got != rev2 || string(v) != `{"v":2}` {
		t.Errorf("record %s at %q, want the settled update at %q", v, got, rev2)
	}
}

// dropping loses a put before it reaches the store (the answer lost, nothing applied), for
// the next n puts.
type dropping struct {
	driver.Bucket
	n, puts int
}

func (b *dropping) Unwrap() driver.Bucket { return b.Bucket }

func (b *dropping) Put(ctx context.Context, key string, body io.Reader, o *driver.PutOptions) (driver.ObjectInfo, error) {
	b.puts++
	if b.n > 0 {
		b.n--
		return driver.ObjectInfo{}, &driver.Error{Op: "put", Key: key, Kind: driver.ErrUnavailable, Fault: driver.FaultTransport,
			Err: errors.New("timeout awaiting the answer")}
	}
	return b.Bucket.Put(ctx, key, body, o)
}

// A write that did not land, and whose condition still holds, is sent again (a bounded
// number of times); one whose condition another writer broke meanwhile is a conflict.
func TestBucketSendsAgainOnlyWhileTheConditionHolds(t *testing.T) {
	ctx := context.Background()
	b := &dropping{Bucket: mem.New()}
	c := cas.NewBucket(store.New(b, nil))
	b.n = 2
	if _, err := c.Create(ctx, "k", []byte(`{"v":1}`)); err != nil || b.puts != 3 {
		t.Fatalf("create dropped twice: %v after %d puts, want success on the third", err, b.puts)
	}
	b.n, b.puts = 5, 0
	_, rev, _ := c.Get(ctx, "k")
	if _, err := c.Update(ctx, "k", []byte(`{"v":2}`), rev); !errors.Is(err, store.ErrOutcomeUnknown) || b.puts != 3 {
		t.Fatalf("update dropped every time: %v after %d puts, want outcome unknown after 3", err, b.puts)
	}
	other := cas.NewBucket(store.New(b.Bucket, nil))
	if _, err := other.Update(ctx, "k", []byte(`{"v":"other"}`), rev); err != nil {
		t.Fatal(err)
	}
	b.n, b.puts = 1, 0
	if _, err := c.Update(ctx, "k", []byte(`{"v":3}`), rev); !errors.Is(err, cas.ErrConflict) || b.puts != 1 {
		t.Fatalf("update dropped once after another writer's: %v after %d puts, want a conflict and no resend", err, b.puts)
	}
}
