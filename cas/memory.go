package cas

import (
	"context"
	"strconv"
	"sync"
)

// Memory is a Store in this process only: its records die with it. Safe for concurrent use.
type Memory struct {
	mu   sync.Mutex
	recs map[string]memRecord
	next uint64
}

type memRecord struct {
	value []byte
	rev   uint64
}

var _ Store = (*Memory)(nil)

// NewMemory returns an empty Memory.
func NewMemory() *Memory { return &Memory{recs: map[string]memRecord{}} }

// Get implements Store.
func (m *Memory) Get(ctx context.Context, key string) ([]byte, string, error) {
	if err := begin(ctx, key); err != nil {
		return nil, "", err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.recs[key]
	if !ok {
		return nil, "", ErrNoRecord
	}
	return append([]byte(nil), r.value...), strconv.FormatUint(r.rev, 10), nil
}

// Create implements Store.
func (m *Memory) Create(ctx context.Context, key string, value []byte) (string, error) {
	if err := begin(ctx, key); err != nil {
		return "", err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.recs[key]; ok {
		return "", ErrConflict
	}
	return m.put(key, value), nil
}

// Update implements Store.
func (m *Memory) Update(ctx context.Context, key string, value []byte, rev string) (string, error) {
	if err := begin(ctx, key); err != nil {
		return "", err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.recs[key]
	if !ok || strconv.FormatUint(r.rev, 10) != rev {
		return "", ErrConflict
	}
	return m.put(key, value), nil
}

func (m *Memory) put(key string, value []byte) string {
	m.next++
	m.recs[key] = memRecord{value: append([]byte(nil), value...), rev: m.next}
	return strconv.FormatUint(m.next, 10)
}

// Describe implements Store.
func (m *Memory) Describe() string { return "memory (this process)" }

// begin checks key and ctx before a call.
func begin(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return CheckKey(key)
}
