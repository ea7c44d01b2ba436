package transfer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
	_ "github.com/wharfdata/wharf/store/azure" // the az:// backend
	_ "github.com/wharfdata/wharf/store/gcs"   // the gs:// backend
	_ "github.com/wharfdata/wharf/store/s3"    // the s3:// backend
)

// syncServer is a real server a sync runs against: the URL of a fresh bucket, and the
// store configuration that reaches it.
type syncServer struct {
	name, url string
	cfg       *store.Config
}

func syncServers(t *testing.T) []syncServer {
	bucket := fmt.Sprintf("wharf-sync-%d-%d", os.Getpid(), time.Now().UnixNano()%1e6)
	var out []syncServer
	for _, s := range testenv.S3Servers(t) {
		out = append(out, syncServer{s.Name, "s3://" + bucket, s.StoreConfig(t)})
	}
	gcs := testenv.FakeGCS(t)
	out = append(out, syncServer{"fake-gcs-server", "gs://" + bucket, &store.Config{Getenv: os.Getenv,
		Set: []store.Setting{{Name: "endpoint", Value: gcs.Endpoint}, {Name: "anonymous", Value: "true"}}}})
	az := testenv.Azurite(t)
	out = append(out, syncServer{"azurite", "az://" + az.Account + "/" + bucket, &store.Config{Getenv: os.Getenv,
		Set: []store.Setting{{Name: "endpoint", Value: az.Endpoint}, {Name: "account_key", Value: az.KeyRef(t)}}}})
	return out
}

