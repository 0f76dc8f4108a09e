package githubtest

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/getkin/kin-openapi/routers"
)

// Defaults of a new Server.
const (
	DefaultAppID          int64 = 4242
	DefaultBotLogin             = "shardgate[bot]"
	DefaultInstallationID int64 = 1 // the installation id of the octokit fixtures
	DefaultTokenTTL             = time.Hour
	maxRequestBody              = 32 << 20
)

// Option tunes a Server.
type Option func(*Server)

// WithAppID sets the GitHub App id JWTs must carry as issuer.
func WithAppID(id int64) Option { return func(s *Server) { s.appID = id } }

// WithBotLogin sets the login comments and labels made through the API are
// attributed to.
func WithBotLogin(login string) Option { return func(s *Server) { s.botLogin = login } }

// WithTokenTTL sets the lifetime of installation tokens.
func WithTokenTTL(d time.Duration) Option { return func(s *Server) { s.tokenTTL = d } }

// WithClock replaces time.Now for timestamps, rate limits and the Date
// header: GitHub's clock as the code under test sees it. Credentials keep
// the real time (WithCredentialClock).
func WithClock(now func() time.Time) Option { return func(s *Server) { s.now = now } }

// WithCredentialClock replaces time.Now for the App JWT's iat/exp checks and
// installation tokens' expires_at and expiry. It stays the real time unless
// a test of those checks sets it: GitHub checks credentials against its real
// clock, and ghinstallation (a library, outside any injected clock) signs
// JWTs and decides when to refresh an installation token by the wall clock,
// so a fake clock moved away from today (SHARDGATE_FAKECLOCK_SHIFT) must not
// reject its JWTs or hand it tokens it deems expired (re-fetched per call).
func WithCredentialClock(now func() time.Time) Option {
	return func(s *Server) { s.credentialNow = now }
}

// Server is the fake GitHub. It is safe for concurrent use.
type Server struct {
	t        TB
	spec     *spec
	srv      *httptest.Server
	appID    int64
	appKey   *rsa.PrivateKey
	keyPEM   []byte
	botLogin string
	tokenTTL time.Duration
	now      func() time.Time
	// credentialNow checks JWTs and installation tokens: the real time
	// (WithCredentialClock says why)
	credentialNow func() time.Time

	mu        sync.Mutex
	nextID    int64
	userIDs   map[string]int64
	repos     map[string]*repo
	tokens    map[string]issuedToken
	teams     map[string]map[string]bool
	faults    []fault
	hangs     chan struct{} // closed by ReleaseHangs
	closed    chan struct{} // closed by Close
	closeOnce sync.Once
	requests  []Recorded
	downloads map[string]download
	// manifestApps are the Apps registered through the manifest flow
	manifestApps []*ManifestApp
	oauth        *oauthState // the App's user sign-in (oauth.go)

	limits             *RateLimits // nil: none enforced
	installationLimits map[int64]*installationLimits
}

type issuedToken struct {
	installationID int64
	expiresAt      time.Time
}

var (
	appKeyOnce sync.Once
	appKeyVal  *rsa.PrivateKey
	appKeyErr  error
)

// appKey is shared by every Server of the test binary: generating a 2048-bit
// key per test costs more than the tests themselves.
func appKey() (*rsa.PrivateKey, error) {
	appKeyOnce.Do(func() {
		appKeyVal, appKeyErr = rsa.GenerateKey(rand.Reader, 2048)
		if appKeyErr != nil {
			appKeyErr = fmt.Errorf("generate app key: %w", appKeyErr)
		}
	})
	return appKeyVal, appKeyErr
}

