package azure

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"

	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
)

func sharedKey(t *testing.T, srv testenv.AzureServer) *sas.SharedKeyCredential {
	t.Helper()
	cred, err := container.NewSharedKeyCredential(srv.Account, srv.Key)
	if err != nil {
		t.Fatal(err)
	}
	return cred
}

// accountSAS returns an account SAS for every blob operation, valid for an hour.
func accountSAS(t *testing.T, srv testenv.AzureServer) string {
	t.Helper()
	q, err := sas.AccountSignatureValues{
		Protocol:      sas.ProtocolHTTPSandHTTP,
		StartTime:     time.Now().Add(-time.Minute).UTC(),
		ExpiryTime:    time.Now().Add(time.Hour).UTC(),
		Permissions:   (&sas.AccountPermissions{Read: true, Write: true, Delete: true, List: true, Add: true, Create: true}).String(),
		ResourceTypes: (&sas.AccountResourceTypes{Service: true, Container: true, Object: true}).String(),
	}.SignWithSharedKey(sharedKey(t, srv))
	if err != nil {
		t.Fatal(err)
	}
	return q.Encode()
}

// containerSAS returns a SAS for container with perms, expiring at expiry.
func containerSAS(t *testing.T, srv testenv.AzureServer, container string, perms sas.ContainerPermissions, expiry time.Time) string {
	t.Helper()
	q, err := sas.BlobSignatureValues{
		Protocol:      sas.ProtocolHTTPSandHTTP,
		StartTime:     time.Now().Add(-time.Minute).UTC(),
		ExpiryTime:    expiry.UTC(),
		Permissions:   perms.String(),
		ContainerName: container,
	}.SignWithSharedKey(sharedKey(t, srv))
	if err != nil {
		t.Fatal(err)
	}
	return q.Encode()
}

// refTo writes value to a file and returns a file:// reference to it.
func refTo(t *testing.T, value string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "cred")
	if err := os.WriteFile(p, []byte(value+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return "file://" + p
}

// wantNoValue fails t when text holds any of the credential values (or the SAS signature).
func wantNoValue(t *testing.T, what, text string, values ...string) {
	t.Helper()
	for _, v := range values {
		forms := []string{v}
		for p := range strings.SplitSeq(v, "&") {
			if sig, ok := strings.CutPrefix(p, "sig="); ok {
				forms = append(forms, sig)
			}
		}
		for _, f := range forms {
			if f != "" && strings.Contains(text, f) {
				t.Errorf("%s: text leaks a credential (%.10s…): %s", what, f, text)
			}
		}
	}
}

// TestSASWithAndWithoutQuestionMark: a container SAS given by reference works with or without
// its leading '?'.
func TestSASWithAndWithoutQuestionMark(t *testing.T) {
	t.Parallel()
	srv := testenv.Azurite(t)
	_, keyed := openAzurite(t, testConfig{})
	tok := containerSAS(t, srv, keyed.container, sas.ContainerPermissions{Read: true, Write: true, Create: true, List: true, Delete: true}, time.Now().Add(time.Hour))
	for i, form := range []string{tok, "?" + tok} {
		s := openURL(t, srv.Account, keyed.container, relaxed(testConfig{Options: Options{Endpoint: srv.Endpoint, SASToken: refTo(t, form)}}), false)
		key := []string{"plain", "question-mark"}[i]
		if _, err := s.Put(t.Context(), key, strings.NewReader("x"), &store.PutOptions{Size: 1}); err != nil {
			t.Fatalf("put with SAS form %d: %v", i, err)
		}
		if _, err := s.Head(t.Context(), key); err != nil {
			t.Errorf("head with SAS form %d: %v", i, err)
		}
		// A batch delete under a SAS.
		if err := s.DeleteMany(t.Context(), []string{key, "never-was"}); err != nil {
			t.Errorf("batch delete with SAS form %d: %v", i, err)
		}
		if _, err := s.Head(t.Context(), key); !errors.Is(err, store.ErrNotExist) {
			t.Errorf("after the batch delete: %v, want ErrNotExist", err)
		}
	}
}

// slowBody yields data, but holds back the byte at hold (and all after it) until release has
// passed.
type slowBody struct {
	data    []byte
	hold    int
	release time.Time
	off     int
}

func (b *slowBody) Read(p []byte) (int, error) {
	if b.off >= b.hold {
		time.Sleep(time.Until(b.release))
	}
	if b.off >= len(b.data) {
		return 0, io.EOF
	}
	end := len(b.data)
	if b.off < b.hold {
		end = b.hold
	}
	n := copy(p, b.data[b.off:end])
	b.off += n
	return n, nil
}

// TestSASExpiresMidTransfer: a SAS token that expires while a staged upload runs ends it with
// a clear ErrForbidden naming the operation, the key and the expiry, and nothing is committed
// at the key: neither when the token lapses between blocks nor just before the commit.
func TestSASExpiresMidTransfer(t *testing.T) {
	t.Parallel()
	srv := testenv.Azurite(t)
	keyedStore, keyed := openAzurite(t, testConfig{})
	perms := sas.ContainerPermissions{Read: true, Write: true, Create: true, List: true, Delete: true}
	cases := []struct {
		name string
		size int64 // the put's Size: -1 for unknown
		hold int   // bytes delivered before the token lapses
	}{
		{"between blocks", 4 << 20, 2 << 20}, // blocks 1 and 2 staged, block 3 refused
		{"before the commit", -1, 3 << 20},   // blocks 1 to 3 staged, the commit refused
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			expiry := time.Now().Add(4 * time.Second).Truncate(time.Second)
			tok := containerSAS(t, srv, keyed.container, perms, expiry)
			cfg := relaxed(testConfig{Options: Options{Endpoint: srv.Endpoint, SASToken: refTo(t, tok), PartSize: MinPartSize, Concurrency: 2}})
			s := openURL(t, srv.Account, keyed.container, cfg, false)
			key := "expiring/" + strings.ReplaceAll(tc.name, " ", "-")
			data := randomData(4<<20, 3)
			if tc.size < 0 {
				data = data[:tc.hold]
			}
			body := &slowBody{data: data, hold: tc.hold, release: expiry.Add(1500 * time.Millisecond)}
			_, err := s.Put(t.Context(), key, body, &store.PutOptions{Size: tc.size, IfNoneMatch: true})
			if !errors.Is(err, store.ErrForbidden) {
				t.Fatalf("put with a SAS token that expired mid-transfer: %v, want ErrForbidden", err)
			}
			var e *store.Error
			if !errors.As(err, &e) || e.Op != "put" || e.Key != key || e.Status != 403 {
				t.Errorf("the error does not name the put of %q with HTTP 403: %#v", key, e)
			}
			if !strings.Contains(err.Error(), "expired at") {
				t.Errorf("the error does not say the SAS token expired: %v", err)
			}
			wantNoValue(t, "expired SAS", err.Error(), tok)
			wantNothingCommitted(t, keyedStore, keyed, key)
			// The blocks staged while the token was valid stay uncommitted, invisible.
			bl, err := keyed.blockBlob(key).GetBlockList(t.Context(), blockblob.BlockListTypeUncommitted, nil)
			if want := tc.hold / MinPartSize; err != nil || len(bl.UncommittedBlocks) != want {
				t.Errorf("uncommitted blocks at %q: %d (%v), want the %d staged before the token lapsed", key, len(bl.UncommittedBlocks), err, want)
			}
		})
	}
}

