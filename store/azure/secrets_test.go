package azure

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
)

// everyOp runs every operation on s and returns the errors, by name.
func everyOp(t *testing.T, s *store.Store) map[string]error {
	ctx := t.Context()
	errs := map[string]error{}
	_, errs["get"] = s.Get(ctx, "k", nil)
	_, errs["head"] = s.Head(ctx, "k")
	_, errs["put"] = s.Put(ctx, "k", strings.NewReader("x"), &store.PutOptions{Size: 1})
	_, errs["conditional put"] = s.Put(ctx, "k", strings.NewReader("x"), &store.PutOptions{Size: 1, IfNoneMatch: true})
	_, errs["staged put"] = s.Put(ctx, "big", bytes.NewReader(randomData(2<<20+1, 2)), &store.PutOptions{Size: -1, PartSize: MinPartSize})
	errs["delete"] = s.Delete(ctx, "k", nil)
	_, errs["list"] = s.List(ctx, &store.ListOptions{})
	_, errs["copy"] = s.Copy(ctx, "k", "k2", nil)
	errs["delete many"] = s.DeleteMany(ctx, []string{"k", "k2"})
	return errs
}

// TestMissingContainer: every operation on a container that does not exist is
// WHARF_BUCKET_MISSING naming the container and its account, never a missing key or an empty
// listing.
func TestMissingContainer(t *testing.T) {
	t.Parallel()
	srv := testenv.Azurite(t)
	name := uniqueContainer() + "-absent"
	s := openURL(t, srv.Account, name, relaxed(azuriteConfig(t, srv)), false)
	for op, err := range everyOp(t, s) {
		if !errors.Is(err, store.ErrBucketMissing) || errcode.NameOf(err) != "WHARF_BUCKET_MISSING" {
			t.Errorf("%s on a missing container: %v, want WHARF_BUCKET_MISSING", op, err)
			continue
		}
		if errors.Is(err, store.ErrNotExist) {
			t.Errorf("%s on a missing container also unwraps to ErrNotExist: %v", op, err)
		}
		if !strings.Contains(err.Error(), "container "+name) || !strings.Contains(err.Error(), srv.Account) {
			t.Errorf("%s on a missing container: %q does not name container %s in account %s", op, err, name, srv.Account)
		}
	}
}

// TestNoCredentialInErrors plants known credentials, makes every operation fail with them
// (a wrong account key, a SAS token with a forged signature, a SAS token against a port
// nothing listens on), and scans every error's text for the key, the token and its signature.
func TestNoCredentialInErrors(t *testing.T) {
	t.Parallel()
	srv := testenv.Azurite(t)
	_, keyed := openAzurite(t, testConfig{})
	wrongKey := base64.StdEncoding.EncodeToString([]byte("a wrong account key planted by the secrets test!"))
	good := containerSAS(t, srv, keyed.container, sas.ContainerPermissions{Read: true, Write: true, List: true, Delete: true, Create: true}, time.Now().Add(time.Hour))
	forged := forgeSignature(good)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	p := fastPolicy()
	p.ResponseTimeouts = []time.Duration{2 * time.Second}
	cases := []struct {
		name   string
		cfg    testConfig
		secret string
		kind   *errcode.Code
	}{
		{"wrong key", testConfig{Options: Options{Endpoint: srv.Endpoint, AccountKey: refTo(t, wrongKey)}}, wrongKey, store.ErrForbidden},
		{"forged SAS", testConfig{Options: Options{Endpoint: srv.Endpoint, SASToken: refTo(t, forged)}}, forged, store.ErrForbidden},
		{"SAS, nothing listening", testConfig{Options: Options{Endpoint: closed, SASToken: refTo(t, "?"+good)}}, good, store.ErrUnavailable},
		{"key, nothing listening", testConfig{Options: Options{Endpoint: closed, AccountKey: refTo(t, wrongKey)}}, wrongKey, store.ErrUnavailable},
	}
	for _, tc := range cases {
		tc.cfg.Retry = p
		s := openURL(t, srv.Account, keyed.container, tc.cfg, false)
		for op, err := range everyOp(t, s) {
			// A refused connection sent nothing, so even a conditional put is unavailable, not
			// of unknown outcome.
			kind := tc.kind
			if !errors.Is(err, kind) {
				t.Errorf("%s, %s: %v, want %s", tc.name, op, err, kind.Code())
			}
			if err != nil {
				wantNoValue(t, tc.name+", "+op, err.Error(), tc.secret)
				if strings.Contains(err.Error(), "sig=") && !strings.Contains(err.Error(), "sig=[REDACTED]") {
					t.Errorf("%s, %s: a signature parameter in %q", tc.name, op, err)
				}
			}
		}
		wantNoValue(t, tc.name+": describe", s.Describe().Endpoint+s.Describe().Location, tc.secret)
	}
	if objs, err := store.New(keyed, nil).ListAll(context.Background(), ""); err != nil || len(objs) != 0 {
		t.Errorf("the refused operations wrote %v (%v)", objs, err)
	}
}

// forgeSignature replaces the sig of a SAS token with another valid-looking one.
func forgeSignature(tok string) string {
	parts := strings.Split(tok, "&")
	for i, p := range parts {
		if strings.HasPrefix(p, "sig=") {
			parts[i] = "sig=" + base64.StdEncoding.EncodeToString([]byte("a forged signature planted by the test"))
		}
	}
	return strings.Join(parts, "&")
}