// New starts a fake GitHub closed when the test ends.
func New(t TB, opts ...Option) *Server {
	t.Helper()
	sp, err := loadSpec()
	if err != nil {
		t.Fatalf("githubtest: %v", err)
	}
	key, err := appKey()
	if err != nil {
		t.Fatalf("githubtest: %v", err)
	}
	s := &Server{
		t:        t,
		spec:     sp,
		appID:    DefaultAppID,
		appKey:   key,
		botLogin: DefaultBotLogin,
		tokenTTL: DefaultTokenTTL,
		now:      time.Now,

		credentialNow: time.Now,
		nextID:        1000,
		userIDs:       map[string]int64{},
		repos:         map[string]*repo{},
		tokens:        map[string]issuedToken{},
		teams:         map[string]map[string]bool{},
		hangs:         make(chan struct{}),
		closed:        make(chan struct{}),

		installationLimits: map[int64]*installationLimits{},
	}
	s.keyPEM = pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	for _, o := range opts {
		o(s)
	}
	s.srv = httptest.NewServer(s)
	t.Cleanup(s.Close)
	return s
}

// URL is the API base URL, ending in "/": use it as go-github's BaseURL.
func (s *Server) URL() string { return s.srv.URL + "/" }

// Close stops the server; it is also called when the test ends.
func (s *Server) Close() {
	s.closeOnce.Do(func() { close(s.closed) }) // held requests end first
	s.srv.Close()
}

// AppID is the App id the fake expects in JWTs.
func (s *Server) AppID() int64 { return s.appID }

// AppPrivateKeyPEM is the App's private key (PKCS#1 PEM), as GitHub hands it
// out, for ghinstallation.
func (s *Server) AppPrivateKeyPEM() []byte { return bytes.Clone(s.keyPEM) }

// BotLogin is the login of the App's bot user.
func (s *Server) BotLogin() string { return s.botLogin }

// call is one validated request as the handlers see it.
type call struct {
	r              *http.Request
	route          *routers.Route
	params         map[string]string
	body           []byte
	installationID int64
	userLogin      string    // the user of a user access token (oauth.go)
	limit          limitSeen // what the rate limits said of it
}

// reply is a handler's answer; body is JSON-encoded unless nil.
type reply struct {
	status int
	body   any
	header http.Header
	raw    []byte // body already encoded (conditional); nil: encode body
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBody))
	if err != nil {
		s.t.Errorf("githubtest: read request body of %s %s: %v", r.Method, r.URL.Path, err)
		writeJSON(w, reply{status: http.StatusBadRequest, body: errorBody("Problems parsing JSON")})
		return
	}
	if strings.HasPrefix(r.URL.Path, codeloadPrefix) {
		s.record(r, body, 0, s.serveDownload(w, r), limitSeen{})
		return
	}
	if status, served := s.oauthPage(w, r, body); served {
		s.record(r, body, 0, status, limitSeen{})
		return
	}
	if status, served := s.manifestPage(w, r, body); served {
		s.record(r, body, 0, status, limitSeen{})
		return
	}
	// GitHub treats a JSON null body as no body; go-github sends one for a
	// nil options pointer (CreateInstallationToken).
	if string(bytes.TrimSpace(body)) == "null" {
		body = nil
	}
	route, params, err := s.spec.validateRequest(r, body)
	if err != nil {
		status := http.StatusUnprocessableEntity
		var routeErr *routers.RouteError
		if errors.As(err, &routeErr) {
			status = http.StatusNotFound
		}
		s.t.Errorf("githubtest: request outside the GitHub OpenAPI subset: %s %s: %v", r.Method, r.URL.RequestURI(), err)
		s.record(r, body, 0, status, limitSeen{})
		writeJSON(w, reply{status: status, body: errorBody("request outside the OpenAPI subset: " + err.Error())})
		return
	}
	c := &call{r: r, route: route, params: params, body: body}
	rep, how := s.handle(c)
	switch how {
	case answerReset:
		s.record(r, body, c.installationID, 0, c.limit)
		resetConn(w)
		return
	case answerHang:
		s.hang(r)
		if r.Context().Err() != nil {
			s.record(r, body, c.installationID, 0, c.limit)
			return
		}
	}
	s.record(r, body, c.installationID, rep.status, c.limit)
	raw, err := rep.raw, error(nil)
	if raw == nil {
		raw, err = encodeBody(rep.body)
	}
	if err != nil {
		s.t.Errorf("githubtest: encode answer to %s %s: %v", r.Method, route.Path, err)
		rep = reply{status: http.StatusInternalServerError, body: errorBody("encode answer")}
		raw, _ = encodeBody(rep.body)
	}
	if rep.header == nil {
		rep.header = http.Header{}
	}
	if rep.body != nil {
		rep.header.Set("Content-Type", "application/json; charset=utf-8")
	}
	// GitHub's Date is its clock: the fake's, so tests with WithClock see one time.
	rep.header.Set("Date", s.now().UTC().Format(http.TimeFormat))
	if err := validateResponse(r, route, params, rep.status, rep.header, raw); err != nil {
		s.t.Errorf("githubtest: the fake answered %s %s outside the spec (a githubtest bug): %v", r.Method, route.Path, err)
	}
	for k, v := range rep.header {
		w.Header()[k] = v
	}
	w.WriteHeader(rep.status)
	_, _ = w.Write(raw)
}