// wantNothingCommitted fails t unless key is absent and holds no committed block.
func wantNothingCommitted(t *testing.T, s *store.Store, c *Container, key string) {
	t.Helper()
	if _, err := s.Head(t.Context(), key); !errors.Is(err, store.ErrNotExist) {
		t.Errorf("head %q after the failed put: %v, want ErrNotExist", key, err)
	}
	if objs, err := s.ListAll(t.Context(), key); err != nil || len(objs) != 0 {
		t.Errorf("list %q after the failed put: %v %v, want nothing", key, objs, err)
	}
	bl, err := c.blockBlob(key).GetBlockList(t.Context(), blockblob.BlockListTypeAll, nil)
	if err == nil && len(bl.CommittedBlocks) != 0 {
		t.Errorf("%q has %d committed blocks after the failed put", key, len(bl.CommittedBlocks))
	}
}

// TestReadOnlySAS: a SAS without write permission makes every put ErrForbidden naming the
// operation, small or staged, and writes nothing; reads work.
func TestReadOnlySAS(t *testing.T) {
	t.Parallel()
	srv := testenv.Azurite(t)
	keyedStore, keyed := openAzurite(t, testConfig{})
	if _, err := keyedStore.Put(t.Context(), "present", strings.NewReader("p"), &store.PutOptions{Size: 1}); err != nil {
		t.Fatal(err)
	}
	tok := containerSAS(t, srv, keyed.container, sas.ContainerPermissions{Read: true, List: true}, time.Now().Add(time.Hour))
	s := openURL(t, srv.Account, keyed.container, relaxed(testConfig{Options: Options{Endpoint: srv.Endpoint, SASToken: refTo(t, tok), PartSize: MinPartSize}}), false)
	if _, err := s.Head(t.Context(), "present"); err != nil {
		t.Fatalf("head with a read-only SAS: %v", err)
	}
	for _, size := range []int64{1, 3 << 20, -1} {
		n := max(size, 3<<20)
		_, err := s.Put(t.Context(), "denied", bytes.NewReader(randomData(int(n), 4)), &store.PutOptions{Size: size})
		if !errors.Is(err, store.ErrForbidden) || !strings.HasPrefix(err.Error(), `put "denied"`) {
			t.Errorf("put of size %d with a read-only SAS: %v, want ErrForbidden naming the put", size, err)
		} else {
			wantNoValue(t, "read-only SAS", err.Error(), tok)
		}
		wantNothingCommitted(t, keyedStore, keyed, "denied")
	}
	err := s.Delete(t.Context(), "present", nil)
	if !errors.Is(err, store.ErrForbidden) {
		t.Errorf("delete with a read-only SAS: %v, want ErrForbidden", err)
	}
}
