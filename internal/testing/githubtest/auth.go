package githubtest

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// jwtLeeway is the clock skew tolerated on iat/exp, like GitHub's.
const jwtLeeway = 60 * time.Second

// InstallationToken mints a token for an installation directly, for tests
// that build a client without going through the App JWT flow.
func (s *Server) InstallationToken(installationID int64) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	tok, _ := s.issueToken(installationID)
	return tok
}

func (s *Server) issueToken(installationID int64) (string, time.Time) {
	b := make([]byte, 20)
	_, _ = rand.Read(b)
	tok := "ghs_" + hex.EncodeToString(b)
	exp := s.credentialNow().Add(s.tokenTTL).UTC().Truncate(time.Second)
	s.tokens[tok] = issuedToken{installationID: installationID, expiresAt: exp}
	return tok, exp
}

func requiresAuth() reply {
	return reply{status: http.StatusUnauthorized, body: errorBody("Requires authentication")}
}

func badCredentials() reply {
	return reply{status: http.StatusUnauthorized, body: errorBody("Bad credentials")}
}

// authenticateInstallation accepts "token X" and "Bearer X" with an
// unexpired installation token; callers hold s.mu.
func (s *Server) authenticateInstallation(r *http.Request) (int64, reply, bool) {
	scheme, cred, found := strings.Cut(r.Header.Get("Authorization"), " ")
	if !found || (!strings.EqualFold(scheme, "token") && !strings.EqualFold(scheme, "bearer")) {
		return 0, requiresAuth(), false
	}
	tok, ok := s.tokens[strings.TrimSpace(cred)]
	if !ok || !s.credentialNow().Before(tok.expiresAt) {
		return 0, badCredentials(), false
	}
	return tok.installationID, reply{}, true
}

// authenticateApp requires an RS256 JWT signed with the App key and issued
// by the App id, as the access_tokens endpoint does.
func (s *Server) authenticateApp(r *http.Request) (reply, bool) {
	scheme, cred, found := strings.Cut(r.Header.Get("Authorization"), " ")
	if !found || !strings.EqualFold(scheme, "bearer") {
		return requiresAuth(), false
	}
	if err := s.verifyJWT(strings.TrimSpace(cred)); err != nil {
		s.t.Logf("githubtest: app JWT rejected: %v", err)
		return reply{status: http.StatusUnauthorized, body: errorBody("A JSON web token could not be decoded")}, false
	}
	return reply{}, true
}

var errBadJWT = errors.New("bad jwt")

func (s *Server) verifyJWT(token string) error {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return fmt.Errorf("split token: %w", errBadJWT)
	}
	var header struct {
		Alg string `json:"alg"`
	}
	if err := decodeSegment(parts[0], &header); err != nil {
		return fmt.Errorf("decode header: %w", err)
	}
	if header.Alg != "RS256" {
		return fmt.Errorf("alg %q: %w", header.Alg, errBadJWT)
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return fmt.Errorf("decode signature: %w", err)
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(&s.appKey.PublicKey, crypto.SHA256, digest[:], sig); err != nil {
		return fmt.Errorf("verify signature: %w", err)
	}
	var claims struct {
		Iss json.RawMessage `json:"iss"`
		Iat int64           `json:"iat"`
		Exp int64           `json:"exp"`
	}
	if err := decodeSegment(parts[1], &claims); err != nil {
		return fmt.Errorf("decode claims: %w", err)
	}
	// GitHub accepts the App id as a JSON string or number.
	iss := strings.Trim(string(claims.Iss), `"`)
	if iss != strconv.FormatInt(s.appID, 10) {
		return fmt.Errorf("issuer %q: %w", iss, errBadJWT)
	}
	now := s.credentialNow() // not s.now: see WithCredentialClock
	if claims.Exp == 0 || now.After(time.Unix(claims.Exp, 0).Add(jwtLeeway)) {
		return fmt.Errorf("expired: %w", errBadJWT)
	}
	if time.Unix(claims.Iat, 0).After(now.Add(jwtLeeway)) {
		return fmt.Errorf("issued in the future: %w", errBadJWT)
	}
	if time.Unix(claims.Exp, 0).Sub(time.Unix(claims.Iat, 0)) > 10*time.Minute {
		return fmt.Errorf("lifetime over 10 minutes: %w", errBadJWT)
	}
	return nil
}

func decodeSegment(seg string, v any) error {
	raw, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		return fmt.Errorf("decode segment: %w", err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("decode segment: %w", err)
	}
	return nil
}

// createInstallationToken serves POST /app/installations/{id}/access_tokens.
func createInstallationToken(s *Server, c *call) reply {
	id, err := strconv.ParseInt(c.params["installation_id"], 10, 64)
	if err != nil || id <= 0 {
		return notFound()
	}
	tok, exp := s.issueToken(id)
	body := s.spec.skeleton("installation-token")
	body["token"] = tok
	body["expires_at"] = exp.Format(time.RFC3339)
	body["repository_selection"] = "all"
	body["permissions"] = map[string]any{
		"checks": "write", "contents": "read", "issues": "write",
		"metadata": "read", "pull_requests": "write", "statuses": "write", "members": "read",
	}
	return created(body)
}
