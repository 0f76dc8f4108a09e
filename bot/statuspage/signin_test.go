package statuspage

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/redact"
	"github.com/shardgate/shardgate/internal/testing/githubtest"
)

const signInToken = "status-token-0123456789"

// signInScene is the page with sign-in on, against the fake GitHub, whose
// approvers are given by name; logs are kept.
type signInScene struct {
	*scene
	gh           *githubtest.Server
	clientSecret string
	logs         *bytes.Buffer
	tokens       []string // the user tokens GitHub handed out (seen by Approver)
}

func newSignInScene(t *testing.T, approvers ...string) *signInScene {
	t.Helper()
	gh := githubtest.New(t)
	clientID, secret := gh.OAuthClient()
	ss := &signInScene{gh: gh, clientSecret: secret, logs: &bytes.Buffer{}}
	ss.scene = newScene(t, "bolt", Options{Token: signInToken, Redactor: redact.New(signInToken, secret), GitHubURL: WebURL(gh.URL()),
		SignIn: &SignIn{ClientID: clientID, ClientSecret: secret, APIURL: gh.URL(),
			Approver: func(_ context.Context, token, login string) (bool, error) {
				ss.tokens = append(ss.tokens, token)
				return slices.Contains(approvers, login), nil
			}}})
	log := logrus.New()
	log.SetOutput(ss.logs)
	ss.page.o.Log = logrus.NewEntry(log)
	return ss
}

// browser is a client with its own cookies that stops at each redirect.
func browser(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func fetch(t *testing.T, c *http.Client, u string) (*http.Response, string) {
	t.Helper()
	resp, err := c.Get(u)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(b)
}

// startSignIn follows /auth/login to GitHub's authorize page and returns
// the callback URL GitHub sends the browser back to.
func (ss *signInScene) startSignIn(t *testing.T, c *http.Client, login string) string {
	t.Helper()
	ss.gh.SignInBrowser(login)
	resp, _ := fetch(t, c, ss.srv.URL+"/auth/login")
	require.Equal(t, http.StatusFound, resp.StatusCode)
	resp, _ = fetch(t, c, resp.Header.Get("Location"))
	require.Equal(t, http.StatusFound, resp.StatusCode, "GitHub authorizes")
	back := resp.Header.Get("Location")
	require.True(t, strings.HasPrefix(back, ss.srv.URL+"/auth/callback?"), back)
	return back
}

// signIn signs login in and returns the browser's answers on the way.
func (ss *signInScene) signIn(t *testing.T, c *http.Client, login string) (*http.Response, string) {
	t.Helper()
	return fetch(t, c, ss.startSignIn(t, c, login))
}

func sessionOf(t *testing.T, c *http.Client, base string) *http.Cookie {
	t.Helper()
	u, err := url.Parse(base + "/")
	require.NoError(t, err)
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == sessionCookie {
			return ck
		}
	}
	return nil
}

// withCookie gets path with only the given session cookie.
func (ss *signInScene) withCookie(t *testing.T, path, value string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, ss.srv.URL+path, nil)
	require.NoError(t, err)
	req.AddCookie(&http.Cookie{Name: sessionCookie, Value: value})
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

