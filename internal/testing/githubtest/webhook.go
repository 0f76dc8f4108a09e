package githubtest

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/shardgate/shardgate"
)

// HookshotUserAgent is the User-Agent GitHub sends webhooks with.
const HookshotUserAgent = "GitHub-Hookshot/5a0e3b1"

// Webhook loads the real payload testdata/github/webhooks/<event>/<fixture>.json,
// lets mutate change the fields that differ in the test, and returns the body.
func Webhook(t TB, event, fixture string, mutate func(payload map[string]any)) []byte {
	t.Helper()
	return webhookFrom(t, path.Join("webhooks", event, fixture+".json"), mutate)
}

func webhookFrom(t TB, rel string, mutate func(map[string]any)) []byte {
	t.Helper()
	raw, err := fs.ReadFile(shardgate.GitHubFixtures(), rel)
	if err != nil {
		t.Fatalf("githubtest: read webhook fixture: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // keep 64-bit ids exact
	var payload map[string]any
	if err := dec.Decode(&payload); err != nil {
		t.Fatalf("githubtest: decode webhook fixture %s: %v", rel, err)
	}
	if mutate != nil {
		mutate(payload)
	}
	body, err := encodeBody(payload)
	if err != nil {
		t.Fatalf("githubtest: encode webhook %s: %v", rel, err)
	}
	return bytes.TrimSuffix(body, []byte("\n"))
}

// Set assigns value at a dot-separated path of a payload, creating objects
// on the way ("pull_request.head.sha").
func Set(payload map[string]any, path string, value any) {
	keys := strings.Split(path, ".")
	m := payload
	for _, k := range keys[:len(keys)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[keys[len(keys)-1]] = value
}

// Sign is GitHub's X-Hub-Signature-256 value for body.
func Sign(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// DeliveryOption changes how Deliver sends a webhook.
type DeliveryOption func(*delivery)

type delivery struct {
	id        string
	signature *string
}

// WithDeliveryID sets X-GitHub-Delivery, to send a redelivery.
func WithDeliveryID(id string) DeliveryOption { return func(d *delivery) { d.id = id } }

// WithSignature sends sig instead of the correct signature; "" sends none.
func WithSignature(sig string) DeliveryOption { return func(d *delivery) { d.signature = &sig } }

// NewDeliveryID returns a random UUID like GitHub's delivery ids.
func NewDeliveryID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// Deliver POSTs a webhook to url with GitHub's headers, signed with secret.
// The caller closes the response body.
func Deliver(url, event string, body []byte, secret string, opts ...DeliveryOption) (*http.Response, error) {
	d := delivery{id: NewDeliveryID()}
	for _, o := range opts {
		o(&d)
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("build delivery: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", HookshotUserAgent)
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", d.id)
	req.Header.Set("X-GitHub-Hook-ID", "292430182")
	sig := Sign(secret, body)
	if d.signature != nil {
		sig = *d.signature
	}
	if sig != "" {
		req.Header.Set("X-Hub-Signature-256", sig)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("deliver %s: %w", event, err)
	}
	return resp, nil
}
