package main

import (
	"bufio"
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/shardgate/shardgate/bot"
	"github.com/shardgate/shardgate/internal/testing/githubtest"
)

// appCreateRun is a running `shardgate app-create`: the local page it
// printed, and its exit code and remaining output once it ends.
type appCreateRun struct {
	page   string
	cancel context.CancelFunc
	code   chan int
	rest   chan string
}

func startAppCreate(t *testing.T, args ...string) *appCreateRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	pr, pw := io.Pipe()
	run := &appCreateRun{cancel: cancel, code: make(chan int, 1), rest: make(chan string, 1)}
	var stderr strings.Builder
	go func() {
		code := dispatch(ctx, append([]string{"app-create"}, args...), pw, &stderr)
		_ = pw.CloseWithError(io.EOF)
		run.code <- code
	}()
	lines := bufio.NewReader(pr)
	first, err := lines.ReadString('\n')
	require.NoError(t, err, "app-create printed no page (stderr: %s)", stderr.String())
	run.page = regexp.MustCompile(`http://127\.0\.0\.1:\d+/`).FindString(first)
	require.NotEmpty(t, run.page, first)
	go func() {
		rest, _ := io.ReadAll(lines)
		run.rest <- string(rest)
	}()
	return run
}

// newBrowser is an HTTP client that keeps cookies, as a browser does.
func newBrowser(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	return &http.Client{Jar: jar}
}

// browse plays the browser: open the local page, post its form where its
// action says (GitHub's new-App page), and follow GitHub's redirect back.
func browse(t *testing.T, page string) (*http.Response, string) {
	t.Helper()
	browser := newBrowser(t)
	resp, err := browser.Get(page)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, resp.Header.Get("Content-Security-Policy"), "default-src 'none'")
	action := regexp.MustCompile(`<form method="post" action="([^"]+)">`).FindStringSubmatch(string(body))
	manifest := regexp.MustCompile(`name="manifest" value="([^"]+)"`).FindStringSubmatch(string(body))
	require.Len(t, action, 2, string(body))
	require.Len(t, manifest, 2, string(body))
	resp, err = browser.PostForm(html.UnescapeString(action[1]), url.Values{"manifest": {html.UnescapeString(manifest[1])}})
	require.NoError(t, err)
	back, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	return resp, string(back)
}