func TestSignInGivesApproversASessionAndRefusesOthers(t *testing.T) {
	ss := newSignInScene(t, "alice")
	l := ss.start(t, ss.enqueue(t, 11, "orders", "http://coord:8080 orders"))

	resp, body := fetch(t, browser(t), ss.srv.URL+"/")
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	require.Contains(t, body, `href="/auth/login"`)
	require.NotContains(t, body, "orders")
	require.Equal(t, []string{`Bearer realm="shardgate status"`}, resp.Header.Values("WWW-Authenticate"),
		"no Basic challenge: a browser would prompt for a password instead of offering the sign-in")

	alice := browser(t)
	resp, _ = ss.signIn(t, alice, "alice")
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, "/", resp.Header.Get("Location"))
	raw := resp.Header.Values("Set-Cookie")
	session := sessionOf(t, alice, ss.srv.URL)
	require.NotNil(t, session, "%v", raw)
	require.True(t, slices.ContainsFunc(raw, func(h string) bool {
		return strings.HasPrefix(h, sessionCookie+"=") && strings.Contains(h, "HttpOnly") && strings.Contains(h, "SameSite=Lax") &&
			strings.Contains(h, "Max-Age=28800") && !strings.Contains(h, "Secure")
	}), "%v", raw)
	for _, path := range []string{"/", "/jobs/" + l.Info().ID} {
		resp, body = fetch(t, alice, ss.srv.URL+path)
		require.Equal(t, http.StatusOK, resp.StatusCode, path)
		require.Contains(t, body, "orders")
	}

	mallory := browser(t)
	resp, body = ss.signIn(t, mallory, "mallory")
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	require.Contains(t, body, "mallory, who is not an approver")
	require.Nil(t, sessionOf(t, mallory, ss.srv.URL))
	for _, path := range []string{"/", "/jobs/" + l.Info().ID, "/jobs/" + l.Info().ID + "/log"} {
		resp, _ = fetch(t, mallory, ss.srv.URL+path)
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, path)
	}

	resp, _ = get(t, ss.srv.URL+"/", "Bearer "+signInToken)
	require.Equal(t, http.StatusOK, resp.StatusCode, "machines keep the bearer token")
	resp, _ = get(t, ss.srv.URL+"/", "Bearer wrong-token-0123456789")
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
}

func TestSessionCookieForgedTamperedOrExpiredIsRefused(t *testing.T) {
	ss := newSignInScene(t, "alice")
	c := browser(t)
	ss.signIn(t, c, "alice")
	good := sessionOf(t, c, ss.srv.URL).Value
	require.Equal(t, http.StatusOK, ss.withCookie(t, "/", good))

	payload, sig, _ := strings.Cut(good, ".")
	other := sessionKey("another-client-secret")
	exp := ss.clock.Now().Add(time.Hour).Unix()
	flip := []byte(sig)
	flip[0] ^= 1
	tests := map[string]string{
		"forged: signed with another key":              seal(other, sealed{Kind: kindSession, Subject: "alice", Expires: exp}),
		"tampered: another login, the same signature":  strings.SplitN(seal(other, sealed{Kind: kindSession, Subject: "mallory", Expires: exp}), ".", 2)[0] + "." + sig,
		"tampered: a later expiry, the same signature": strings.SplitN(seal(other, sealed{Kind: kindSession, Subject: "alice", Expires: exp + 3600}), ".", 2)[0] + "." + sig,
		"tampered signature":                           payload + "." + string(flip),
		"no signature":                                 payload,
		"a state cookie as the session":                seal(ss.page.key, sealed{Kind: kindState, Subject: "alice", Expires: exp}),
		"garbage":                                      "not-a-cookie",
		"empty login":                                  seal(ss.page.key, sealed{Kind: kindSession, Subject: "", Expires: exp}),
	}
	for name, value := range tests {
		require.Equal(t, http.StatusUnauthorized, ss.withCookie(t, "/", value), name)
	}

	ss.clock.Advance(DefaultSessionTTL - time.Second)
	require.Equal(t, http.StatusOK, ss.withCookie(t, "/", good), "still within its lifetime")
	ss.clock.Advance(time.Second)
	require.Equal(t, http.StatusUnauthorized, ss.withCookie(t, "/", good), "expired on the server's clock, whatever the browser keeps")
}

