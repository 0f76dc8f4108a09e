package statuspage

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"
)

// A sealed value is what the sign-in keeps in the browser: the session
// (who signed in, until when) and the OAuth state of a sign-in under way.
// It is base64url(JSON) "." base64url(HMAC-SHA256), keyed by a key derived
// from the OAuth client secret: replicas sharing the secret accept each
// other's cookies, and rotating it ends every session. It holds no secret:
// a login, a random nonce and an expiry on the server's clock.
type sealed struct {
	// Kind keeps a state cookie from serving as a session and back.
	Kind    string `json:"k"`
	Subject string `json:"s"`
	Expires int64  `json:"e"` // unix seconds
}

const (
	kindSession = "session"
	kindState   = "state"
)

// sessionKey derives the cookies' MAC key from the client secret.
func sessionKey(clientSecret string) []byte {
	m := hmac.New(sha256.New, []byte(clientSecret))
	m.Write([]byte("shardgate status page cookies v1"))
	return m.Sum(nil)
}

func mac(key []byte, payload string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(payload))
	return m.Sum(nil)
}

// seal signs v.
func seal(key []byte, v sealed) string {
	raw, _ := json.Marshal(v) // a struct of strings and an int: cannot fail
	payload := base64.RawURLEncoding.EncodeToString(raw)
	return payload + "." + base64.RawURLEncoding.EncodeToString(mac(key, payload))
}

// unseal returns the subject of a value sealed with key, of kind and not
// expired at now; ok is false for anything else (forged, tampered,
// expired, another kind, malformed).
func unseal(key []byte, value, kind string, now time.Time) (subject string, ok bool) {
	payload, sig, found := strings.Cut(value, ".")
	if !found {
		return "", false
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, mac(key, payload)) {
		return "", false
	}
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return "", false
	}
	var v sealed
	if err := json.Unmarshal(raw, &v); err != nil || v.Kind != kind || v.Subject == "" {
		return "", false
	}
	if !now.Before(time.Unix(v.Expires, 0)) {
		return "", false
	}
	return v.Subject, true
}
