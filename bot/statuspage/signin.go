package statuspage

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"
)

// SignIn lets people sign in to the page with GitHub (status.github_oauth):
// the GitHub App's user sign-in, whose user access token is used for two
// calls (who the user is, whether an approver) and then dropped. Only
// approvers get a session: a signed cookie holding their login and its
// expiry, never a token.
type SignIn struct {
	ClientID, ClientSecret string
	// APIURL is GitHub's REST API base (GET /user); the web flow's
	// endpoints are on Options.GitHubURL.
	APIURL string
	// Approver says whether login is an approver; token is the user's own
	// access token (it may read the user's team memberships).
	Approver func(ctx context.Context, token, login string) (bool, error)
	// Client calls GitHub; nil: one with a 30 s timeout.
	Client *http.Client
	// SessionTTL is how long a session lasts; 0: DefaultSessionTTL.
	SessionTTL time.Duration
}

// DefaultSessionTTL is how long a sign-in lasts: a working day. A person
// removed from the approvers keeps a session until it ends (or until the
// client secret is rotated, which ends all of them).
const DefaultSessionTTL = 8 * time.Hour

// stateTTL bounds a sign-in under way, as GitHub bounds its code.
const stateTTL = 10 * time.Minute

const (
	sessionCookie = "shardgate_session"
	stateCookie   = "shardgate_oauth_state"
	callbackPath  = "/auth/callback"
	maxGitHubBody = 1 << 20
)

