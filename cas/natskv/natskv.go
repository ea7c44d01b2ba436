// Package natskv is a cas.Store over NATS JetStream key-value: one key-value bucket, each
// record a key, its revision the key's revision, and every conditional write JetStream's own
// compare-and-set (a create on an existing key and an update at a stale revision fail with
// "wrong last sequence", error 10071). It is a package apart so that programs that do not use
// NATS do not link its client.
//
// # Keys
//
// A cas key maps to a key-value key one to one: each '/' becomes '.', the subject token
// separator, and each '.' becomes '=' (which cas keys never hold), so "_wharf/leases/a.json"
// is "_wharf.leases.a=json".
//
// # Reads
//
// A key-value bucket answers a get from any replica by default ("direct get"), which may be
// behind the last write; Open turns that off for its bucket, so that every Get is answered by
// the stream's leader and sees the last write acknowledged: the cas contract, and what a
// lease needs to judge who holds it.
//
// # Availability
//
// On a cluster the bucket has three replicas (Options.Replicas), so its records stay writable
// while one node is down. A request that times out, or finds no JetStream leader for a moment
// (a node died, an election is under way), is tried again until Options.RetryFor has passed
// or the caller's context ends, whichever is first. A write whose answer was lost is settled
// by reading the key back: our bytes there mean it landed, the revision it was conditional on
// still there means it is sent again, anything else is a conflict. A send again that fails
// its condition is read back too: the lost send may have landed after the first read-back. Two writers' values must
// differ for that to tell them apart (the cas contract asks it of every writer).
//
// # Errors
//
// Open fails with store.ErrConfig for options it cannot use, store.ErrForbidden when the
// servers refuse the credentials, and store.ErrUnavailable when they cannot be reached or
// JetStream is not enabled; a record's failure past the retries is store.ErrUnavailable naming
// the key. No password or token ever appears in a message.
package natskv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/wharfdata/wharf/cas"
	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/store"
)

// Options say how to reach NATS and which key-value bucket holds the records.
type Options struct {
	Servers     string // nats://host:port, several separated by commas; no credentials in them
	Bucket      string // the key-value bucket: letters, digits, '-' and '_'; made when missing
	Description string // given to a bucket this package makes
	Replicas    int    // 0: 3 on a cluster of at least three servers, 1 elsewhere
	User        string
	Password    string        // resolved; never printed
	Token       string        // resolved; never printed
	Timeout     time.Duration // per request; 0 is 5 s
	RetryFor    time.Duration // how long a failing request is tried again; 0 is 60 s
	Logger      *slog.Logger
}

// KV is a cas.Store in one key-value bucket.
type KV struct {
	nc    *nats.Conn
	js    jetstream.JetStream
	kv    jetstream.KeyValue
	where string
	opts  Options
	log   *slog.Logger
}

var _ cas.Store = (*KV)(nil)

var bucketName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Open connects and opens the bucket, making it when it is missing.
func Open(ctx context.Context, o Options) (*KV, error) {
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Second
	}
	if o.RetryFor <= 0 {
		o.RetryFor = 60 * time.Second
	}
	k := &KV{opts: o, log: o.Logger}
	if k.log == nil {
		k.log = slog.New(slog.DiscardHandler)
	}
	k.where = fmt.Sprintf("nats %s bucket %s", redactServers(o.Servers), o.Bucket)
	if !bucketName.MatchString(o.Bucket) {
		return nil, errcode.E("open", k.where, store.ErrConfig, errors.New("a key-value bucket is named by 1 to 64 letters, digits, '-' or '_'"))
	}
	if strings.Contains(o.Servers, "@") {
		return nil, errcode.E("open", k.where, store.ErrConfig, errors.New("credentials go in User/Password or Token, not in the server URL"))
	}
	nc, err := nats.Connect(o.Servers, k.connectOptions()...)
	if err != nil {
		return nil, errcode.E("connect", k.where, kindOf(err), err)
	}
	k.nc = nc
	if k.js, err = jetstream.New(nc); err != nil {
		nc.Close()
		return nil, errcode.E("connect", k.where, store.ErrUnavailable, err)
	}
	if err := k.retry(ctx, "open", k.openBucket); err != nil {
		nc.Close()
		return nil, err
	}
	return k, nil
}