// TestSyncConditionalOnServers: on every real server, a sync's writes hold only against the
// destination it listed. A replace and a create another writer got to first, and a removal of
// an object replaced meanwhile, are each refused, named, and left as that writer made them
// (MinIO and fake-gcs-server ignore a delete's condition: the read before it is the check);
// a sync run again afterwards copies what differs and finds the rest unchanged.
func TestSyncConditionalOnServers(t *testing.T) {
	for _, srv := range syncServers(t) {
		t.Run(srv.name, func(t *testing.T) {
			ctx := context.Background()
			st, err := store.Open(ctx, srv.url, srv.cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if err := st.MakeBucket(ctx); err != nil {
				t.Fatal(err)
			}
			stores := Stores{Config: srv.cfg}
			put(t, st, "dst/b", "old")
			put(t, st, "dst/z", "z0")
			for _, k := range []string{"a", "b", "c"} {
				put(t, st, "src/"+k, k+"1")
			}
			// Azurite and fake-gcs-server keep times to the second, which sync reads as the
			// end of that second: a copy made within it would be found older than its source,
			// and made again.
			time.Sleep(1100 * time.Millisecond)
			plan := func() *SyncPlan {
				sp, err := PlanSync(ctx, stores, srv.url+"/src/", srv.url+"/dst/", SyncOptions{Delete: true, MaxDelete: -1})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(sp.Close)
				return sp
			}
			var named []string
			report := SyncReport{Conflict: func(n string, _ error) { named = append(named, n) }}

			sp := plan()
			if got := dsts(sp.Tasks); !slices.Equal(got, []string{"dst/a", "dst/b", "dst/c"}) || len(sp.Removals) != 1 {
				t.Fatalf("plan: %q, removals %v", got, sp.Removals)
			}
			put(t, st, "dst/b", "writer") // the replace was planned against "old"
			put(t, st, "dst/c", "writer") // the create was planned against nothing
			sum, err := sp.Run(ctx, nil, report)
			slices.Sort(named)
			if !errors.Is(err, ErrSyncConflict) || sum.Files != 1 || sum.Conflicts != 2 || sum.Removed != 0 ||
				!slices.Equal(named, []string{srv.url + "/dst/b", srv.url + "/dst/c"}) {
				t.Fatalf("Run = %+v, %v, named %q; want a copied, b and c refused, nothing removed", sum, err, named)
			}
			for k, want := range map[string]string{"dst/a": "a1", "dst/b": "writer", "dst/c": "writer", "dst/z": "z0"} {
				if got := get(t, st, k); got != want {
					t.Errorf("%s holds %q, want %q", k, got, want)
				}
			}

			sp = plan()
			if got := dsts(sp.Tasks); !slices.Equal(got, []string{"dst/b", "dst/c"}) || sp.Unchanged != 1 {
				t.Fatalf("second plan: %q, unchanged %d; want b and c (the writer's bytes differ), a unchanged", got, sp.Unchanged)
			}
			put(t, st, "dst/z", "z1") // replaced after the listing: not the version to remove
			named = nil
			sum, err = sp.Run(ctx, nil, report)
			if !errors.Is(err, ErrSyncConflict) || sum.Files != 2 || sum.Removed != 0 || !slices.Equal(named, []string{srv.url + "/dst/z"}) {
				t.Fatalf("Run = %+v, %v, named %q; want b and c copied, z kept", sum, err, named)
			}
			if got := get(t, st, "dst/z"); got != "z1" {
				t.Errorf("z holds %q, want the writer's z1", got)
			}

			sp = plan()
			if sum, err := sp.Run(ctx, nil, report); err != nil || sum.Removed != 1 || sum.Files != 0 || sum.Unchanged != 3 {
				t.Fatalf("third sync: %+v, %v; want z removed, 3 unchanged", sum, err)
			}
			if _, err := st.Head(ctx, "dst/z"); !errors.Is(err, store.ErrNotExist) {
				t.Errorf("dst/z after the third sync: %v", err)
			}
		})
	}
}

// syncRace plans a sync of url/src/ to url/dst/ through stores, lets writer (another client
// of the same bucket) replace a key the sync will replace and create one it will create, then
// runs the sync, and returns the keys whose writer's version the sync overwrote.
func syncRace(t *testing.T, writer *store.Store, stores Stores, url string) (overwritten []string) {
	t.Helper()
	ctx := context.Background()
	put(t, writer, "dst/b", "old")
	put(t, writer, "src/b", "b1")
	put(t, writer, "src/c", "c1")
	sp, err := PlanSync(ctx, stores, url+"/src/", url+"/dst/", SyncOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	put(t, writer, "dst/b", "writer")
	put(t, writer, "dst/c", "writer")
	_, _ = sp.Run(ctx, nil, SyncReport{})
	for _, k := range []string{"dst/b", "dst/c"} {
		if get(t, writer, k) != "writer" {
			overwritten = append(overwritten, k)
		}
	}
	return overwritten
}

// TestSyncRaceCheckCatchesASyncWithoutConditions: the race check is not vacuous. On MinIO a
// sync overwrites no writer's version; the same sync behind a proxy that strips every
// condition (as a store that ignores them would) overwrites both, and the check sees it.
func TestSyncRaceCheckCatchesASyncWithoutConditions(t *testing.T) {
	ctx := context.Background()
	minio := testenv.MinIO(t)
	proxy, stripped := testenv.FaultProxy(t, minio)
	proxy.StripConditions(true)
	for _, tc := range []struct {
		name string
		via  testenv.S3Server
		want int
	}{{"minio", minio, 0}, {"conditions stripped", stripped, 2}} {
		url := fmt.Sprintf("s3://wharf-sync-race-%d-%d", os.Getpid(), time.Now().UnixNano()%1e6)
		writer, err := store.Open(ctx, url, minio.StoreConfig(t))
		if err != nil {
			t.Fatal(err)
		}
		defer writer.Close()
		if err := writer.MakeBucket(ctx); err != nil {
			t.Fatal(err)
		}
		if got := syncRace(t, writer, Stores{Config: tc.via.StoreConfig(t)}, url); len(got) != tc.want {
			t.Errorf("%s: the sync overwrote %q, want %d of the writer's keys", tc.name, got, tc.want)
		}
	}
}