// handle authenticates, applies injected faults and dispatches; handlers run
// under the server lock, so state changes are atomic per request. A fault
// says how the answer is to be given (reset, hang) outside the lock.
func (s *Server) handle(c *call) (reply, answered) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := c.r.Method + " " + c.route.Path
	h, ok := handlers[key]
	if !ok {
		s.t.Errorf("githubtest: %s is in the spec but the fake does not implement it", key)
		return reply{status: http.StatusNotImplemented, body: errorBody("not implemented by githubtest")}, answerNormally
	}
	switch {
	case c.route.Path == "/app-manifests/{code}/conversions":
		// unauthenticated by design: the code is the credential
	case strings.HasPrefix(c.route.Path, "/app/"):
		if rep, ok := s.authenticateApp(c.r); !ok {
			return rep, answerNormally
		}
	default:
		id, rep, ok := s.authenticateInstallation(c.r)
		if login, user := s.userLogin(c.r); !ok && user {
			c.userLogin, ok = login, true // a user access token (oauth.go)
		}
		if !ok {
			return rep, answerNormally
		}
		c.installationID = id
	}
	limitHeader, refused := s.rateLimit(c)
	if refused != nil {
		return *refused, answerNormally
	}
	f, faulted := s.takeFault(c.r.Method, c.r.URL.Path, c.route.Path)
	if !faulted {
		rep, notModified := conditional(c, h(s, c))
		if notModified {
			s.refund(c, limitHeader)
		}
		return withHeaders(rep, limitHeader), answerNormally
	}
	if f.After {
		_ = h(s, c) // done, and its answer lost
	}
	rep, how := faultReply(f)
	return withHeaders(rep, limitHeader), how
}

// withHeaders adds h (the rate-limit headers) to an answer's own.
func withHeaders(rep reply, h http.Header) reply {
	if len(h) == 0 {
		return rep
	}
	if rep.header == nil {
		rep.header = http.Header{}
	}
	for k, v := range h {
		if rep.header.Get(k) == "" {
			rep.header[k] = v
		}
	}
	return rep
}

func encodeBody(v any) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode json: %w", err)
	}
	return buf.Bytes(), nil
}

func writeJSON(w http.ResponseWriter, rep reply) {
	raw, _ := encodeBody(rep.body)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(rep.status)
	_, _ = w.Write(raw)
}

func errorBody(msg string) map[string]any {
	return map[string]any{"message": msg, "documentation_url": "https://docs.github.com/rest"}
}

func notFound() reply { return reply{status: http.StatusNotFound, body: errorBody("Not Found")} }

func unprocessable(msg string) reply {
	return reply{status: http.StatusUnprocessableEntity, body: errorBody(msg)}
}

func noContent() reply { return reply{status: http.StatusNoContent} }

func ok(body any) reply { return reply{status: http.StatusOK, body: body} }

func created(body any) reply { return reply{status: http.StatusCreated, body: body} }

// id hands out ids unique across the server; callers hold s.mu.
func (s *Server) id() int64 {
	s.nextID++
	return s.nextID
}