// The whole manifest flow against the fake GitHub, served as a GitHub
// Enterprise Server is (web at /, REST at /api/v3/), for an organisation.
func TestAppCreateManifestFlow(t *testing.T) {
	gh := githubtest.New(t)
	mux := http.NewServeMux()
	mux.Handle("/api/v3/", http.StripPrefix("/api/v3", gh))
	mux.Handle("/", gh)
	ghes := httptest.NewServer(mux)
	t.Cleanup(ghes.Close)
	dir := t.TempDir()

	run := startAppCreate(t, "--url", "https://gate.example.test/", "--name", "gate", "--org", "acme",
		"--github-url", ghes.URL, "--dir", dir)
	resp, page := browse(t, run.page)
	require.Equal(t, http.StatusOK, resp.StatusCode, page)
	require.Contains(t, page, "GitHub App created")
	require.Equal(t, exitOK, <-run.code)
	out := <-run.rest

	apps := gh.ManifestApps()
	require.Len(t, apps, 1)
	app := apps[0]
	require.Equal(t, "acme", app.Org, "posted to the organisation's new-App page")
	require.True(t, app.Converted)
	require.Equal(t, run.page+"callback", app.Manifest["redirect_url"])
	want := bot.NewManifest("gate", "https://gate.example.test")
	require.Equal(t, "https://gate.example.test/webhook", app.Manifest["hook_attributes"].(map[string]any)["url"])
	require.ElementsMatch(t, want.DefaultEvents, app.Manifest["default_events"], "the same events app-manifest prints")
	require.Len(t, app.Manifest["default_permissions"], len(want.DefaultPermissions))

	clientID, clientSecret := gh.OAuthClient()
	files := map[string]string{"app-id": strconv.FormatInt(gh.AppID(), 10) + "\n", "app.pem": string(gh.AppPrivateKeyPEM()), "webhook-secret": app.WebhookSecret,
		"oauth-client-secret": clientSecret}
	for name, content := range files {
		path := filepath.Join(dir, name)
		st, err := os.Stat(path)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), name)
		got, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Equal(t, content, string(got), name)
	}
	require.NotContains(t, out, "PRIVATE KEY", "the key goes to its file only")
	require.NotContains(t, out, app.WebhookSecret)
	require.NotContains(t, out, clientSecret)

	// The printed configuration lines are YAML serve reads as they stand.
	cfgText := out[strings.Index(out, "github:\n"):strings.Index(out, "Then install")]
	var cfg struct {
		GitHub struct {
			APIURL            string `yaml:"api_url"`
			AppID             int64  `yaml:"app_id"`
			PrivateKeyFile    string `yaml:"private_key_file"`
			WebhookSecretFile string `yaml:"webhook_secret_file"`
		} `yaml:"github"`
		Status struct {
			GitHubOAuth struct {
				ClientID         string `yaml:"client_id"`
				ClientSecretFile string `yaml:"client_secret_file"`
			} `yaml:"github_oauth"`
		} `yaml:"status"`
	}
	require.NoError(t, yaml.Unmarshal([]byte(cfgText), &cfg), cfgText)
	require.Equal(t, ghes.URL+"/api/v3/", cfg.GitHub.APIURL, "GitHub Enterprise Server's REST base")
	require.Equal(t, gh.AppID(), cfg.GitHub.AppID)
	require.Equal(t, filepath.Join(dir, "app.pem"), cfg.GitHub.PrivateKeyFile)
	require.Equal(t, filepath.Join(dir, "webhook-secret"), cfg.GitHub.WebhookSecretFile)
	require.Equal(t, clientID, cfg.Status.GitHubOAuth.ClientID)
	require.Equal(t, filepath.Join(dir, "oauth-client-secret"), cfg.Status.GitHubOAuth.ClientSecretFile)
	require.Contains(t, out, "/auth/callback", "where GitHub must send the sign-in back")
}

// A redirect that does not carry the state the page sent is refused, and the
// flow keeps waiting for the real one; stopping it writes nothing.
func TestAppCreateRefusesAForeignState(t *testing.T) {
	gh := githubtest.New(t)
	dir := t.TempDir()
	run := startAppCreate(t, "--url", "https://gate.example.test", "--github-url", gh.URL(), "--api-url", gh.URL(), "--dir", dir)
	browser := newBrowser(t)
	pageState(t, browser, run.page)
	resp, err := browser.Get(run.page + "callback?code=abc123&state=forged")
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	resp, err = browser.Get(run.page + "callback?code=../../x&state=forged")
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	stoppedWithNothingConverted(t, run, gh, dir)
}

// A code GitHub does not know (expired, or used once) fails the command with
// GitHub's answer, not the code, and writes nothing.
func TestAppCreateFailedConversion(t *testing.T) {
	gh := githubtest.New(t)
	dir := t.TempDir()
	run := startAppCreate(t, "--url", "https://gate.example.test", "--github-url", gh.URL(), "--api-url", gh.URL(), "--dir", dir)
	browser := newBrowser(t)
	resp, err := browser.Get(run.page + "callback?code=nosuchcode1&state=" + pageState(t, browser, run.page))
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusBadGateway, resp.StatusCode)
	require.Contains(t, string(body), "404")
	require.NotContains(t, string(body), "nosuchcode1")
	require.Equal(t, exitFailed, <-run.code)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries)
}

// pageState loads the local page in browser and returns the state its form
// carries.
func pageState(t *testing.T, browser *http.Client, page string) string {
	t.Helper()
	resp, err := browser.Get(page)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	m := regexp.MustCompile(`state=([0-9a-f]+)`).FindStringSubmatch(string(body))
	require.Len(t, m, 2)
	return m[1]
}

