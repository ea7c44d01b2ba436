// Package natskv is the backfill coordinator over NATS JetStream key-value: one key-value
// bucket per job (wharf-backfill-<job>), each record a key, its revision the key's
// revision, and every conditional write JetStream's own compare-and-set (create on an
// existing key and update at a stale revision fail with "wrong last sequence"). It is a
// package apart so that programs using package backfill without NATS do not link its
// client.
//
// # Availability
//
// On a cluster the bucket has three replicas (Options.Replicas), so a job goes on while one
// node is down. A request that times out, or finds no JetStream leader for a moment (a node
// died, an election is under way), is tried again for Options.RetryFor. A write whose answer
// was lost is settled by reading the key back: our bytes there mean it landed.
//
// # Errors
//
// Open fails with backfill.ErrConfig for options it cannot use and
// backfill.ErrCoordinator when the servers cannot be reached or JetStream is not enabled;
// a record's failure past the retries is backfill.ErrCoordinator naming the key. No
// password or token ever appears in a message.
package natskv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/wharfdata/wharf/backfill"
	"github.com/wharfdata/wharf/errcode"
)

// Options say how to reach NATS and which job's bucket to use.
type Options struct {
	Servers  string // nats://host:port, several separated by commas
	Job      string
	Replicas int // 0: 3 on a cluster, 1 on a single server
	User     string
	Password string // resolved; never printed
	Token    string // resolved; never printed
	Timeout  time.Duration
	RetryFor time.Duration
	Logger   *slog.Logger
}

// KV is the coordinator of one job.
type KV struct {
	nc     *nats.Conn
	kv     jetstream.KeyValue
	bucket string
	where  string
	opts   Options
	log    *slog.Logger
}

var _ backfill.Coordinator = (*KV)(nil)

// Bucket is the key-value bucket of job.
func Bucket(job string) string { return "wharf-backfill-" + job }

// Open connects and opens (creating when missing) the job's bucket.
func Open(ctx context.Context, o Options) (*KV, error) {
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Second
	}
	if o.RetryFor <= 0 {
		o.RetryFor = 60 * time.Second
	}
	k := &KV{bucket: Bucket(o.Job), opts: o, log: o.Logger}
	if k.log == nil {
		k.log = slog.New(slog.DiscardHandler)
	}
	k.where = fmt.Sprintf("nats %s bucket %s", redactServers(o.Servers), k.bucket)
	nc, err := nats.Connect(o.Servers, k.connectOptions()...)
	if err != nil {
		return nil, errcode.E("connect", k.where, backfill.ErrCoordinator, err)
	}
	k.nc = nc
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, errcode.E("connect", k.where, backfill.ErrCoordinator, err)
	}
	err = k.retry(ctx, "open", func(ctx context.Context) error {
		k.kv, err = js.KeyValue(ctx, k.bucket)
		if errors.Is(err, jetstream.ErrBucketNotFound) {
			k.kv, err = js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: k.bucket, History: 1,
				Replicas: k.replicas(), Description: "wharf backfill job " + o.Job})
			if errors.Is(err, jetstream.ErrBucketExists) {
				k.kv, err = js.KeyValue(ctx, k.bucket)
			}
		}
		return err
	})
	if err != nil {
		nc.Close()
		return nil, err
	}
	return k, nil
}

func (k *KV) connectOptions() []nats.Option {
	o := []nats.Option{nats.Name("wharf backfill " + k.opts.Job), nats.MaxReconnects(-1),
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

// redactServers drops any userinfo from the server list (config.Check refuses it anyway).
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

// subject maps a backfill key (slash-separated) to a key-value key (dot-separated tokens).
func subject(key string) string { return strings.ReplaceAll(key, "/", ".") }

// Get implements backfill.Coordinator.
func (k *KV) Get(ctx context.Context, key string) (value []byte, rev string, err error) {
	err = k.retry(ctx, "get "+key, func(ctx context.Context) error {
		e, err := k.kv.Get(ctx, subject(key))
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			return backfill.ErrNoRecord
		}
		if err == nil {
			value, rev = e.Value(), strconv.FormatUint(e.Revision(), 10)
		}
		return err
	})
	return value, rev, err
}

// Create implements backfill.Coordinator.
func (k *KV) Create(ctx context.Context, key string, value []byte) (string, error) {
	return k.write(ctx, key, value, "", func(ctx context.Context) (uint64, error) {
		return k.kv.Create(ctx, subject(key), value)
	})
}

// Update implements backfill.Coordinator.
func (k *KV) Update(ctx context.Context, key string, value []byte, rev string) (string, error) {
	r, err := strconv.ParseUint(rev, 10, 64)
	if err != nil {
		return "", backfill.ErrConflict
	}
	return k.write(ctx, key, value, rev, func(ctx context.Context) (uint64, error) {
		return k.kv.Update(ctx, subject(key), value, r)
	})
}

// write runs a conditional write; after an attempt whose answer was lost, it reads the key:
// our bytes there mean the write landed, the revision unchanged means try again, anything
// else is a conflict.
func (k *KV) write(ctx context.Context, key string, value []byte, rev string, do func(context.Context) (uint64, error)) (string, error) {
	var out string
	unsure := false
	err := k.retry(ctx, "write "+key, func(ctx context.Context) error {
		if unsure {
			e, err := k.kv.Get(ctx, subject(key))
			switch {
			case err == nil && bytes.Equal(e.Value(), value):
				out = strconv.FormatUint(e.Revision(), 10)
				return nil
			case err == nil && strconv.FormatUint(e.Revision(), 10) != rev:
				return backfill.ErrConflict
			case err != nil && !errors.Is(err, jetstream.ErrKeyNotFound):
				return err
			}
		}
		r, err := do(ctx)
		if conflict(err) {
			return backfill.ErrConflict
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
// (ErrNoRecord, ErrConflict), ctx ends, or RetryFor has passed.
func (k *KV) retry(ctx context.Context, what string, fn func(context.Context) error) error {
	deadline := time.Now().Add(k.opts.RetryFor)
	wait := 50 * time.Millisecond
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, k.opts.Timeout)
		err := fn(actx)
		cancel()
		switch {
		case err == nil, errors.Is(err, backfill.ErrNoRecord), errors.Is(err, backfill.ErrConflict):
			return err
		case ctx.Err() != nil:
			return ctx.Err()
		case fatal(err) || time.Now().After(deadline):
			return errcode.E(what, k.where, backfill.ErrCoordinator, fmt.Errorf("after %d attempt(s): %w", attempt, err))
		}
		k.log.Debug("nats request failed; retrying", "op", what, "attempt", attempt, "error", err)
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
		errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) || errors.Is(err, jetstream.ErrInvalidKey) ||
		errors.Is(err, nats.ErrMaxPayload) || errors.Is(err, nats.ErrConnectionClosed)
}

// Durable implements backfill.Coordinator.
func (k *KV) Durable() bool { return true }

// Describe implements backfill.Coordinator.
func (k *KV) Describe() string { return k.where }

// Close implements backfill.Coordinator.
func (k *KV) Close() error {
	k.nc.Close()
	return nil
}

// DeleteBucket removes the job's bucket (its whole state).
func (k *KV) DeleteBucket(ctx context.Context) error {
	js, err := jetstream.New(k.nc)
	if err != nil {
		return err
	}
	return js.DeleteKeyValue(ctx, k.bucket)
}
