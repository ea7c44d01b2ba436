package gcs

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/wharfdata/wharf/store"
)

// TestMakeBucketRequest checks the bucket insert MakeBucket sends, against a small fake (fake-
// gcs-server ignores a new bucket's location): the config's region is the location, and the
// project is GOOGLE_CLOUD_PROJECT's, else EmulatorProject on an emulator.
func TestMakeBucketRequest(t *testing.T) {
	var mu sync.Mutex
	var project string
	var body map[string]any
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.Method != http.MethodPost || r.URL.Path != "/storage/v1/b" {
			http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusBadRequest)
			return
		}
		project, body = r.URL.Query().Get("project"), nil
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(body)
	}))
	defer ts.Close()
	for _, tc := range []struct{ region, envProject, wantProject, wantLocation string }{
		{"", "", EmulatorProject, ""},
		{"europe-west1", "", EmulatorProject, "europe-west1"},
		{"", "my-project", "my-project", ""},
	} {
		t.Setenv("GOOGLE_CLOUD_PROJECT", tc.envProject)
		b := openBucket(t, "made", testConfig{Options: Options{Endpoint: ts.URL, Anonymous: true, Region: tc.region}})
		if err := b.MakeBucket(context.Background()); err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		mu.Lock()
		loc, _ := body["location"].(string)
		if project != tc.wantProject || loc != tc.wantLocation || body["name"] != "made" {
			t.Errorf("%+v: project %q, body %v", tc, project, body)
		}
		mu.Unlock()
	}
}

// TestMakeBucketNeedsProject: on Cloud Storage with nothing naming a project, MakeBucket says
// so before any request.
func TestMakeBucketNeedsProject(t *testing.T) {
	t.Setenv("GOOGLE_CLOUD_PROJECT", "")
	t.Setenv(EmulatorHostEnv, "")
	s, err := openGS(testConfig{Options: Options{Anonymous: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if d := s.Describe(); d.Endpoint != "" {
		t.Errorf("Cloud Storage described with endpoint %q", d.Endpoint)
	}
	err = s.MakeBucket(context.Background())
	if !errors.Is(err, store.ErrConfig) || !strings.Contains(err.Error(), "GOOGLE_CLOUD_PROJECT") {
		t.Fatalf("make-bucket without a project: %v", err)
	}
}