// A page of another origin that rebinds its name to 127.0.0.1 reaches the
// local page with its own Host: answered 421, page and callback alike;
// localhost:PORT is the page's own.
func TestAppCreatePageAnswersOnlyItsOwnHost(t *testing.T) {
	gh := githubtest.New(t)
	run := startAppCreate(t, "--url", "https://gate.example.test", "--github-url", gh.URL(), "--api-url", gh.URL(), "--dir", t.TempDir())
	u, err := url.Parse(run.page)
	require.NoError(t, err)
	for _, tc := range []struct{ host, path string }{
		{"rebound.attacker.example:" + u.Port(), "/"},
		{"rebound.attacker.example:" + u.Port(), "/callback?code=abc&state=x"},
		{"127.0.0.1.nip.io:" + u.Port(), "/"},
		{"localhost:1", "/"},
	} {
		req, err := http.NewRequest(http.MethodGet, run.page+strings.TrimPrefix(tc.path, "/"), nil)
		require.NoError(t, err)
		req.Host = tc.host
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		require.Equal(t, http.StatusMisdirectedRequest, resp.StatusCode, tc.host+tc.path)
		require.NotContains(t, string(body), "state=")
	}
	require.NotEmpty(t, pageState(t, newBrowser(t), "http://localhost:"+u.Port()+"/"))
	run.cancel()
	require.Equal(t, exitFailed, <-run.code)
}

// The state read by anyone but the browser that loaded the page completes
// nothing: the callback needs that browser's cookie, and the page is not
// served again to another browser.
func TestAppCreateCallbackNeedsTheBrowserThatLoadedThePage(t *testing.T) {
	gh := githubtest.New(t)
	dir := t.TempDir()
	run := startAppCreate(t, "--url", "https://gate.example.test", "--github-url", gh.URL(), "--api-url", gh.URL(), "--dir", dir)
	state := pageState(t, newBrowser(t), run.page)

	other := newBrowser(t)
	resp, err := other.Get(run.page + "callback?code=attackerscode1&state=" + state)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	resp, err = other.Get(run.page)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusConflict, resp.StatusCode)
	require.NotContains(t, string(body), state)

	stoppedWithNothingConverted(t, run, gh, dir)
}

// stoppedWithNothingConverted stops run and checks that it converted no
// code and wrote nothing into dir.
func stoppedWithNothingConverted(t *testing.T, run *appCreateRun, gh *githubtest.Server, dir string) {
	t.Helper()
	run.cancel()
	require.Equal(t, exitFailed, <-run.code)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries)
	for _, r := range gh.Requests() {
		require.NotContains(t, r.Path, "app-manifests", "no conversion")
	}
}

func TestAppCreateBadUsage(t *testing.T) {
	dir := t.TempDir()
	taken := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(taken, "app.pem"), []byte("a live key"), 0o600))
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no url", []string{"--dir", dir}, "--url is required"},
		{"bad url", []string{"--url", "ftp://x", "--dir", dir}, "not an http(s) URL"},
		{"bad github url", []string{"--url", "https://g.test", "--github-url", "github.com", "--dir", dir}, "--github-url"},
		{"public listener", []string{"--url", "https://g.test", "--listen", "0.0.0.0:0", "--dir", dir}, "loopback"},
		{"org with a slash", []string{"--url", "https://g.test", "--org", "a/b", "--dir", dir}, "--org"},
		{"no such dir", []string{"--url", "https://g.test", "--dir", filepath.Join(dir, "missing")}, "not a directory"},
		{"would overwrite", []string{"--url", "https://g.test", "--dir", taken}, "never overwrites"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := run(t, append([]string{"app-create"}, tc.args...)...)
			require.Equal(t, exitUsage, code)
			require.Contains(t, errOut, tc.want)
			require.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %q", errOut)
		})
	}
	got, err := os.ReadFile(filepath.Join(taken, "app.pem"))
	require.NoError(t, err)
	require.Equal(t, "a live key", string(got))
}