func (k *KV) openBucket(ctx context.Context) error {
	_, err := k.js.KeyValue(ctx, k.opts.Bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		_, err = k.js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: k.opts.Bucket, History: 1,
			Replicas: k.replicas(), Description: k.opts.Description})
		if errors.Is(err, jetstream.ErrBucketExists) {
			err = nil
		}
	}
	if err != nil {
		return err
	}
	afterCreate()
	// A direct get (the key-value default) may be answered by a replica that is behind the
	// last write: reads go to the stream's leader instead.
	st, err := k.js.Stream(ctx, "KV_"+k.opts.Bucket)
	if err != nil {
		return err
	}
	if cfg := st.CachedInfo().Config; cfg.AllowDirect {
		cfg.AllowDirect = false
		if _, err := k.js.UpdateStream(ctx, cfg); err != nil {
			return err
		}
	}
	// The handle is bound only now: a handle bound while the stream still allowed direct
	// gets keeps sending them after another client turned them off, and no replica answers
	// those any more (nats: no responders, on every server, for as long as it lives).
	kv, err := k.js.KeyValue(ctx, k.opts.Bucket)
	if err != nil {
		return err
	}
	k.kv = kv
	return nil
}

// afterCreate is a test hook: it runs once the bucket exists, before its stream is read.
var afterCreate = func() {}

// Direct reports whether the bucket answers gets from any replica (Open turns it off).
func (k *KV) Direct(ctx context.Context) (bool, error) {
	st, err := k.js.Stream(ctx, "KV_"+k.opts.Bucket)
	if err != nil {
		return false, err
	}
	return st.CachedInfo().Config.AllowDirect, nil
}

func (k *KV) connectOptions() []nats.Option {
	o := []nats.Option{nats.Name("wharf " + k.opts.Bucket), nats.MaxReconnects(-1),
		nats.ReconnectWait(200 * time.Millisecond), nats.Timeout(k.opts.Timeout),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				k.log.Warn("nats disconnected; reconnecting", "error", err)
			}
		}),
		nats.ReconnectHandler(func(c *nats.Conn) { k.log.Info("nats reconnected", "server", c.ConnectedUrlRedacted()) })}
	if k.opts.User != "" {
		o = append(o, nats.UserInfo(k.opts.User, k.opts.Password))
	}
	if k.opts.Token != "" {
		o = append(o, nats.Token(k.opts.Token))
	}
	return o
}

// replicas is Options.Replicas, or 3 on a cluster of at least three servers and 1 elsewhere.
func (k *KV) replicas() int {
	if k.opts.Replicas > 0 {
		return k.opts.Replicas
	}
	if k.nc.ConnectedClusterName() != "" && len(k.nc.Servers()) >= 3 {
		return 3
	}
	return 1
}

// Replicas is how many replicas the bucket has.
func (k *KV) Replicas(ctx context.Context) (int, error) {
	st, err := k.kv.Status(ctx)
	if err != nil {
		return 0, err
	}
	if bs, ok := st.(*jetstream.KeyValueBucketStatus); ok {
		return bs.StreamInfo().Config.Replicas, nil
	}
	return 0, fmt.Errorf("%s: no stream info in the bucket's status", k.where)
}

// redactServers drops any userinfo from the server list.
func redactServers(s string) string {
	var out []string
	for p := range strings.SplitSeq(s, ",") {
		if at := strings.LastIndex(p, "@"); at >= 0 {
			if i := strings.Index(p, "://"); i >= 0 && i < at {
				p = p[:i+3] + "[REDACTED]@" + p[at+1:]
			}
		}
		out = append(out, strings.TrimSpace(p))
	}
	return strings.Join(out, ",")
}

// Subject maps a cas key to its key-value key.
func Subject(key string) string {
	return strings.ReplaceAll(strings.ReplaceAll(key, ".", "="), "/", ".")
}

// Get implements cas.Store.
func (k *KV) Get(ctx context.Context, key string) (value []byte, rev string, err error) {
	if err := begin(ctx, key); err != nil {
		return nil, "", err
	}
	err = k.retry(ctx, "get "+key, func(ctx context.Context) error {
		e, err := k.kv.Get(ctx, Subject(key))
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			return cas.ErrNoRecord
		}
		if err == nil {
			value, rev = e.Value(), strconv.FormatUint(e.Revision(), 10)
		}
		return err
	})
	return value, rev, err
}

// Create implements cas.Store.
func (k *KV) Create(ctx context.Context, key string, value []byte) (string, error) {
	if err := begin(ctx, key); err != nil {
		return "", err
	}
	return k.write(ctx, key, value, "", func(ctx context.Context) (uint64, error) {
		return k.kv.Create(ctx, Subject(key), value)
	})
}

// Update implements cas.Store.
func (k *KV) Update(ctx context.Context, key string, value []byte, rev string) (string, error) {
	if err := begin(ctx, key); err != nil {
		return "", err
	}
	r, err := strconv.ParseUint(rev, 10, 64)
	if err != nil || r == 0 {
		return "", cas.ErrConflict
	}
	return k.write(ctx, key, value, rev, func(ctx context.Context) (uint64, error) {
		return k.kv.Update(ctx, Subject(key), value, r)
	})
}

func begin(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return cas.CheckKey(key)
}