// oauthCode is what GitHub's code looks like; anything else is refused.
var oauthCode = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]{1,100}$`) })

func (h *Handler) routeSignIn() {
	if h.o.SignIn == nil {
		return
	}
	if h.o.SignIn.SessionTTL <= 0 {
		h.o.SignIn.SessionTTL = DefaultSessionTTL
	}
	if h.o.SignIn.Client == nil {
		h.o.SignIn.Client = &http.Client{Timeout: 30 * time.Second}
	}
	h.key = sessionKey(h.o.SignIn.ClientSecret)
	h.mux.HandleFunc("GET /auth/login", h.serveLogin)
	h.mux.HandleFunc("GET "+callbackPath, h.serveCallback)
	h.mux.HandleFunc("POST /auth/logout", h.serveLogout)
}

// signedIn is the login of r's valid session, if any.
func (h *Handler) signedIn(r *http.Request) (string, bool) {
	if h.o.SignIn == nil {
		return "", false
	}
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return "", false
	}
	return unseal(h.key, c.Value, kindSession, h.o.Now())
}

// secure says whether the browser reached the page over TLS (here or at a
// proxy in front): its cookies are then Secure.
func secure(r *http.Request) bool {
	return r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}

func (h *Handler) setCookie(w http.ResponseWriter, r *http.Request, name, value, path string, maxAge time.Duration) {
	c := &http.Cookie{Name: name, Value: value, Path: path, HttpOnly: true, Secure: secure(r),
		// Lax: sent on GitHub's redirect back (a top-level GET from
		// another site), never on another site's POST or sub-request.
		SameSite: http.SameSiteLaxMode, MaxAge: int(maxAge / time.Second)}
	if maxAge < 0 {
		c.MaxAge = -1
	}
	// No Expires: the browser's clock need not be the server's; the server
	// checks the expiry sealed in the value on its own clock.
	http.SetCookie(w, c)
}

// callbackURL is where GitHub sends the browser back: this page's own
// address. GitHub accepts it only if it is a callback URL of the App.
func callbackURL(r *http.Request) string {
	scheme := "http"
	if secure(r) {
		scheme = "https"
	}
	return (&url.URL{Scheme: scheme, Host: r.Host, Path: callbackPath}).String()
}

// serveLogin starts a sign-in: a fresh state, kept sealed in a cookie of
// this browser, and the browser sent to GitHub with it.
func (h *Handler) serveLogin(w http.ResponseWriter, r *http.Request) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		http.Error(w, "no randomness for the sign-in state", http.StatusInternalServerError)
		return
	}
	state := hex.EncodeToString(b)
	h.setCookie(w, r, stateCookie, seal(h.key, sealed{Kind: kindState, Subject: state, Expires: h.o.Now().Add(stateTTL).Unix()}), "/auth/", stateTTL)
	q := url.Values{"client_id": {h.o.SignIn.ClientID}, "redirect_uri": {callbackURL(r)}, "state": {state}, "allow_signup": {"false"}}
	http.Redirect(w, r, h.o.GitHubURL+"/login/oauth/authorize?"+q.Encode(), http.StatusFound)
}

// serveCallback takes GitHub's redirect back: the state must be this
// browser's, the code is traded for the user's token, and only an approver
// gets a session.
func (h *Handler) serveCallback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var state string
	c, err := r.Cookie(stateCookie)
	if err == nil {
		state, _ = unseal(h.key, c.Value, kindState, h.o.Now())
	}
	h.setCookie(w, r, stateCookie, "", "/auth/", -1) // a state serves once
	if state == "" || subtle.ConstantTimeCompare([]byte(state), []byte(q.Get("state"))) != 1 {
		h.o.Log.WithField("remote", r.RemoteAddr).Warn("status page sign-in refused: the OAuth state is not the one this browser was given")
		h.refuse(w, http.StatusBadRequest, "Sign-in not started here",
			"This sign-in did not start in this browser, or took more than ten minutes. Start again.")
		return
	}
	if e := q.Get("error"); e != "" {
		h.refuse(w, http.StatusForbidden, "GitHub did not sign you in", "GitHub answered: "+e+".")
		return
	}
	code := q.Get("code")
	if !oauthCode().MatchString(code) {
		h.refuse(w, http.StatusBadRequest, "No code", "GitHub's redirect carried no usable code.")
		return
	}
	login, approver, err := h.whoSignedIn(r.Context(), code, callbackURL(r))
	if err != nil {
		h.o.Log.WithError(err).Warn("status page sign-in failed")
		h.refuse(w, http.StatusBadGateway, "Sign-in failed", h.o.Redactor.Redact(err.Error()))
		return
	}
	log := h.o.Log.WithField("login", login)
	if !approver {
		log.Warn("status page sign-in refused: not an approver")
		h.refuse(w, http.StatusForbidden, "Not an approver",
			"You are signed in to GitHub as "+login+", who is not an approver of this shardgate: only approvers see the status page.")
		return
	}
	ttl := h.o.SignIn.SessionTTL
	h.setCookie(w, r, sessionCookie, seal(h.key, sealed{Kind: kindSession, Subject: login, Expires: h.o.Now().Add(ttl).Unix()}), "/", ttl)
	log.Info("status page: an approver signed in with GitHub")
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

func (h *Handler) serveLogout(w http.ResponseWriter, r *http.Request) {
	h.setCookie(w, r, sessionCookie, "", "/", -1)
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// whoSignedIn trades the code for the user's token, asks GitHub whose it is
// and whether that login is an approver. The token is not kept, nor is it
// in an error.
func (h *Handler) whoSignedIn(ctx context.Context, code, redirect string) (login string, approver bool, err error) {
	si := h.o.SignIn
	token, err := h.exchange(ctx, code, redirect)
	if err != nil {
		return "", false, err
	}
	defer func() {
		if err != nil {
			err = errors.New(strings.ReplaceAll(err.Error(), token, "[user token]"))
		}
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(si.APIURL, "/")+"/user", nil)
	if err != nil {
		return "", false, fmt.Errorf("ask GitHub who signed in: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "application/vnd.github+json")
	var user struct {
		Login string `json:"login"`
	}
	if err := h.callGitHub(req, &user); err != nil {
		return "", false, fmt.Errorf("ask GitHub who signed in: %w", err)
	}
	if user.Login == "" {
		return "", false, errors.New("ask GitHub who signed in: the answer names no login")
	}
	ok, err := si.Approver(ctx, token, user.Login)
	if err != nil {
		return user.Login, false, fmt.Errorf("check whether %s is an approver: %w", user.Login, err)
	}
	return user.Login, ok, nil
}

// exchange trades GitHub's code for a user access token.
func (h *Handler) exchange(ctx context.Context, code, redirect string) (string, error) {
	si := h.o.SignIn
	form := url.Values{"client_id": {si.ClientID}, "client_secret": {si.ClientSecret}, "code": {code}, "redirect_uri": {redirect}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.o.GitHubURL+"/login/oauth/access_token", strings.NewReader(form.Encode()))
	if err != nil {
		return "", fmt.Errorf("trade GitHub's code for a token: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	var answer struct {
		AccessToken string `json:"access_token"`
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	if err := h.callGitHub(req, &answer); err != nil {
		return "", fmt.Errorf("trade GitHub's code for a token: %w", err)
	}
	if answer.Error != "" {
		return "", fmt.Errorf("trade GitHub's code for a token: GitHub answered %s: %s", answer.Error, answer.Description)
	}
	if answer.AccessToken == "" {
		return "", errors.New("trade GitHub's code for a token: GitHub's answer holds no token")
	}
	return answer.AccessToken, nil
}

// callGitHub sends req and decodes a 200's JSON into v; another status is
// an error naming it (never the body, which could echo a credential).
func (h *Handler) callGitHub(req *http.Request, v any) error {
	resp, err := h.o.SignIn.Client.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // the URL is known to the caller; the error alone
		}
		return fmt.Errorf("%s %s: %w", req.Method, req.URL.Redacted(), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: GitHub answered %s", req.Method, req.URL.Redacted(), resp.Status)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxGitHubBody)).Decode(v); err != nil {
		return fmt.Errorf("%s %s: decode the answer: %w", req.Method, req.URL.Redacted(), err)
	}
	return nil
}

var signInPage = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("signin").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>{{.Title}} · shardgate status</title></head>
<body><h1>{{.Title}}</h1><p>{{.Text}}</p>
{{if .SignIn}}<p><a id="signin" href="/auth/login">Sign in with GitHub</a></p>{{end}}
</body></html>
`))
})

// refuse answers with a page saying why, and the way to sign in.
func (h *Handler) refuse(w http.ResponseWriter, status int, title, text string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = signInPage().Execute(w, map[string]any{"Title": title, "Text": text, "SignIn": h.o.SignIn != nil})
}

// serveSignedIn serves the page with sign-in on: the sign-in's own pages to
// anyone, the rest to an approver's session or to the bearer token
// (machines). A browser without either is shown the way to sign in.
func (h *Handler) serveSignedIn(w http.ResponseWriter, r *http.Request) {
	_, session := h.signedIn(r)
	switch {
	case strings.HasPrefix(r.URL.Path, "/auth/"), session, h.o.Token != "" && h.authorized(r):
		h.mux.ServeHTTP(w, r)
		return
	}
	h.o.Log.WithField("remote", r.RemoteAddr).Warn("status page refused: no sign-in session and no bearer token")
	w.Header().Add("WWW-Authenticate", `Bearer realm="shardgate status"`)
	h.refuse(w, http.StatusUnauthorized, "Sign in",
		"The status page shows itself to approvers signed in with GitHub, and to machines with the bearer token.")
}
