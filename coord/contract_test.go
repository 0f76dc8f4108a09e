package coord_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/helpers"
	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/coord"
	"github.com/shardgate/shardgate/coord/coordsim"
	"github.com/shardgate/shardgate/internal/fakeclock"
)

const specPath = "../testdata/coordinator/openapi/coordinator.v1.quoted.yaml"

var (
	specOnce      sync.Once
	specValidator validator.Validator
	specErr       error
)

// loadSpec builds the validator once: warming its schema cache is the slow part.
// Tests do not run in parallel, and each contractTransport serialises its own
// calls, so sharing it is safe.
func loadSpec(t *testing.T) validator.Validator {
	t.Helper()
	specOnce.Do(func() {
		b, err := os.ReadFile(specPath)
		if err != nil {
			specErr = err
			return
		}
		if b, specErr = nullableAs31(b); specErr != nil {
			return
		}
		doc, err := libopenapi.NewDocument(b)
		if err != nil {
			specErr = err
			return
		}
		v, errs := validator.NewValidator(doc)
		if len(errs) > 0 {
			specErr = errors.Join(errs...)
			return
		}
		specValidator = v
	})
	require.NoError(t, specErr)
	return specValidator
}

// contractTransport validates every request the client sends and every response
// the simulator gives against the OpenAPI file, minus contractExceptions.
type contractTransport struct {
	v        validator.Validator
	next     http.RoundTripper
	mu       sync.Mutex
	problems []string
	checked  int
}

func (ct *contractTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var reqBody []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		reqBody = b
		req.Body = io.NopCloser(bytes.NewReader(b))
	}
	resp, err := ct.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	respBody, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(respBody))
	ct.check(req, reqBody, resp, respBody)
	return resp, nil
}

func (ct *contractTransport) check(req *http.Request, reqBody []byte, resp *http.Response, respBody []byte) {
	clone := func() *http.Request {
		r := req.Clone(req.Context())
		r.Body = io.NopCloser(bytes.NewReader(reqBody))
		return r
	}
	var eb coord.ErrorBody
	hasBody := len(bytes.TrimSpace(respBody)) > 0
	if hasBody && resp.StatusCode >= 400 {
		if err := json.Unmarshal(respBody, &eb); err != nil || eb.ErrorCode == "" || eb.Status == "" || eb.Message == "" {
			ct.report("%s %s -> %d: error body is not {status, errorCode, message}: %s", req.Method, req.URL.Path, resp.StatusCode, respBody)
		}
	}
	ct.mu.Lock()
	defer ct.mu.Unlock()
	ct.checked++
	if _, errs := ct.v.ValidateHttpRequest(clone()); len(errs) > 0 {
		for _, e := range errs {
			if !ct.excused("request", req, resp.StatusCode, eb.ErrorCode, hasBody) {
				ct.problems = append(ct.problems, fmt.Sprintf("request %s %s (answered %d): %s: %s", req.Method, req.URL.Path, resp.StatusCode, e.Message, e.Reason))
			}
		}
	}
	r := &http.Response{StatusCode: resp.StatusCode, Header: resp.Header, Body: io.NopCloser(bytes.NewReader(respBody)), Request: req}
	if _, errs := ct.v.ValidateHttpResponse(clone(), r); len(errs) > 0 {
		for _, e := range errs {
			undocumented := e.ValidationSubType == helpers.ResponseBodyResponseCode
			if undocumented && ct.excused("response", req, resp.StatusCode, eb.ErrorCode, hasBody) {
				continue
			}
			ct.problems = append(ct.problems, fmt.Sprintf("response %s %s -> %d: %s: %s (body %s)", req.Method, req.URL.Path, resp.StatusCode, e.Message, e.Reason, respBody))
		}
	}
}

func (ct *contractTransport) excused(kind string, req *http.Request, status int, code string, hasBody bool) bool {
	for _, e := range contractExceptions {
		if e.matches(kind, req.Method, req.URL.Path, status, code, hasBody) {
			return true
		}
	}
	return false
}

func (ct *contractTransport) report(format string, args ...any) {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	ct.problems = append(ct.problems, fmt.Sprintf(format, args...))
}

// env is one simulator on httptest plus a contract-checked client.
type env struct {
	sim    *coordsim.Sim
	clock  *fakeclock.Clock
	srv    *httptest.Server
	client *coord.Client
	ct     *contractTransport

	mu   sync.Mutex
	seen []seenRequest
}