// write runs a conditional write; after an attempt whose answer was lost it reads the key:
// our bytes there mean the write landed, the revision it was conditional on unchanged (or,
// for a create, no record) means try again, anything else is a conflict. A send again that
// fails its condition reads the key once more: the lost send may have landed meanwhile.
func (k *KV) write(ctx context.Context, key string, value []byte, rev string, do func(context.Context) (uint64, error)) (string, error) {
	var out string
	unsure := false
	err := k.retry(ctx, "write "+key, func(ctx context.Context) error {
		if unsure {
			e, err := k.kv.Get(ctx, Subject(key))
			switch {
			case err == nil && bytes.Equal(e.Value(), value):
				out = strconv.FormatUint(e.Revision(), 10)
				return nil
			case err == nil && strconv.FormatUint(e.Revision(), 10) != rev:
				return cas.ErrConflict
			case errors.Is(err, jetstream.ErrKeyNotFound) && rev != "":
				return cas.ErrConflict
			case err != nil && !errors.Is(err, jetstream.ErrKeyNotFound):
				return err
			}
		}
		r, err := do(ctx)
		if conflict(err) && unsure {
			// The send whose answer was lost may have landed after the read-back: that
			// makes this one fail its condition, and the write has landed all the same.
			e, gerr := k.kv.Get(ctx, Subject(key))
			switch {
			case gerr == nil && bytes.Equal(e.Value(), value):
				out = strconv.FormatUint(e.Revision(), 10)
				return nil
			case gerr != nil && !errors.Is(gerr, jetstream.ErrKeyNotFound):
				return gerr // read back again on the next attempt
			}
		}
		if conflict(err) {
			return cas.ErrConflict
		}
		if err != nil {
			unsure = true
			return err
		}
		out = strconv.FormatUint(r, 10)
		return nil
	})
	return out, err
}

func conflict(err error) bool {
	if errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		return true
	}
	var api *jetstream.APIError
	return errors.As(err, &api) && (api.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		api.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}

// retry runs fn with a per-attempt timeout until it succeeds, answers a definite result
// (cas.ErrNoRecord, cas.ErrConflict), ctx ends, or RetryFor has passed.
func (k *KV) retry(ctx context.Context, what string, fn func(context.Context) error) error {
	deadline := time.Now().Add(k.opts.RetryFor)
	wait := 50 * time.Millisecond
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, k.opts.Timeout)
		err := fn(actx)
		cancel()
		switch {
		case err == nil, errors.Is(err, cas.ErrNoRecord), errors.Is(err, cas.ErrConflict):
			return err
		case ctx.Err() != nil:
			return ctx.Err()
		case fatal(err) || time.Now().After(deadline):
			return errcode.E(what, k.where, kindOf(err), fmt.Errorf("after %d attempt(s): %w", attempt, err))
		}
		k.log.Debug("nats request failed; retrying", "op", what, "attempt", attempt, "error", err)
		if errors.Is(err, nats.ErrNoResponders) && attempt%5 == 0 {
			// The server this client is on answers nothing for JetStream (a node restarted
			// and not yet back in its cluster): another server of the cluster may.
			k.log.Warn("nats: no JetStream responders on this server; reconnecting to another", "op", what, "attempts", attempt)
			_ = k.nc.ForceReconnect()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(wait*2, time.Second)
	}
}

// fatal reports failures that retrying cannot cure.
func fatal(err error) bool {
	return errors.Is(err, nats.ErrAuthorization) || errors.Is(err, nats.ErrAuthExpired) ||
		errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) || errors.Is(err, jetstream.ErrJetStreamNotEnabled) ||
		errors.Is(err, jetstream.ErrInvalidKey) || errors.Is(err, jetstream.ErrInvalidBucketName) ||
		errors.Is(err, nats.ErrMaxPayload) || errors.Is(err, nats.ErrConnectionClosed)
}

// kindOf is the store kind of a NATS failure.
func kindOf(err error) *errcode.Code {
	switch {
	case errors.Is(err, nats.ErrAuthorization), errors.Is(err, nats.ErrAuthExpired):
		return store.ErrForbidden
	case errors.Is(err, jetstream.ErrInvalidKey), errors.Is(err, jetstream.ErrInvalidBucketName), errors.Is(err, nats.ErrMaxPayload):
		return store.ErrConfig
	}
	return store.ErrUnavailable
}

// Describe implements cas.Store.
func (k *KV) Describe() string { return k.where }

// Close closes the connection.
func (k *KV) Close() error {
	k.nc.Close()
	return nil
}

// DeleteBucket removes the bucket and every record in it.
func (k *KV) DeleteBucket(ctx context.Context) error { return k.js.DeleteKeyValue(ctx, k.opts.Bucket) }