func TestOAuthStateMustBeThisBrowsers(t *testing.T) {
	ss := newSignInScene(t, "alice")
	// An attacker's own sign-in, whose callback URL the victim's browser
	// is made to open (login CSRF): the victim's browser has no state.
	attacker := browser(t)
	back := ss.startSignIn(t, attacker, "alice")
	victim := browser(t)
	resp, body := fetch(t, victim, back)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, body)
	require.Nil(t, sessionOf(t, victim, ss.srv.URL))

	// The victim's own sign-in under way, and the attacker's code and state.
	ss.startSignIn(t, victim, "alice")
	resp, _ = fetch(t, victim, back)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, "another sign-in's state")
	require.Nil(t, sessionOf(t, victim, ss.srv.URL))

	// The right state, changed in the URL.
	c := browser(t)
	own := ss.startSignIn(t, c, "alice")
	u, err := url.Parse(own)
	require.NoError(t, err)
	q := u.Query()
	q.Set("state", q.Get("state")+"0")
	u.RawQuery = q.Encode()
	resp, _ = fetch(t, c, u.String())
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)

	// A state older than ten minutes on the server's clock.
	c = browser(t)
	own = ss.startSignIn(t, c, "alice")
	ss.clock.Advance(stateTTL)
	resp, _ = fetch(t, c, own)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Nil(t, sessionOf(t, c, ss.srv.URL))
	require.Contains(t, ss.logs.String(), "the OAuth state is not the one this browser was given")
}

func TestSignInSecretsStayOutOfLogsPagesAndCookies(t *testing.T) {
	ss := newSignInScene(t, "alice")
	var seen strings.Builder
	for _, login := range []string{"alice", "mallory"} {
		c := browser(t)
		back := ss.startSignIn(t, c, login)
		resp, body := fetch(t, c, back)
		seen.WriteString(body + strings.Join(resp.Header.Values("Set-Cookie"), "\n"))
		resp, body = fetch(t, c, ss.srv.URL+"/")
		seen.WriteString(body + strings.Join(resp.Header.Values("Set-Cookie"), "\n"))
		u, _ := url.Parse(back)
		code := u.Query().Get("code")
		require.NotContains(t, seen.String(), code, "no code on a page")
		require.NotContains(t, ss.logs.String(), code, "nor in the logs")
	}
	// A failed exchange (a wrong client secret) says what GitHub answered
	// and nothing of the secret.
	ss.page.o.SignIn.ClientSecret = "wrong-secret-0123456789"
	resp, body := ss.signIn(t, browser(t), "alice")
	require.Equal(t, http.StatusBadGateway, resp.StatusCode)
	require.Contains(t, body, "incorrect_client_credentials")
	seen.WriteString(body)

	require.Len(t, ss.tokens, 2, "two user tokens handed out")
	for _, secret := range append([]string{ss.clientSecret, "wrong-secret-0123456789"}, ss.tokens...) {
		require.NotContains(t, seen.String(), secret)
		require.NotContains(t, ss.logs.String(), secret)
	}
	require.Contains(t, ss.logs.String(), "incorrect_client_credentials")
}

// Behind a TLS proxy the cookies are Secure and GitHub is asked to send the
// browser back to the https address; sign-out ends the session.
func TestSignInOverTLSAndSignOut(t *testing.T) {
	ss := newSignInScene(t, "alice")
	req, err := http.NewRequest(http.MethodGet, ss.srv.URL+"/auth/login", nil)
	require.NoError(t, err)
	req.Header.Set("X-Forwarded-Proto", "https")
	c := browser(t)
	resp, err := c.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusFound, resp.StatusCode)
	to, err := url.Parse(resp.Header.Get("Location"))
	require.NoError(t, err)
	require.Equal(t, "https://"+strings.TrimPrefix(ss.srv.URL, "http://")+"/auth/callback", to.Query().Get("redirect_uri"))
	set := resp.Header.Get("Set-Cookie")
	require.True(t, strings.HasPrefix(set, stateCookie+"=") && strings.Contains(set, "Secure") && strings.Contains(set, "HttpOnly") &&
		strings.Contains(set, "Path=/auth/"), set)

	c = browser(t)
	ss.signIn(t, c, "alice")
	require.NotNil(t, sessionOf(t, c, ss.srv.URL))
	resp, err = c.Post(ss.srv.URL+"/auth/logout", "", nil)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Nil(t, sessionOf(t, c, ss.srv.URL))
	resp, _ = fetch(t, c, ss.srv.URL+"/")
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
}
