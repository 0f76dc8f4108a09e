// Package apitest checks the automation API's answers against its OpenAPI
// document (docs/api.openapi.yaml) with libopenapi-validator: a client
// whose every request and answer must match it, or the test fails.
package apitest

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/stretchr/testify/require"
)

var (
	once    sync.Once
	shared  validator.Validator
	loadErr error
	mu      sync.Mutex // the validator's caches are not safe for concurrent use
)

// SpecPath is the document, found from this file's place in the module.
func SpecPath() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "docs", "api.openapi.yaml")
}

func load(t testing.TB) validator.Validator {
	t.Helper()
	once.Do(func() {
		b, err := os.ReadFile(SpecPath())
		if err != nil {
			loadErr = err
			return
		}
		doc, err := libopenapi.NewDocument(b)
		if err != nil {
			loadErr = err
			return
		}
		v, errs := validator.NewValidator(doc)
		if len(errs) > 0 {
			loadErr = fmt.Errorf("build the validator: %v", errs)
			return
		}
		if ok, verrs := v.ValidateDocument(); !ok {
			loadErr = fmt.Errorf("docs/api.openapi.yaml is not a valid OpenAPI document: %v", verrs)
			return
		}
		shared = v
	})
	require.NoError(t, loadErr)
	return shared
}

// Client is an HTTP client for the API at base ("http://host:port") whose
// every exchange is checked against the document.
type Client struct {
	t       testing.TB
	base    string
	v       validator.Validator
	Checked int
}

// New returns a Client for base.
func New(t testing.TB, base string) *Client { return &Client{t: t, base: base, v: load(t)} }

// Response is one checked answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Do sends method path (with its query) with the bearer token (none when
// ""), checks the request and the answer against the document, and returns
// the answer.
func (c *Client) Do(method, path, token string) Response {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, nil)
	require.NoError(c.t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(c.t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(c.t, err)
	mu.Lock()
	defer mu.Unlock()
	c.Checked++
	check := func() *http.Request {
		r := req.Clone(req.Context())
		r.Body = http.NoBody
		return r
	}
	if resp.StatusCode < 300 {
		// A request the API accepted must be one the document allows (the
		// refused ones are the tests' bad input, on purpose).
		if ok, errs := c.v.ValidateHttpRequest(check()); !ok {
			c.t.Errorf("request %s %s does not match docs/api.openapi.yaml:\n%s", method, path, describe(errs))
		}
	}
	r := &http.Response{StatusCode: resp.StatusCode, Header: resp.Header, Body: io.NopCloser(bytes.NewReader(body)), Request: req}
	if ok, errs := c.v.ValidateHttpResponse(check(), r); !ok {
		c.t.Errorf("answer %d to %s %s does not match docs/api.openapi.yaml:\n%s\nbody: %s", resp.StatusCode, method, path, describe(errs), body)
	}
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: body}
}

func describe[E interface{ Error() string }](errs []E) string {
	var lines []string
	for _, e := range errs {
		lines = append(lines, "  "+e.Error())
	}
	return strings.Join(lines, "\n")
}