// keptDir is the directory a failed save names as holding the App's
// credentials, checked to hold each of them, private.
func keptDir(t *testing.T, text string, want map[string]string) string {
	t.Helper()
	m := regexp.MustCompile(`kept in (\S+) \(mode 0600\)`).FindStringSubmatch(text)
	require.Len(t, m, 2, "the failure says where the credentials are kept: %s", text)
	for name, content := range want {
		path := filepath.Join(m[1], name)
		st, err := os.Stat(path)
		require.NoError(t, err, name)
		require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), name)
		got, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Equal(t, content, string(got), name)
	}
	return m[1]
}

// GitHub hands an App's credentials out once. When one of the four files
// cannot be put in place (it appeared meanwhile), none is: the ones placed
// are taken back, the one there is left alone, and the failure names where
// all four are kept.
func TestAppCreateKeepsTheCredentialsWhenAFileCannotBeWritten(t *testing.T) {
	gh := githubtest.New(t)
	dir := t.TempDir()
	run := startAppCreate(t, "--url", "https://gate.example.test", "--github-url", gh.URL(), "--api-url", gh.URL(), "--dir", dir)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "webhook-secret"), []byte("another App's"), 0o600))
	_, clientSecret := gh.OAuthClient()
	resp, page := browse(t, run.page)
	require.Equal(t, http.StatusBadGateway, resp.StatusCode, page)
	require.Equal(t, exitFailed, <-run.code)
	apps := gh.ManifestApps()
	require.Len(t, apps, 1)
	keptDir(t, html.UnescapeString(page), map[string]string{"app-id": strconv.FormatInt(gh.AppID(), 10) + "\n",
		"app.pem": string(gh.AppPrivateKeyPEM()), "webhook-secret": apps[0].WebhookSecret, "oauth-client-secret": clientSecret})
	require.NotContains(t, page, apps[0].WebhookSecret)
	require.NotContains(t, page, clientSecret)
	require.NoFileExists(t, filepath.Join(dir, "app-id"), "taken back: the four go in place together")
	require.NoFileExists(t, filepath.Join(dir, "app.pem"))
	got, err := os.ReadFile(filepath.Join(dir, "webhook-secret"))
	require.NoError(t, err)
	require.Equal(t, "another App's", string(got))
}

// newManifestCode registers an App on the fake GitHub, as the browser's post
// of the manifest form does, and returns the one-time code of its redirect.
func newManifestCode(t *testing.T, gh *githubtest.Server) string {
	t.Helper()
	manifest, err := json.Marshal(bot.NewManifest("gate", "https://gate.example.test"))
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(manifest, &m))
	m["redirect_url"] = "http://127.0.0.1:1/callback"
	manifest, err = json.Marshal(m)
	require.NoError(t, err)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.PostForm(strings.TrimSuffix(gh.URL(), "/")+"/settings/apps/new?state=s", url.Values{"manifest": {string(manifest)}})
	require.NoError(t, err)
	_ = resp.Body.Close()
	back, err := url.Parse(resp.Header.Get("Location"))
	require.NoError(t, err)
	require.NotEmpty(t, back.Query().Get("code"))
	return back.Query().Get("code")
}

// A second callback (a second tab's App) converts its code after the first
// App's files are in place: its credentials are kept where the failure says,
// not lost, and the first App's files are untouched.
func TestAppCreateSecondCallbackKeepsItsApp(t *testing.T) {
	gh := githubtest.New(t)
	dir := t.TempDir()
	api, err := url.Parse(strings.TrimSuffix(gh.URL(), "/") + "/")
	require.NoError(t, err)
	f := &manifestFlow{opts: appCreateOptions{apiURL: api, dir: dir}}
	first, second := newManifestCode(t, gh), newManifestCode(t, gh)
	require.NoError(t, f.convert(context.Background(), first).err)
	res := f.convert(context.Background(), second)
	require.Error(t, res.err)
	apps := gh.ManifestApps()
	require.Len(t, apps, 2)
	require.True(t, apps[1].Converted)
	keptDir(t, res.err.Error(), map[string]string{"webhook-secret": apps[1].WebhookSecret, "app.pem": string(gh.AppPrivateKeyPEM())})
	got, err := os.ReadFile(filepath.Join(dir, "webhook-secret"))
	require.NoError(t, err)
	require.Equal(t, apps[0].WebhookSecret, string(got), "the first App's files stay")
}
