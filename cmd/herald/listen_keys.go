package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/heraldhq/herald/internal/config"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/internal/webhook"
)

// keySet is keys that verify a request, and what they are (for the
// printed line).
type keySet struct {
	label string
	keys  [][]byte
}

// listenKeys finds the keys that verify a request to an origin: the given
// ones, or those herald signs that origin's webhooks with.
type listenKeys struct {
	given      [][]byte // --secret: the receiver's own keys
	url        string   // --url: derive for its origin whatever the Host
	deployment []string // else: the deployment's signing secrets (whsec_…)
	source     string   // where deployment came from (never a value)
	shared     bool     // HERALD_WEBHOOK_SECRET_SCOPE=shared: the deployment's keys sign
	store      *store.Store
	now        func() time.Time

	mu    sync.Mutex
	cache map[string]cachedKeys
}

// cachedKeys are an origin's key sets as read at readAt.
type cachedKeys struct {
	sets   []keySet
	readAt time.Time
}

// maxListenOrigins bounds listenKeys' cache, as webhook's own key cache is
// bounded: a request may name any Host.
const maxListenOrigins = 1024

func newListenKeys(ctx context.Context, e *env, g *globals, f listenFlags) (*listenKeys, error) {
	k := &listenKeys{url: f.url, now: e.now, cache: map[string]cachedKeys{}}
	for _, s := range f.secrets {
		for _, one := range webhook.SplitSecrets(s) {
			key, err := webhook.DecodeSecret(one)
			if err != nil {
				return nil, usageError{fmt.Errorf("--secret: %w", err)}
			}
			k.given = append(k.given, key)
		}
	}
	if len(f.secrets) > 0 {
		if len(k.given) == 0 {
			return nil, usagef("--secret is empty")
		}
		return k, nil
	}
	awsCfg := func() (aws.Config, error) { return g.awsConfig(ctx) }
	secrets, source, err := deriveSource{}.read(ctx, g, e.getenv, awsCfg, g.stackOutputs)
	if err != nil {
		var ue usageError
		if errors.As(err, &ue) {
			return nil, usagef("no key to verify with: give --secret whsec_… (the receiver's), or the deployment's signing secret: " +
				"source the local stack's env file (set -a; . .local/herald.env; set +a), --stack NAME, HERALD_WEBHOOK_SECRET or HERALD_WEBHOOK_SECRET_ARN")
		}
		return nil, err
	}
	k.deployment, k.source = secrets, source
	scope, err := config.WebhookSecretScope(e.getenv)
	if err != nil {
		return nil, usageError{err}
	}
	k.shared = scope == webhook.ScopeShared
	if k.shared {
		return k, nil
	}
	if k.store, err = openStore(ctx, g, e.getenv, awsCfg, g.stackOutputs); err != nil {
		return nil, err
	}
	return k, nil
}

// describe says what verifies requests to origin, for the banner.
func (k *listenKeys) describe(origin string) string {
	switch {
	case k.given != nil:
		return fmt.Sprintf("--secret (%d key(s))", len(k.given))
	case k.shared:
		return "the signing secret(s) of " + k.source + " themselves (HERALD_WEBHOOK_SECRET_SCOPE=shared)"
	}
	versions := "key version 1 (no store table: HERALD_STORE_TABLE unset)"
	if k.store != nil {
		versions = "the origin's key versions in the store table"
	}
	return fmt.Sprintf("the key herald derives for %s (herald secret derive) from the signing secret(s) of %s, %s", origin, k.source, versions)
}

// forOrigin returns the key sets that verify a request to origin, newest
// key version first. An origin's key versions are read from the store at
// most once per webhook.KeyVersionsCacheTTL, as a deliver function does.
func (k *listenKeys) forOrigin(ctx context.Context, origin string) ([]keySet, error) {
	if k.given != nil {
		return []keySet{{"--secret", k.given}}, nil
	}
	if k.shared {
		keys, err := decodeAll(k.deployment)
		if err != nil {
			return nil, fmt.Errorf("secrets from %s: %w", k.source, err)
		}
		return []keySet{{"the signing secret", keys}}, nil
	}
	now := k.now()
	k.mu.Lock()
	c, ok := k.cache[origin]
	k.mu.Unlock()
	if ok && (k.store == nil || now.Sub(c.readAt) < webhook.KeyVersionsCacheTTL) {
		return c.sets, nil
	}
	kv := webhook.KeyVersions{Version: 1}
	if k.store != nil {
		v, err := k.store.KeyVersions(ctx, origin)
		if err != nil {
			return nil, fmt.Errorf("read the key versions of %s: %w", origin, err)
		}
		kv = v
	}
	var sets []keySet
	for _, v := range kv.Active(now) {
		derived, err := deriveAll(k.deployment, origin, v)
		if err != nil {
			return nil, fmt.Errorf("secrets from %s: %w", k.source, err)
		}
		keys, err := decodeAll(derived)
		if err != nil {
			return nil, err
		}
		sets = append(sets, keySet{"key version " + strconv.Itoa(v), keys})
	}
	k.mu.Lock()
	if len(k.cache) >= maxListenOrigins {
		clear(k.cache)
	}
	k.cache[origin] = cachedKeys{sets, now}
	k.mu.Unlock()
	return sets, nil
}

// decodeAll decodes whsec_ secrets; errors name a secret by its position.
func decodeAll(secrets []string) ([][]byte, error) {
	keys := make([][]byte, len(secrets))
	for i, s := range secrets {
		key, err := webhook.DecodeSecret(s)
		if err != nil {
			return nil, fmt.Errorf("secret %d of %d: %w", i+1, len(secrets), err)
		}
		keys[i] = key
	}
	return keys, nil
}

// verify checks r's signature and says with which key set, or why not.
// The keys --secret gives are the same whatever the request's Host (an
// HTTP/1.0 request may have none).
func (k *listenKeys) verify(r *http.Request, body []byte, now time.Time, tolerance time.Duration) (with string, err error) {
	origin := ""
	if k.given == nil && !k.shared {
		target := k.url
		if target == "" {
			target = "http://" + r.Host
		}
		if origin, err = webhook.Origin(target); err != nil {
			return "", fmt.Errorf("no key for this request's Host (%w): give --url the URL herald sends to, or --secret", err)
		}
	}
	sets, err := k.forOrigin(r.Context(), origin)
	if err != nil {
		return "", err
	}
	var all [][]byte
	for _, s := range sets {
		all = append(all, s.keys...)
	}
	if err := webhook.VerifyRequest(all, r.Header, body, now, tolerance); err != nil {
		if !errors.Is(err, webhook.ErrNoMatchingSignature) || k.given != nil {
			return "", err
		}
		if k.shared {
			return "", fmt.Errorf("%w (the signing secrets of %s)", err, k.source)
		}
		// The sender may sign with the deployment's keys themselves.
		if keys, derr := decodeAll(k.deployment); derr == nil && webhook.VerifyRequest(keys, r.Header, body, now, tolerance) == nil {
			return "", fmt.Errorf("%w for %s: it is signed with the signing secret itself, as a sender with HERALD_WEBHOOK_SECRET_SCOPE=shared signs; "+
				"give this listener the same setting", err, origin)
		}
		return "", fmt.Errorf("%w (the keys herald derives for %s from %s)", err, origin, k.source)
	}
	for _, s := range sets {
		if len(sets) == 1 || webhook.VerifyRequest(s.keys, r.Header, body, now, tolerance) == nil {
			return s.label, nil
		}
	}
	return sets[0].label, nil // unreachable: one of the sets verified
}
