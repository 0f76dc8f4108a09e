package coord_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/helpers"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/shardgate/shardgate/coord"
	"github.com/shardgate/shardgate/coord/coordsim"
)

const specPath = "../testdata/coordinator/openapi/coordinator.v1.quoted.yaml"

// exception excuses one known difference between the coordinator's behaviour
// (docs/coordinator.md, which the simulator follows) and the OpenAPI file.
type exception struct {
	name   string
	kind   string         // "response": a status the operation does not document; "request": a request the schema rejects
	method string         // "" = any
	path   *regexp.Regexp // matched against the URL path
	status int            // response status
	codes  []string       // errorCodes the body must carry; nil = no body (401/403)
	reason string
}

var (
	anyPath      = regexp.MustCompile(`^/coord/v1/`)
	streamsPath  = regexp.MustCompile(`^/coord/v1/streams/`)
	groupSubPath = regexp.MustCompile(`^/coord/v1/(monitoring/)?streams/[^/]+/groups/[^/]+(/.*)?$`)
	groupPathRe  = regexp.MustCompile(`^/coord/v1/streams/[^/]+/groups/[^/]+$`)
	rollbackRe   = regexp.MustCompile(`/migrations/[^/]+/rollback$`)
)

// contractExceptions is the ONE list of every accepted mismatch, with its reason.
// Everything else the validator reports fails the test.
//
// DIFFs the validator cannot see, so they need no entry: a same-count scale answers
// 202 with an unstored "noop" DEPRECATED migration (schema-valid); producer-routing
// needs READ, not WRITE (the file does not model roles); ROLLING_BACK is never set.
var contractExceptions = []exception{
	{name: "401 without body", kind: "response", path: anyPath, status: 401,
		reason: "Spring Security answers 401 with no body and WWW-Authenticate on every secured path; the file documents 401 only for login"},
	{name: "403 without body", kind: "response", path: anyPath, status: 403,
		reason: "Spring Security answers 403 with no body; the file documents no 403"},
	{name: "missing credentials", kind: "request", path: anyPath, status: 401,
		reason: "tests send requests without credentials on purpose to check the 401"},
	{name: "invalid body", kind: "request", path: streamsPath, status: 400, codes: []string{coord.CodeInvalidRequest},
		reason: "tests send invalid bodies on purpose; the coordinator must reject them with 400 INVALID_REQUEST"},
	{name: "400 on mutations", kind: "response", path: streamsPath, status: 400, codes: []string{coord.CodeInvalidRequest},
		reason: "bean validation gives 400 INVALID_REQUEST (coordinator.md §1); the file documents no 400"},
	{name: "delete with live members", kind: "response", method: http.MethodDelete, path: groupPathRe, status: 409,
		codes:  []string{coord.CodeGroupHasActiveMembers},
		reason: "DIFF: the code answers 409 GROUP_HAS_ACTIVE_MEMBERS, the docs and the file say 422"},
	{name: "404 on group reads and writes", kind: "response", path: groupSubPath, status: 404,
		codes:  []string{coord.CodeGroupNotFound, coord.CodeMigrationNotFound},
		reason: "every group-scoped endpoint answers 404 GROUP_NOT_FOUND / MIGRATION_NOT_FOUND (coordinator.md §1); the file documents 404 only on get group and stream scale"},
	{name: "rollback refused", kind: "response", method: http.MethodPost, path: rollbackRe, status: 422,
		codes:  []string{coord.CodeRollbackNotAllowed},
		reason: "rollback of a migration that is not ACTIVE gives 422 ROLLBACK_NOT_ALLOWED (coordinator.md §2); the file documents only 202"},
	{name: "retryable 409 on mutations", kind: "response", path: streamsPath, status: 409,
		codes:  []string{coord.CodeStateVersionConflict},
		reason: "any mutation can answer 409 STATE_VERSION_CONFLICT (coordinator.md §1); the file lists it on no operation that lacks a 409"},
	{name: "429 rate limit", kind: "response", path: anyPath, status: 429, codes: []string{coord.CodeRateLimitExceeded},
		reason: "the rate limiter answers 429 RATE_LIMIT_EXCEEDED with Retry-After on any mutation; the file documents no 429"},
	{name: "503 unavailable", kind: "response", path: anyPath, status: 503,
		codes:  []string{coord.CodeCoordinatorTerminating, coord.CodeStateMutexUnavailable, coord.CodeProvisioningFailed},
		reason: "any mutation can answer 503 COORDINATOR_TERMINATING / COORDINATOR_STATE_MUTEX_UNAVAILABLE, and scale 503 REDIS_STREAM_PROVISIONING_FAILED (coordinator.md §1); the file documents no 503"},
}

// nullableAs31 is the one adjustment made to the file before validating: it
// uses the OpenAPI 3.0 keyword `nullable: true` inside a 3.1 document, which a
// strict 3.1 validator refuses to compile. It is rewritten to its intended 3.1
// meaning, `type: [T, "null"]` (e.g. MigrationsResponse.activeReshardingId is
// null when no migration is active, coordinator.md §1).
func nullableAs31(spec []byte) ([]byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(spec, &root); err != nil {
		return nil, fmt.Errorf("parse spec: %w", err)
	}
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode {
			var typeNode *yaml.Node
			nullable := -1
			for i := 0; i+1 < len(n.Content); i += 2 {
				switch n.Content[i].Value {
				case "type":
					typeNode = n.Content[i+1]
				case "nullable":
					nullable = i
				}
			}
			if nullable >= 0 {
				if n.Content[nullable+1].Value == "true" && typeNode != nil && typeNode.Kind == yaml.ScalarNode {
					t := typeNode.Value
					*typeNode = yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle, Content: []*yaml.Node{
						{Kind: yaml.ScalarNode, Value: t},
						{Kind: yaml.ScalarNode, Value: "null", Style: yaml.DoubleQuotedStyle},
					}}
				}
				n.Content = append(n.Content[:nullable], n.Content[nullable+2:]...)
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(&root)
	return yaml.Marshal(&root)
}

func (e exception) matches(kind, method, path string, status int, code string, hasBody bool) bool {
	if e.kind != kind || e.status != status || (e.method != "" && e.method != method) || !e.path.MatchString(path) {
		return false
	}
	if e.codes == nil {
		return kind == "request" || !hasBody
	}
	for _, c := range e.codes {
		if c == code {
			return true
		}
	}
	return false
}

var (
	specOnce sync.Once
	specDoc  libopenapi.Document
	specErr  error
)

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
		specDoc, specErr = libopenapi.NewDocument(b)
	})
	require.NoError(t, specErr)
	v, errs := validator.NewValidator(specDoc)
	require.Empty(t, errs)
	return v
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
	clock  *coordsim.FakeClock
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
	clock := coordsim.NewFakeClock(time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC))
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
