package githubtest

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v60/github"
	"github.com/shardgate/shardgate/internal/fakeclock"
	"github.com/stretchr/testify/require"
)

func TestGhinstallationAuthenticatesEndToEnd(t *testing.T) {
	gh := New(t)
	_, pr := newRepoWithPR(t, gh)
	itr, err := ghinstallation.New(http.DefaultTransport, gh.AppID(), DefaultInstallationID, gh.AppPrivateKeyPEM())
	require.NoError(t, err)
	itr.BaseURL = strings.TrimSuffix(gh.URL(), "/")
	client := github.NewClient(&http.Client{Transport: itr})
	client.BaseURL, err = url.Parse(gh.URL())
	require.NoError(t, err)

	_, _, err = client.Issues.CreateComment(context.Background(), "acme", "infra", pr.Number, &github.IssueComment{Body: github.String("hi")})
	require.NoError(t, err)

	var tokenCalls, commentCalls int
	for _, r := range gh.Requests() {
		switch {
		case r.Path == "/app/installations/1/access_tokens":
			tokenCalls++
			require.Equal(t, 201, r.Status)
		case strings.HasSuffix(r.Path, "/comments"):
			commentCalls++
			require.Equal(t, 201, r.Status)
			require.Equal(t, DefaultInstallationID, r.InstallationID)
		}
	}
	require.Equal(t, 1, tokenCalls)
	require.Equal(t, 1, commentCalls)
}

func TestAppsCreateInstallationToken(t *testing.T) {
	gh := New(t)
	newRepoWithPR(t, gh)
	atr, err := ghinstallation.NewAppsTransport(http.DefaultTransport, gh.AppID(), gh.AppPrivateKeyPEM())
	require.NoError(t, err)
	app := github.NewClient(&http.Client{Transport: atr})
	app.BaseURL, err = url.Parse(gh.URL())
	require.NoError(t, err)

	tok, _, err := app.Apps.CreateInstallationToken(context.Background(), DefaultInstallationID, nil)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(tok.GetToken(), "ghs_"))
	require.WithinDuration(t, time.Now().Add(DefaultTokenTTL), tok.GetExpiresAt().Time, time.Minute)

	client := github.NewClient(&http.Client{Transport: tokenTransport{token: tok.GetToken()}})
	client.BaseURL = app.BaseURL
	_, _, err = client.PullRequests.Get(context.Background(), "acme", "infra", 1)
	require.NoError(t, err)
}

func signJWT(t *testing.T, key *rsa.PrivateKey, alg string, claims map[string]any) string {
	t.Helper()
	enc := func(v any) string {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	signing := enc(map[string]any{"alg": alg, "typ": "JWT"}) + "." + enc(claims)
	digest := sha256.Sum256([]byte(signing))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, digest[:])
	require.NoError(t, err)
	return signing + "." + base64.RawURLEncoding.EncodeToString(sig)
}

func TestAccessTokenRejectsBadJWTs(t *testing.T) {
	gh := New(t)
	appKey, err := appKey()
	require.NoError(t, err)
	otherKey, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	now := time.Now().Unix()
	valid := map[string]any{"iss": gh.AppID(), "iat": now - 30, "exp": now + 300}
	with := func(k string, v any) map[string]any {
		c := map[string]any{}
		for kk, vv := range valid {
			c[kk] = vv
		}
		c[k] = v
		return c
	}
	tests := []struct {
		name   string
		header string
		want   int
	}{
		{"valid", "Bearer " + signJWT(t, appKey, "RS256", valid), 201},
		{"issuer as string", "Bearer " + signJWT(t, appKey, "RS256", with("iss", "4242")), 201},
		{"no authorization", "", 401},
		{"installation token scheme", "token " + gh.InstallationToken(1), 401},
		{"signed by another key", "Bearer " + signJWT(t, otherKey, "RS256", valid), 401},
		{"other app id", "Bearer " + signJWT(t, appKey, "RS256", with("iss", 7)), 401},
		{"expired", "Bearer " + signJWT(t, appKey, "RS256", with("exp", now-600)), 401},
		{"lifetime over ten minutes", "Bearer " + signJWT(t, appKey, "RS256", with("exp", now+3600)), 401},
		{"alg none", "Bearer " + signJWT(t, appKey, "none", valid), 401},
		{"garbage", "Bearer not.a.jwt", 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, gh.URL()+"app/installations/5/access_tokens", nil)
			require.NoError(t, err)
			if tt.header != "" {
				req.Header.Set("Authorization", tt.header)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			require.NoError(t, resp.Body.Close())
			require.Equal(t, tt.want, resp.StatusCode)
		})
	}
}

func TestInstallationTokenChecks(t *testing.T) {
	clock := fakeclock.New(time.Date(2026, 11, 30, 7, 0, 0, 0, time.UTC))
	now := clock.Now()
	gh := New(t, WithCredentialClock(clock.Now), WithTokenTTL(time.Hour))
	newRepoWithPR(t, gh)
	tok := gh.InstallationToken(DefaultInstallationID)
	tests := []struct {
		name   string
		header string
		at     time.Time
		want   int
	}{
		{"token scheme", "token " + tok, now, 200},
		{"bearer scheme", "Bearer " + tok, now, 200},
		{"missing", "", now, 401},
		{"unknown token", "token ghs_nope", now, 401},
		{"expired", "token " + tok, now.Add(2 * time.Hour), 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock.Set(tt.at)
			req, err := http.NewRequest(http.MethodGet, gh.URL()+"repos/acme/infra/pulls/1", nil)
			require.NoError(t, err)
			if tt.header != "" {
				req.Header.Set("Authorization", tt.header)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			require.NoError(t, resp.Body.Close())
			require.Equal(t, tt.want, resp.StatusCode)
		})
	}
}
