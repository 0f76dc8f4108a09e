package githubtest

import (
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// OAuth stands in for GitHub's web flow of a GitHub App's user sign-in
// (https://docs.github.com/en/apps/creating-github-apps/authenticating-with-a-github-app/generating-a-user-access-token-for-a-github-app):
// GET /login/oauth/authorize sends the browser back to redirect_uri with a
// code and the state, POST /login/oauth/access_token trades the code for a
// user access token (ghu_…), and GET /user answers with that token. They are
// web endpoints, not REST, so they are routed before the OpenAPI check
// (/user is REST and is checked).
type oauthState struct {
	clientID, clientSecret string
	// browserUser is who is signed in to GitHub in the test's browser;
	// "" makes authorize answer as GitHub's sign-in page would (no code).
	browserUser string
	codes       map[string]*oauthCode
	userTokens  map[string]string // token → login
}

type oauthCode struct {
	login, redirect string
	expires         time.Time
	used            bool
}

// oauthCodeTTL is how long GitHub's code is good: ten minutes.
const oauthCodeTTL = 10 * time.Minute

// OAuthClient is the App's OAuth client id and secret: what the manifest
// conversion hands out, and what the token exchange requires.
func (s *Server) OAuthClient() (clientID, clientSecret string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.oauthLocked()
	return o.clientID, o.clientSecret
}

// SignInBrowser makes login the user signed in to GitHub in the browser
// that visits /login/oauth/authorize (who authorizes the App).
func (s *Server) SignInBrowser(login string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.oauthLocked().browserUser = login
}

// UserToken mints a user access token for login directly.
func (s *Server) UserToken(login string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	tok := "ghu_" + randomHex(18)
	s.oauthLocked().userTokens[tok] = login
	return tok
}

// oauthLocked is the OAuth state, made on first use; callers hold s.mu.
func (s *Server) oauthLocked() *oauthState {
	if s.oauth == nil {
		s.oauth = &oauthState{clientID: "Iv1." + randomHex(8), clientSecret: randomHex(20),
			codes: map[string]*oauthCode{}, userTokens: map[string]string{}}
	}
	return s.oauth
}

// userLogin is the login of a request's user access token ("token X" or
// "Bearer X"); callers hold s.mu.
func (s *Server) userLogin(r *http.Request) (string, bool) {
	scheme, cred, found := strings.Cut(r.Header.Get("Authorization"), " ")
	if !found || (!strings.EqualFold(scheme, "token") && !strings.EqualFold(scheme, "bearer")) {
		return "", false
	}
	login, ok := s.oauthLocked().userTokens[strings.TrimSpace(cred)]
	return login, ok
}

// oauthPage serves the web flow's two endpoints; served is false for any
// other path.
func (s *Server) oauthPage(w http.ResponseWriter, r *http.Request, body []byte) (status int, served bool) {
	switch r.URL.Path {
	case "/login/oauth/authorize":
		return s.authorize(w, r), true
	case "/login/oauth/access_token":
		return s.accessToken(w, r, body), true
	}
	return 0, false
}

func (s *Server) authorize(w http.ResponseWriter, r *http.Request) int {
	if r.Method != http.MethodGet {
		http.Error(w, "authorize is a page", http.StatusMethodNotAllowed)
		return http.StatusMethodNotAllowed
	}
	q := r.URL.Query()
	s.mu.Lock()
	o := s.oauthLocked()
	login := o.browserUser
	back, err := url.Parse(q.Get("redirect_uri"))
	switch {
	case q.Get("client_id") != o.clientID:
		s.mu.Unlock()
		http.Error(w, "404: no application with this client_id", http.StatusNotFound)
		return http.StatusNotFound
	case err != nil || back.Scheme != "http" && back.Scheme != "https" || back.Host == "":
		s.mu.Unlock()
		http.Error(w, "The redirect_uri is not associated with this application.", http.StatusBadRequest)
		return http.StatusBadRequest
	case login == "":
		s.mu.Unlock()
		http.Error(w, "Sign in to GitHub to continue (no browser user: SignInBrowser)", http.StatusOK)
		return http.StatusOK
	}
	code := randomHex(10)
	o.codes[code] = &oauthCode{login: login, redirect: back.String(), expires: s.credentialNow().Add(oauthCodeTTL)}
	s.mu.Unlock()
	v := back.Query()
	v.Set("code", code)
	if st := q.Get("state"); st != "" {
		v.Set("state", st)
	}
	back.RawQuery = v.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
	return http.StatusFound
}

// accessToken trades a code once, as GitHub does: a form of client_id,
// client_secret, code and (when authorize had one) the same redirect_uri;
// errors are 200s with an "error" field.
func (s *Server) accessToken(w http.ResponseWriter, r *http.Request, body []byte) int {
	if r.Method != http.MethodPost {
		http.Error(w, "access_token takes a POST", http.StatusMethodNotAllowed)
		return http.StatusMethodNotAllowed
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return http.StatusBadRequest
	}
	s.mu.Lock()
	answer := s.exchange(form)
	s.mu.Unlock()
	if !strings.Contains(r.Header.Get("Accept"), "application/json") {
		s.t.Errorf("githubtest: POST /login/oauth/access_token without Accept: application/json gets a form-encoded answer; ask for JSON")
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(answer)
	return http.StatusOK
}

// exchange answers a token request; callers hold s.mu.
func (s *Server) exchange(form url.Values) map[string]string {
	o := s.oauthLocked()
	if form.Get("client_id") != o.clientID || subtle.ConstantTimeCompare([]byte(form.Get("client_secret")), []byte(o.clientSecret)) != 1 {
		return map[string]string{"error": "incorrect_client_credentials", "error_description": "The client_id and/or client_secret passed are incorrect."}
	}
	c := o.codes[form.Get("code")]
	if c == nil || c.used || !s.credentialNow().Before(c.expires) {
		return map[string]string{"error": "bad_verification_code", "error_description": "The code passed is incorrect or expired."}
	}
	c.used = true
	if ru := form.Get("redirect_uri"); ru != "" && ru != c.redirect {
		return map[string]string{"error": "redirect_uri_mismatch", "error_description": "The redirect_uri MUST match the registered callback URL for this application."}
	}
	tok := "ghu_" + randomHex(18)
	o.userTokens[tok] = c.login
	return map[string]string{"access_token": tok, "token_type": "bearer", "scope": ""}
}

// getAuthenticatedUser serves GET /user for a user access token.
func getAuthenticatedUser(s *Server, c *call) reply {
	if c.userLogin == "" {
		return reply{status: http.StatusForbidden, body: errorBody("Resource not accessible by integration")}
	}
	return ok(merge(s.spec.skeleton("public-user"), s.userJSON(c.userLogin)))
}
