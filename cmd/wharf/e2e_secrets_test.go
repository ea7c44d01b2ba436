package main

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
)

// leakScan holds credential values planted for a test and fails the test, naming the secret
// and where it was seen (never its value), when any text it is shown contains one of them
// in plain, URL-escaped or path-escaped form.
type leakScan struct {
	t       *testing.T
	secrets map[string]string // name → value
	scanned int
}

func newLeakScan(t *testing.T) *leakScan { return &leakScan{t: t, secrets: map[string]string{}} }

func (l *leakScan) plant(name, value string) {
	if len(value) < 8 {
		l.t.Fatalf("planted secret %s is too short to scan for", name)
	}
	l.secrets[name] = value
}

func (l *leakScan) check(where, text string) {
	l.t.Helper()
	l.scanned++
	for name, v := range l.secrets {
		for _, form := range []string{v, url.QueryEscape(v), url.PathEscape(v)} {
			if strings.Contains(text, form) {
				l.t.Errorf("secret %s leaked into %s", name, where)
				break
			}
		}
	}
}

// checkTree scans every file under dir (state databases, journals, manifests, downloads).
func (l *leakScan) checkTree(dir string) {
	l.t.Helper()
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		l.check("file "+p, string(b))
		return nil
	})
	if err != nil {
		l.t.Fatal(err)
	}
}

// checkStore scans every object below the store's root, its bytes and its metadata.
func (l *leakScan) checkStore(ctx context.Context, name string, s *store.Store) {
	l.t.Helper()
	n := 0
	for o, err := range s.Walk(ctx, "") {
		if err != nil {
			l.t.Fatalf("scanning %s: %v", name, err)
		}
		r, err := s.Get(ctx, o.Key, nil)
		if err != nil {
			l.t.Fatalf("scanning %s: %v", name, err)
		}
		b, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			l.t.Fatalf("scanning %s/%s: %v", name, o.Key, err)
		}
		l.check(fmt.Sprintf("object %s/%s", name, o.Key), string(b)+fmt.Sprint(r.Info.Metadata))
		n++
	}
	if n == 0 {
		l.t.Fatalf("%s holds no object to scan", name)
	}
}

// run runs the binary with --log-level debug (the most it ever says) and scans its output.
func (l *leakScan) run(c cli, args ...string) result {
	l.t.Helper()
	r := c.run(l.t, append([]string{"--log-level", "debug"}, args...)...)
	l.check(fmt.Sprintf("the output of wharf %s", strings.Join(args, " ")), r.out+r.err)
	return r
}

func randomSecret(t *testing.T, prefix string) string {
	var b [18]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return prefix + hex.EncodeToString(b[:])
}