// seenRequest is what the server received, for retry and secrecy checks.
type seenRequest struct{ method, path, requestID, auth string }

// requests returns the requests received so far for one method and path.
func (e *env) requests(method, path string) []seenRequest {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []seenRequest
	for _, r := range e.seen {
		if r.method == method && r.path == path {
			out = append(out, r)
		}
	}
	return out
}

func newEnv(t *testing.T, simOpts []coordsim.Option, clientOpts ...coord.Option) *env {
	t.Helper()
	clock := fakeclock.New(time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC))
	sim := coordsim.New(append([]coordsim.Option{coordsim.WithClock(clock)}, simOpts...)...)
	e := &env{sim: sim, clock: clock, ct: &contractTransport{v: loadSpec(t), next: http.DefaultTransport}}
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		e.seen = append(e.seen, seenRequest{method: r.Method, path: r.URL.Path, requestID: r.Header.Get("X-Request-Id"), auth: r.Header.Get("Authorization")})
		e.mu.Unlock()
		sim.ServeHTTP(w, r)
	}))
	t.Cleanup(e.srv.Close)
	e.client = e.newClient(t, append([]coord.Option{coord.WithBasicAuth("admin", "password")}, clientOpts...)...)
	t.Cleanup(func() {
		e.ct.mu.Lock()
		defer e.ct.mu.Unlock()
		require.Empty(t, e.ct.problems, "contract mismatches:\n%s", strings.Join(e.ct.problems, "\n"))
	})
	return e
}

// newClient returns another contract-checked client of the same simulator.
func (e *env) newClient(t *testing.T, opts ...coord.Option) *coord.Client {
	t.Helper()
	base := []coord.Option{
		coord.WithHTTPClient(&http.Client{Transport: e.ct}),
		coord.WithRetry(4, time.Millisecond),
		coord.WithPollInterval(time.Millisecond),
	}
	c, err := coord.New(e.srv.URL, append(base, opts...)...)
	require.NoError(t, err)
	return c
}

// ticks runs n simulator ticks.
func (e *env) ticks(n int) {
	for i := 0; i < n; i++ {
		e.clock.Advance(time.Second)
		e.sim.Tick()
	}
}

func TestContractSpecLoads(t *testing.T) {
	v := loadSpec(t)
	require.NotNil(t, v)
}

// TestContractTransportReportsMismatches proves the checker can fail: a fake
// coordinator that breaks the contract in ways no exception covers.
func TestContractTransportReportsMismatches(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		want   string
	}{
		{name: "bad enum in a documented response", status: 200,
			body: `{"streamPrefix":"p","consumerGroup":"g","state":"BOGUS","groupEpoch":1,"assignmentEpoch":1,"metadataVersion":1,"shardCount":1}`,
			want: "response GET"},
		{name: "missing required field", status: 200, body: `{"streamPrefix":"p"}`, want: "response GET"},
		{name: "undocumented status with an unexcused code", status: 409,
			body: `{"status":"CONFLICT","errorCode":"SOMETHING_ELSE","message":"x"}`, want: "does not exist"},
		{name: "error body without errorCode", status: 404, body: `{"message":"x"}`, want: "error body"},
		{name: "401 with a body", status: 401,
			body: `{"status":"UNAUTHORIZED","errorCode":"UNAUTHORIZED","message":"x"}`, want: "does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tt.status)
				_, _ = io.WriteString(w, tt.body)
			}))
			defer srv.Close()
			ct := &contractTransport{v: loadSpec(t), next: http.DefaultTransport}
			c, err := coord.New(srv.URL, coord.WithHTTPClient(&http.Client{Transport: ct}), coord.WithBasicAuth("a", "b"), coord.WithRetry(1, 0))
			require.NoError(t, err)
			_, _ = c.Group(t.Context(), "p", "g")
			require.NotEmpty(t, ct.problems)
			require.Contains(t, strings.Join(ct.problems, "\n"), tt.want)
		})
	}
}

// serverSide validates every request a non-Go caller (apply.sh's curl) sends and
// every answer it gets, with the same exceptions as contractTransport.
func (ct *contractTransport) serverSide(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			ct.report("read request body: %v", err)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		resp := rec.Result()
		respBody := rec.Body.Bytes()
		check := r.Clone(r.Context())
		check.URL.Scheme, check.URL.Host = "http", r.Host
		ct.check(check, body, resp, respBody)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(respBody)
	})
}
