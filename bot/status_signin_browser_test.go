package bot

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/internal/testing/browsertest"
)

// Issue 36: the status page through the service, in a browser, with
// sign-in through the fake GitHub's OAuth. An approver by name and one by
// team see the page and may open a live log; a signed-in non-approver is
// refused and gets no session; a machine's bearer token still reads it.
func TestStatusPageSignInWithGitHub(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bctx := browsertest.New(t, ctx)
	h := newHarnessBase(t)
	clientID, clientSecret := h.gh.OAuthClient()
	const token = "status-bearer-token-0123456789"
	h.cfg.Status = serverconfig.StatusConfig{Listen: "127.0.0.1:0", Token: serverconfig.NewSecret(token),
		OAuth: &serverconfig.GitHubOAuth{ClientID: clientID, ClientSecret: serverconfig.NewSecret(clientSecret)}}
	h.start()
	stop, err := h.srv.startStatus()
	require.NoError(t, err)
	t.Cleanup(stop)
	page := "http://" + h.srv.statusAddr + "/"

	text := func(sel string) string {
		t.Helper()
		got, err := chromedp.Run(bctx, chromedp.Text(chromedp.CSS(sel)))
		require.NoError(t, err)
		return got
	}
	// fetchStatus is what the signed-in browser gets for path (its cookies go along).
	fetchStatus := func(path string) int {
		t.Helper()
		code, err := chromedp.Run(bctx, chromedp.Evaluate[int](`fetch(`+"`"+path+"`"+`, {redirect: "manual"}).then(r => r.status)`, chromedp.EvalAwaitPromise))
		require.NoError(t, err)
		return code
	}
	signIn := func(login string) {
		t.Helper()
		require.NoError(t, chromedp.Do(bctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, network.ClearBrowserCookies, cdp.Empty{})
			return err
		})))
		h.gh.SignInBrowser(login)
		require.NoError(t, chromedp.Do(bctx, chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS(`#signin`))))
		require.Contains(t, text("h1"), "Sign in", "an unknown browser sees the way to sign in, not the page")
		// Follow the link as a click would; Navigate waits for the page at
		// the end of the redirects (GitHub, the callback, the page).
		href, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.querySelector("#signin").href`))
		require.NoError(t, err)
		require.Equal(t, page+"auth/login", href)
		require.NoError(t, chromedp.Do(bctx, chromedp.Navigate(href), chromedp.WaitVisible(chromedp.CSS(`h1`))))
	}

	for _, login := range []string{approver, teamMate} {
		signIn(login)
		require.Equal(t, "shardgate status", text("h1"), "%s sees the page", login)
		loc, err := chromedp.Run(bctx, chromedp.Location())
		require.NoError(t, err)
		require.Equal(t, page, loc, "%s: back on the page after GitHub", login)
		require.Equal(t, http.StatusNotFound, fetchStatus("/jobs/no-such-job/log"), "%s: the live logs answer (no such job), not 401", login)
		got, err := chromedp.Run(bctx, func(ctx context.Context, tg *chromedp.Target) (network.GetCookiesResult, error) {
			return cdp.Call(ctx, tg, network.GetCookies, network.GetCookiesParams{URLs: []string{page, page + "auth/callback"}})
		})
		require.NoError(t, err)
		cookies := got.Cookies
		var session *network.Cookie
		for _, c := range cookies {
			require.NotContains(t, c.Value, clientSecret)
			require.NotContains(t, c.Value, token)
			if c.Name == "shardgate_session" {
				session = c
			}
		}
		require.NotNil(t, session, "%s has a session", login)
		require.True(t, session.HTTPOnly)
		require.Equal(t, network.CookieSameSiteLax, session.SameSite)
		require.False(t, session.Secure, "plain http: a Secure cookie would never come back")
	}

	signIn(outsider)
	require.Contains(t, text("h1"), "Not an approver")
	require.Contains(t, text("p"), outsider)
	require.Equal(t, http.StatusUnauthorized, fetchStatus("/"), "the non-approver has no session")
	require.Equal(t, http.StatusUnauthorized, fetchStatus("/jobs/no-such-job/log"), "nor the live logs")

	req, err := http.NewRequest(http.MethodGet, page, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "machines keep the bearer token")

	logs := h.logs.String()
	require.NotContains(t, logs, clientSecret)
	require.NotContains(t, logs, "ghu_", "no user token in the logs")
	require.Contains(t, logs, "not an approver")
	for _, r := range h.gh.Requests() {
		if strings.HasPrefix(r.Path, "/user") {
			require.Equal(t, http.StatusOK, r.Status)
		}
	}
}
