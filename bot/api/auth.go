package api

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"strings"

	"github.com/shardgate/shardgate/bot/server/serverconfig"
)

// token is a configured token as the API keeps it: its digest, compared in
// constant time, never the token itself.
type token struct {
	Name, Scope string
	digest      [sha256.Size]byte
}

type tokens []token

func newTokens(cfg []serverconfig.APIToken) tokens {
	out := make(tokens, 0, len(cfg))
	for _, t := range cfg {
		if t.Token.Empty() {
			continue
		}
		out = append(out, token{Name: t.Name, Scope: t.Scope, digest: sha256.Sum256([]byte(t.Token.Reveal()))})
	}
	return out
}

// find is the token an Authorization header carries. Every configured token
// is compared, in constant time on digests of equal length, whatever matched
// earlier: how long it takes tells nothing of which one matched, or how much
// of one.
func (ts tokens) find(header string) (token, bool) {
	scheme, value, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || value == "" {
		return token{}, false
	}
	got := sha256.Sum256([]byte(strings.TrimSpace(value)))
	var found token
	match := 0
	for _, t := range ts {
		eq := subtle.ConstantTimeCompare(got[:], t.digest[:])
		if eq == 1 && match == 0 {
			found = t
		}
		match |= eq
	}
	return found, match == 1
}

type tokenKey struct{}

func withToken(ctx context.Context, t token) context.Context {
	return context.WithValue(ctx, tokenKey{}, t)
}

// tokenOf is the request's authenticated token.
func tokenOf(ctx context.Context) token {
	t, _ := ctx.Value(tokenKey{}).(token)
	return t
}
