package redact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// Transport scrubs every secret from the bodies shardgate sends to
// GitHub: comments, check runs, replies, whatever code path wrote them. It is
// the last wall before GitHub; the writers redact their own texts first.
// JSON bodies are redacted string by string and encoded again, so a secret
// holding quotes or backslashes cannot leave half an escape behind.
type Transport struct {
	next http.RoundTripper
	r    *Redactor
}

// NewTransport returns a transport redacting r's secrets from the bodies of
// the requests it passes on to next.
func NewTransport(next http.RoundTripper, r *Redactor) *Transport {
	return &Transport{next: next, r: r}
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body == nil || req.Body == http.NoBody || t.r.Empty() {
		return t.next.RoundTrip(req)
	}
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("read request body: %w", err)
	}
	body = t.r.body(body)
	out := req.Clone(req.Context())
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.ContentLength = int64(len(body))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return t.next.RoundTrip(out)
}

// body redacts a request body: a JSON document value by value, anything else
// as text.
func (r *Redactor) body(b []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // ids stay exact
	var doc any
	if err := dec.Decode(&doc); err != nil || dec.More() {
		return []byte(r.Redact(string(b)))
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r.jsonValue(doc)); err != nil {
		return []byte(r.Redact(string(b)))
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// jsonValue redacts every string (keys too) of a decoded JSON value.
func (r *Redactor) jsonValue(v any) any {
	switch v := v.(type) {
	case string:
		return r.Redact(v)
	case []any:
		for i := range v {
			v[i] = r.jsonValue(v[i])
		}
		return v
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[r.Redact(k)] = r.jsonValue(e)
		}
		return out
	}
	return v
}
