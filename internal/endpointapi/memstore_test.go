package endpointapi

import (
	"context"
	"maps"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/heraldhq/herald/internal/endpoint"
)

// memStore holds endpoints in memory with the store's rules that the API
// relies on (endpoint.Validate, versions, not found, rotation), for the
// handler's tests; the integration test runs the real table.
type memStore struct {
	mu       sync.Mutex
	eps      map[string]endpoint.Endpoint
	failures map[string][]endpoint.Failure
	now      func() time.Time
}

var _ Store = (*memStore)(nil)

func newMemStore() *memStore {
	return &memStore{eps: map[string]endpoint.Endpoint{}, failures: map[string][]endpoint.Failure{}, now: time.Now}
}

func clone(e endpoint.Endpoint) endpoint.Endpoint {
	e.EventTypes = slices.Clone(e.EventTypes)
	e.Headers = maps.Clone(e.Headers)
	e.Metadata = maps.Clone(e.Metadata)
	e.Secrets = slices.Clone(e.Secrets)
	if e.Disabled != nil {
		d := *e.Disabled
		e.Disabled = &d
	}
	return e
}

func (m *memStore) Create(_ context.Context, e endpoint.Endpoint) (endpoint.Endpoint, error) {
	if err := endpoint.Validate(e); err != nil {
		return endpoint.Endpoint{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	e.ID, e.Version, e.CreatedAt, e.UpdatedAt = endpoint.NewID(), 1, now, now
	e.Secrets = []endpoint.Secret{endpoint.NewSecret(now)}
	m.eps[e.ID] = clone(e)
	return clone(e), nil
}

func (m *memStore) Get(_ context.Context, id string) (endpoint.Endpoint, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.eps[id]
	if !ok {
		return endpoint.Endpoint{}, endpoint.ErrNotFound
	}
	return clone(e), nil
}

func (m *memStore) List(_ context.Context, q endpoint.ListQuery) (endpoint.Page, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ids := slices.Sorted(maps.Keys(m.eps))
	var page endpoint.Page
	for _, id := range ids {
		e := m.eps[id]
		switch {
		case q.Cursor != "" && id <= q.Cursor,
			q.Tenant != "" && e.Tenant != q.Tenant,
			q.EventType != "" && !endpoint.Matches(e.EventTypes, q.EventType),
			q.State == endpoint.StateEnabled && e.Disabled != nil,
			q.State == endpoint.StateDisabled && e.Disabled == nil:
			continue
		}
		if len(page.Endpoints) == q.Limit {
			page.Next = page.Endpoints[len(page.Endpoints)-1].ID
			break
		}
		e = clone(e)
		e.Secrets, e.Headers = nil, nil // List reads no sealed data
		page.Endpoints = append(page.Endpoints, e)
	}
	return page, nil
}

func (m *memStore) Update(_ context.Context, id string, version int64, p endpoint.Patch) (endpoint.Endpoint, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.eps[id]
	if !ok {
		return endpoint.Endpoint{}, endpoint.ErrNotFound
	}
	if e.Version != version {
		return endpoint.Endpoint{}, &endpoint.ConflictError{ID: id, Want: version, Current: e.Version}
	}
	e = clone(e)
	if p.URL != nil {
		e.URL = *p.URL
	}
	if p.Description != nil {
		e.Description = *p.Description
	}
	if p.EventTypes != nil {
		e.EventTypes = *p.EventTypes
	}
	if p.Headers != nil {
		e.Headers = *p.Headers
	}
	if p.Metadata != nil {
		e.Metadata = *p.Metadata
	}
	if p.RateLimit != nil {
		e.RateLimit = *p.RateLimit
	}
	if err := endpoint.Validate(e); err != nil {
		return endpoint.Endpoint{}, err
	}
	e.Version++
	e.UpdatedAt = m.now()
	m.eps[id] = e
	return clone(e), nil
}

func (m *memStore) Delete(_ context.Context, id string, version int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.eps[id]
	if !ok {
		return endpoint.ErrNotFound
	}
	if version != 0 && e.Version != version {
		return &endpoint.ConflictError{ID: id, Want: version, Current: e.Version}
	}
	delete(m.eps, id)
	return nil
}

func (m *memStore) SetDisabled(_ context.Context, id string, d *endpoint.Disabled) (endpoint.Endpoint, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.eps[id]
	if !ok {
		return endpoint.Endpoint{}, endpoint.ErrNotFound
	}
	e = clone(e)
	e.Disabled = d
	e.Version++
	m.eps[id] = e
	return clone(e), nil
}

func (m *memStore) RotateSecret(_ context.Context, id string, grace time.Duration) (endpoint.Endpoint, endpoint.Secret, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.eps[id]
	if !ok {
		return endpoint.Endpoint{}, endpoint.Secret{}, endpoint.ErrNotFound
	}
	e = clone(e)
	now := m.now()
	s := endpoint.NewSecret(now)
	s.Version = e.Secrets[0].Version + 1
	e.Secrets[0].Until = now.Add(grace)
	e.Secrets = append([]endpoint.Secret{s}, e.Secrets[:min(len(e.Secrets), endpoint.MaxSecretVersions-1)]...)
	e.Version++
	m.eps[id] = e
	return clone(e), s, nil
}

func (m *memStore) Failures(_ context.Context, id string, limit int) ([]endpoint.Failure, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.eps[id]; !ok {
		return nil, endpoint.ErrNotFound
	}
	fs := slices.Clone(m.failures[id])
	sort.Slice(fs, func(i, j int) bool { return fs[i].At.After(fs[j].At) })
	return fs[:min(limit, len(fs))], nil
}

// failed records a failure as the deliver function would.
func (m *memStore) failed(id string, f endpoint.Failure) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.failures[id] = append(m.failures[id], f)
}
