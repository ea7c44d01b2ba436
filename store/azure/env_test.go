package azure

import (
	"bytes"
	"context"
	"testing"

	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
)

// roundTrip creates the container s points at, puts, lists, reads and deletes one object, and
// deletes the container.
func roundTrip(t *testing.T, s *store.Store) {
	t.Helper()
	ctx := t.Context()
	if err := s.MakeBucket(ctx); err != nil {
		t.Fatalf("make container: %v", err)
	}
	c, ok := s.Bucket().(*Container)
	if !ok {
		t.Fatal("not an azure store")
	}
	t.Cleanup(func() { removeContainer(t, c) })
	data := []byte("through the conventional environment")
	if _, err := s.Put(ctx, "env/k", bytes.NewReader(data), &store.PutOptions{Size: int64(len(data)), IfNoneMatch: true}); err != nil {
		t.Fatalf("put: %v", err)
	}
	objs, err := s.ListAll(ctx, "")
	if err != nil || len(objs) != 1 || objs[0].Key != "env/k" {
		t.Fatalf("list: %v %v", objs, err)
	}
	obj, err := s.Get(ctx, "env/k", nil)
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	got := new(bytes.Buffer)
	_, _ = got.ReadFrom(obj)
	obj.Close()
	if !bytes.Equal(got.Bytes(), data) {
		t.Errorf("read back %q, want %q", got, data)
	}
	if err := s.Delete(ctx, "env/k", nil); err != nil {
		t.Errorf("delete: %v", err)
	}
}

// clearAzureEnv unsets the conventional variables for the test.
func clearAzureEnv(t *testing.T) {
	for _, k := range []string{EnvAccount, EnvKey, EnvSASToken, EnvConnectionString} {
		t.Setenv(k, "")
	}
}

// TestDevConnectionStringOnAzurite: Azurite's well-known development connection string, with
// its BlobEndpoint pointing at the test Azurite, needs no other configuration.
func TestDevConnectionStringOnAzurite(t *testing.T) {
	srv := testenv.Azurite(t)
	clearAzureEnv(t)
	t.Setenv(EnvConnectionString, "DefaultEndpointsProtocol=http;AccountName="+testenv.AzuriteDevAccount+
		";AccountKey="+testenv.AzuriteDevKey+";BlobEndpoint="+srv.Endpoint+"/"+testenv.AzuriteDevAccount+";")
	s, err := store.Open(context.Background(), "az://"+testenv.AzuriteDevAccount+"/"+uniqueContainer(), relaxed(testConfig{}).storeConfig())
	if err != nil {
		t.Fatal(err)
	}
	if d := s.Describe(); d.Endpoint != srv.Endpoint+"/"+testenv.AzuriteDevAccount {
		t.Errorf("endpoint %q, want the connection string's", d.Endpoint)
	}
	roundTrip(t, s)
}

// TestUseDevelopmentStorageOnAzurite: UseDevelopmentStorage=true names the development account
// and its key; the configured endpoint (the test Azurite, not port 10000) wins.
func TestUseDevelopmentStorageOnAzurite(t *testing.T) {
	srv := testenv.Azurite(t)
	clearAzureEnv(t)
	t.Setenv(EnvConnectionString, "UseDevelopmentStorage=true")
	s, err := store.Open(context.Background(), "az://"+testenv.AzuriteDevAccount+"/"+uniqueContainer(), relaxed(testConfig{Options: Options{Endpoint: srv.Endpoint}}).storeConfig())
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, s)
}

// TestAccountKeyEnvOnAzurite: AZURE_STORAGE_ACCOUNT and AZURE_STORAGE_KEY authenticate.
func TestAccountKeyEnvOnAzurite(t *testing.T) {
	srv := testenv.Azurite(t)
	clearAzureEnv(t)
	t.Setenv(EnvAccount, srv.Account)
	t.Setenv(EnvKey, srv.Key)
	s, err := store.Open(context.Background(), "az://"+srv.Account+"/"+uniqueContainer(), relaxed(testConfig{Options: Options{Endpoint: srv.Endpoint}}).storeConfig())
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, s)
}

// TestSASTokenEnvOnAzurite: AZURE_STORAGE_SAS_TOKEN (an account SAS, with its '?') authenticates.
func TestSASTokenEnvOnAzurite(t *testing.T) {
	srv := testenv.Azurite(t)
	clearAzureEnv(t)
	t.Setenv(EnvSASToken, "?"+accountSAS(t, srv))
	s, err := store.Open(context.Background(), "az://"+srv.Account+"/"+uniqueContainer(), relaxed(testConfig{Options: Options{Endpoint: srv.Endpoint}}).storeConfig())
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, s)
}