// TestSecretsNeverLeak plants known credential values for every store and source wharf
// talks to, runs every command with them, succeeding and failing, at debug log level, and
// asserts that no output, log line, local file or written object contains any of them.
func TestSecretsNeverLeak(t *testing.T) {
	ctx := context.Background()
	l := newLeakScan(t)

	// S3: MinIO's real secret key, a planted session token, and a planted wrong secret.
	minio := testenv.MinIO(t)
	l.plant("s3 secret key", minio.SecretKey)
	token := randomSecret(t, "session-token-")
	l.plant("s3 session token", token)
	wrongSecret := randomSecret(t, "wrong-secret-")
	l.plant("s3 wrong secret key", wrongSecret)
	s3env := func(secret string, extra ...string) cli {
		return cli{env: append([]string{"AWS_ACCESS_KEY_ID=" + minio.AccessKey,
			"AWS_SECRET_ACCESS_KEY=" + secret, "AWS_REGION=" + minio.Region}, extra...)}
	}
	good, withToken, wrong := s3env(minio.SecretKey), s3env(minio.SecretKey, "AWS_SESSION_TOKEN="+token), s3env(wrongSecret)
	ep := []string{"--endpoint", minio.Endpoint}
	bucket := "s3://" + randomBucket(t)
	local := t.TempDir()
	writeFiles(t, local, map[string]string{"a.csv": "id\n1\n", "tree/b.csv": "id\n2\n", "tree/c/d.csv": "id\n3\n"})
	down := t.TempDir()

	steps := []struct {
		c    cli
		code int
		args []string
	}{
		{good, 0, []string{"mb", bucket}},
		{good, 0, []string{"cp", filepath.Join(local, "a.csv"), bucket + "/in/a.csv"}},
		{good, 0, []string{"cp", "-r", filepath.Join(local, "tree"), bucket + "/in/tree/"}},
		{good, 0, []string{"ls", "-r", bucket}},
		{good, 0, []string{"cat", bucket + "/in/a.csv"}},
		{good, 0, []string{"stat", "--format", "json", bucket + "/in/a.csv"}},
		{good, 0, []string{"cp", "-r", bucket + "/in/", down + "/"}},
		{good, 0, []string{"probe", bucket + "/probe/"}},
		{good, 0, []string{"probe", "--contention", "2", "--rounds", "2", bucket + "/contention/"}},
		{good, 1, []string{"cp", "--if-absent", filepath.Join(local, "a.csv"), bucket + "/in/a.csv"}},
		{good, 1, []string{"cat", bucket + "/in/missing.csv"}},
		{good, 1, []string{"ls", bucket + "-missing"}},
		{good, 0, []string{"rm", bucket + "/in/tree/b.csv"}},
		{withToken, 1, []string{"ls", bucket}},
		{withToken, 1, []string{"cp", filepath.Join(local, "a.csv"), bucket + "/token/a.csv"}},
		{wrong, 1, []string{"ls", bucket}},
		{wrong, 1, []string{"cp", filepath.Join(local, "a.csv"), bucket + "/wrong/a.csv"}},
		{wrong, 1, []string{"--format", "json", "stat", bucket + "/in/a.csv"}},
	}
	for _, s := range steps {
		s.c.env = append(s.c.env, "WHARF_ENDPOINT_ALLOWLIST=127.0.0.1")
		l.run(s.c, append(ep, s.args...)...).must(t, s.code)
	}

	// A password inside an endpoint, from every place an endpoint comes from: refused before
	// any connection (exit 2, WHARF_CREDENTIAL_LITERAL), never echoed.
	pw := randomSecret(t, "endpoint-password-")
	l.plant("endpoint password", pw)
	withPW := strings.Replace(minio.Endpoint, "http://", "http://admin:"+pw+"@", 1)
	profile := filepath.Join(t.TempDir(), "aws-config")
	must(t, os.WriteFile(profile, []byte("[default]\nendpoint_url = "+withPW+"\n"), 0o600))
	storesCfg := filepath.Join(t.TempDir(), "wharf.yaml")
	must(t, os.WriteFile(storesCfg, []byte("stores:\n  s3:\n    endpoint: "+withPW+"\n"), 0o600))
	for _, s := range []struct {
		c    cli
		args []string
	}{
		{good, []string{"--endpoint", withPW, "ls", bucket}},
		{s3env(minio.SecretKey, "AWS_ENDPOINT_URL_S3="+withPW), []string{"ls", bucket}},
		{s3env(minio.SecretKey, "AWS_ENDPOINT_URL="+withPW), []string{"cp", filepath.Join(local, "a.csv"), bucket + "/pw/a.csv"}},
		{s3env(minio.SecretKey, "AWS_CONFIG_FILE="+profile), []string{"ls", bucket}},
		{good, []string{"-c", storesCfg, "ls", bucket}},
		{cli{env: []string{"STORAGE_EMULATOR_HOST=" + withPW}}, []string{"ls", "gs://" + randomBucket(t)}},
		{cli{}, []string{"--endpoint", withPW, "ls", "az://devstoreaccount1/c"}},
	} {
		r := l.run(s.c, s.args...).must(t, 2)
		if !strings.Contains(r.err, "[WHARF_CREDENTIAL_LITERAL]") {
			t.Errorf("wharf %v with a password in the endpoint: %q", s.args, r.err)
		}
	}

	// The ship service to MinIO with the real keys: its logs, summary and spool.
	spoolDir := filepath.Join(t.TempDir(), "spool")
	l.run(cli{}, "spool", "init", spoolDir).must(t, 0)
	l.run(cli{}, "spool", "add", "--spool", spoolDir, "--dataset", "events", "--copy", filepath.Join(local, "a.csv")).must(t, 0)
	l.run(good, append(ep, "ship", "--spool", spoolDir, "--to", bucket+"/shipped", "--pipeline", "p", "--node", "n",
		"--drain", "--listen", "off", "--log-level", "debug")...).must(t, 0)
	l.run(cli{}, "spool", "status", "--spool", spoolDir, "--format", "json").must(t, 0)
	l.checkTree(spoolDir)

	// Azure: Azurite's account key made at random for this run, and a planted SAS token
	// (well formed, with a signature Azurite refuses), by environment and by config reference.
	azc, azep, az := azuriteCLI(t)
	l.plant("azure account key", az.Key)
	sig := randomSecret(t, "sig")
	l.plant("azure sas signature", sig)
	sas := "sv=2023-11-03&ss=b&srt=sco&sp=rwdlac&se=2099-01-01T00:00:00Z&spr=http&sig=" + sig
	sasEnv := cli{env: []string{"AZURE_STORAGE_ACCOUNT=" + az.Account, "AZURE_STORAGE_SAS_TOKEN=" + sas}}
	both := cli{env: append(slices.Clone(azc.env), "AZURE_STORAGE_SAS_TOKEN=?"+sas)}
	container := "az://" + az.Account + "/" + randomBucket(t)
	azSteps := []struct {
		c    cli
		code int
		args []string
	}{
		{azc, 0, []string{"mb", container}},
		{azc, 0, []string{"cp", "-r", filepath.Join(local, "tree"), container + "/tree/"}},
		{azc, 0, []string{"ls", "-r", container}},
		{azc, 0, []string{"cat", container + "/tree/b.csv"}},
		{azc, 0, []string{"probe", container + "/probe/"}},
		{azc, 1, []string{"cat", container + "/missing"}},
		{azc, 1, []string{"ls", container + "-missing/"}},
		{sasEnv, 1, []string{"ls", container}},
		{sasEnv, 1, []string{"cp", filepath.Join(local, "a.csv"), container + "/sas/a.csv"}},
		{both, 0, []string{"ls", container}}, // the key wins over the SAS variable
	}
	for _, s := range azSteps {
		l.run(s.c, append(azep, s.args...)...).must(t, s.code)
	}
	// Export to Azure with the planted SAS token by reference: refused at the first write.
	sasFile := filepath.Join(t.TempDir(), "sas")
	must(t, os.WriteFile(sasFile, []byte(sas+"\n"), 0o600))
	azCfg := quickstart(t, "    destination: ./out/{export}/{date}/", "    destination: "+container+`/exports/{export}/
    store:
      endpoint: `+az.Endpoint+`
      sas_token: file://`+sasFile)
	if r := l.run(cli{}, "export", "-c", azCfg).must(t, 1); !strings.Contains(r.err, "access denied") || !strings.Contains(r.err, "[WHARF_EXPORT_WRITE_FAILED]") {
		t.Errorf("export with a refused SAS token: %q", r.err)
	} else if n := strings.Count(r.err, `delete "exports/orders/_SUCCESS"`); n != 1 {
		t.Errorf("the refused delete of _SUCCESS is reported %d times, want once: %q", n, r.err)
	}
	l.checkTree(filepath.Dir(azCfg))

	// Export from PostgreSQL to MinIO with every credential in the config as a reference,
	// then with a planted wrong database password.
	pg := testenv.Postgres(t)
	l.plant("postgres password", pg.Password)
	table := pgMixedTable(t, pg)
	dir := t.TempDir()
	pwFile := filepath.Join(t.TempDir(), "pg-password")
	must(t, os.WriteFile(pwFile, []byte(pg.Password+"\n"), 0o600))
	ak, sk := minio.Refs(t)
	cfg := pgConfig(t, dir, pg.URL, pwFile, table)
	body := strings.Replace(readFile(t, cfg), "destination: ./out/{export}/", "destination: "+bucket+`/exports/{export}/
    store:
      endpoint: `+minio.Endpoint+`
      region: `+minio.Region+`
      access_key_id: `+ak+`
      secret_access_key: `+sk, 1)
	must(t, os.WriteFile(cfg, []byte(body), 0o644))
	l.run(cli{}, "export", "-c", cfg, "--validate").must(t, 0)
	l.run(cli{}, "validate", "-c", cfg, "--deep", "--format", "json").must(t, 0)
	l.run(cli{}, "runs", "-c", cfg, "--format", "json").must(t, 0)
	if pg.Password != "" {
		wrongPG := randomSecret(t, "wrong-pg-")
		l.plant("postgres wrong password", wrongPG)
		must(t, os.WriteFile(pwFile, []byte(wrongPG+"\n"), 0o600))
		// A new destination, so the run reaches the source instead of refusing as complete.
		must(t, os.WriteFile(cfg, []byte(strings.Replace(body, "/exports/", "/again/", 1)), 0o644))
		r := l.run(cli{}, "export", "-c", cfg).must(t, 1)
		if !strings.Contains(r.err, "127.0.0.1") {
			t.Errorf("the wrong-password failure does not name the host: %q", r.err)
		}
		l.run(cli{}, "runs", "-c", cfg).must(t, 0)
	}

	// GCS: a service-account key whose private key is planted, its token endpoint a loopback
	// port nothing listens on, given by GOOGLE_APPLICATION_CREDENTIALS and by config reference.
	gcs := testenv.FakeGCS(t)
	keyFile, pemKey := serviceAccountKey(t, fmt.Sprintf("http://127.0.0.1:%d/token", testenv.FreeLoopbackPort(t)))
	l.plant("gcs private key", pemKey)
	l.plant("gcs private key body", strings.Split(pemKey, "\n")[1])
	gsBucket := "gs://" + randomBucket(t)
	emu := cli{env: []string{"STORAGE_EMULATOR_HOST=" + gcs.Endpoint}}
	adc := cli{env: []string{"GOOGLE_APPLICATION_CREDENTIALS=" + keyFile}}
	l.run(emu, "mb", gsBucket).must(t, 0)
	l.run(emu, "cp", "-r", filepath.Join(local, "tree"), gsBucket+"/tree/").must(t, 0)
	l.run(adc, "--endpoint", gcs.Endpoint, "ls", gsBucket).must(t, 1)
	l.run(adc, "--endpoint", gcs.Endpoint, "cp", filepath.Join(local, "a.csv"), gsBucket+"/adc/a.csv").must(t, 1)
	broken := filepath.Join(t.TempDir(), "broken.json")
	must(t, os.WriteFile(broken, []byte(strings.Replace(readFile(t, keyFile), `"type": "service_account"`, `"type": "user"`, 1)), 0o600))
	gsCfg := quickstart(t, "    destination: ./out/{export}/{date}/", "    destination: "+gsBucket+`/exports/{export}/
    store:
      endpoint: `+gcs.Endpoint+`
      service_account_file: file://`+keyFile)
	l.run(cli{}, "export", "-c", gsCfg).must(t, 1)
	must(t, os.WriteFile(gsCfg, []byte(strings.Replace(readFile(t, gsCfg), keyFile, broken, 1)), 0o644))
	l.run(cli{}, "export", "-c", gsCfg).must(t, 2)
	l.checkTree(filepath.Dir(gsCfg))

	// Everything written: local files (downloads, the state database and journal) and every
	// object in the bucket.
	l.checkTree(down)
	l.checkTree(dir)
	s, err := store.Open(ctx, bucket, minio.StoreConfig(t))
	must(t, err)
	defer s.Close()
	l.checkStore(ctx, bucket, s)
	if l.scanned < len(steps)+8 {
		t.Fatalf("scanned only %d texts", l.scanned)
	}
}

// serviceAccountKey writes a service-account JSON key with a fresh RSA private key and the
// given token endpoint, and returns its path and the key's PEM.
func serviceAccountKey(t *testing.T, tokenURI string) (path, pemKey string) {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	must(t, err)
	der, err := x509.MarshalPKCS8PrivateKey(k)
	must(t, err)
	pemKey = string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	body, err := json.MarshalIndent(map[string]string{
		"type": "service_account", "project_id": "wharf-test", "private_key_id": randomSecret(t, ""),
		"private_key": pemKey, "client_email": "wharf@wharf-test.iam.gserviceaccount.com",
		"client_id": "1", "token_uri": tokenURI,
	}, "", "  ")
	must(t, err)
	path = filepath.Join(t.TempDir(), "key.json")
	must(t, os.WriteFile(path, body, 0o600))
	return path, pemKey
}
