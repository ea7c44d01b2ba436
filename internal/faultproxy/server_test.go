package faultproxy_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/wharfdata/wharf/internal/faultproxy"
	"github.com/wharfdata/wharf/internal/testenv"
)

// sdkClient is an S3 client of the AWS SDK for Go v2 with its retries off, pointed at endpoint.
func sdkClient(srv testenv.S3Server, endpoint string) *s3.Client {
	return s3.New(s3.Options{
		Region:       srv.Region,
		BaseEndpoint: aws.String(endpoint),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(srv.AccessKey, srv.SecretKey, ""),
		Retryer:      aws.NopRetryer{},
	})
}

func errorCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

func put(ctx context.Context, c *s3.Client, bucket, key, body string, ifNoneMatch bool) error {
	in := &s3.PutObjectInput{Bucket: &bucket, Key: &key, Body: strings.NewReader(body)}
	if ifNoneMatch {
		in.IfNoneMatch = aws.String("*")
	}
	_, err := c.PutObject(ctx, in)
	return err
}

// TestRealServers checks against MinIO and SeaweedFS that signed requests pass the proxy, that
// faults reach the SDK as it would see them from a store, and that stripping conditions
// (with re-signing) makes a create-if-absent overwrite.
func TestRealServers(t *testing.T) {
	servers := map[string]func(testing.TB) testenv.S3Server{"minio": testenv.MinIO, "seaweedfs": testenv.SeaweedFS}
	for name, srv := range servers {
		t.Run(name, func(t *testing.T) { testRealServer(t, srv(t)) })
	}
}

func testRealServer(t *testing.T, srv testenv.S3Server) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, viaProxy := testenv.FaultProxy(t, srv)
	c := sdkClient(srv, viaProxy.Endpoint)
	bucket := fmt.Sprintf("faultproxy-%d", time.Now().UnixNano())
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
		t.Fatalf("create bucket through the proxy: %v", err)
	}
	if err := put(ctx, c, bucket, "k", "one", true); err != nil {
		t.Fatalf("signed create through the proxy: %v", err)
	}
	if err := put(ctx, c, bucket, "k", "two", true); errorCode(err) != "PreconditionFailed" {
		t.Fatalf("second create-if-absent: %v, want PreconditionFailed", err)
	}

	p.Inject(faultproxy.Rule{Method: "GET", Path: "/k", Fault: faultproxy.Status, Status: 503, Times: 1})
	_, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: &bucket, Key: aws.String("k")})
	if errorCode(err) != "SlowDown" {
		t.Errorf("GET through a 503 rule: %v, want SlowDown", err)
	}

	p.Inject(faultproxy.Rule{Method: "GET", Path: "/k", Fault: faultproxy.Truncate, After: 1, Times: 1})
	out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: &bucket, Key: aws.String("k")})
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(out.Body)
	out.Body.Close()
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("reading a truncated body: %v, want unexpected EOF", err)
	}

	p.Inject(faultproxy.Rule{Method: "PUT", Path: "/cut", Fault: faultproxy.DropBody, After: 2, Times: 1})
	if err := put(ctx, c, bucket, "cut", "abcdef", false); err != nil {
		t.Fatalf("PUT through a DropBody rule: %v, want the store's success", err)
	}
	out, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: &bucket, Key: aws.String("cut")})
	if err != nil {
		t.Fatal(err)
	}
	cut, _ := io.ReadAll(out.Body)
	out.Body.Close()
	if string(cut) != "ab" {
		t.Errorf("after a DropBody PUT the object holds %q, want the first 2 bytes", cut)
	}

	p.StripConditions(true)
	if err := put(ctx, c, bucket, "k", "three", true); err != nil {
		t.Fatalf("create-if-absent with conditions stripped (re-signed): %v", err)
	}
	p.StripConditions(false)
	out, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: &bucket, Key: aws.String("k")})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(out.Body)
	out.Body.Close()
	if string(body) != "three" {
		t.Errorf("after a stripped create-if-absent the object holds %q, want the overwrite", body)
	}
	if n := p.Count("PUT", "/k"); n != 3 {
		t.Errorf("proxy counted %d PUTs of k, want 3", n)
	}
}
