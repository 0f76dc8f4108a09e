package main

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/go-github/v60/github"

	"github.com/shardgate/shardgate/bot"
)

// manifestFlow is GitHub's "register a GitHub App from a manifest" flow, as
// probot and go-githubapp run it: a local page posts the manifest to GitHub,
// GitHub redirects back with a one-hour code, and the code is converted into
// the App's id, private key and webhook secret.
type manifestFlow struct {
	opts     appCreateOptions
	state    string // sent with the form, required back: no other page can hand us a code
	redirect string
	done     chan manifestResult
	// hosts are the Host headers the page answers to: its own address
	// (127.0.0.1:PORT) and localhost:PORT. Another name is one rebound to
	// loopback by a page of another origin, which could then read the page
	// and its state: it gets 421.
	hosts map[string]bool
	// browser is the cookie the first browser to load the page gets; the
	// callback counts only from that browser, so the state alone, wherever
	// it was read, completes nothing.
	browser string
	mu      sync.Mutex
	issued  bool
}

// flowCookie names the cookie that ties the callback to the browser that
// loaded the page.
const flowCookie = "shardgate_app_create"

// pageHosts are the Host headers of a page served at addr (a loopback
// host:port): addr itself and localhost with its port.
func pageHosts(addr string) map[string]bool {
	_, port, _ := net.SplitHostPort(addr)
	return map[string]bool{strings.ToLower(addr): true, "localhost:" + port: true, "127.0.0.1:" + port: true}
}

// fromBrowser says whether r carries the cookie the page gave.
func (f *manifestFlow) fromBrowser(r *http.Request) bool {
	c, err := r.Cookie(flowCookie)
	return err == nil && subtle.ConstantTimeCompare([]byte(c.Value), []byte(f.browser)) == 1
}

type manifestResult struct {
	appID         int64
	slug, htmlURL string
	clientID      string // the App's OAuth client id (not secret)
	err           error
}

// manifestCode is what a conversion code looks like; anything else is not
// put into the API path.
var manifestCode = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]{1,100}$`) })

var manifestPage = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("page").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>Create the {{.Name}} GitHub App</title></head>
<body>
<h1>Create the {{.Name}} GitHub App</h1>
<p>This posts the App manifest (its webhook {{.Hook}}, the events and the least permissions shardgate needs) to {{.Action}}. GitHub asks you to confirm, then sends you back here.</p>
<form method="post" action="{{.Action}}">
<input type="hidden" name="manifest" value="{{.Manifest}}">
<button type="submit">Create the GitHub App on GitHub</button>
</form>
</body></html>
`))
})

var manifestDonePage = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("done").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>{{.Title}}</title></head>
<body><h1>{{.Title}}</h1><p>{{.Text}}</p></body></html>
`))
})

func (f *manifestFlow) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !f.hosts[strings.ToLower(r.Host)] {
		http.Error(w, "this page answers only at "+strings.TrimSuffix(f.redirect, "callback"), http.StatusMisdirectedRequest)
		return
	}
	w.Header().Set("Content-Security-Policy", "default-src 'none'; form-action 'self' "+f.opts.webURL.Scheme+"://"+f.opts.webURL.Host)
	w.Header().Set("Referrer-Policy", "no-referrer")
	switch r.URL.Path {
	case "/":
		f.servePage(w, r)
	case "/callback":
		f.serveCallback(w, r)
	default:
		http.NotFound(w, r)
	}
}

// formAction is GitHub's "new App" page for the user or the organisation.
func (f *manifestFlow) formAction() string {
	path := "settings/apps/new"
	if f.opts.org != "" {
		path = "organizations/" + f.opts.org + "/settings/apps/new"
	}
	return f.opts.webURL.String() + path + "?state=" + f.state
}

func (f *manifestFlow) servePage(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	other := f.issued && !f.fromBrowser(r)
	f.issued = true
	f.mu.Unlock()
	if other {
		done(w, http.StatusConflict, "Opened in another browser", "This page was already opened in another browser, which alone can finish the flow; "+
			"use that one, or stop app-create and start it again.")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: flowCookie, Value: f.browser, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode})
	m := bot.NewManifest(f.opts.name, f.opts.publicURL)
	m.RedirectURL = f.redirect
	raw, err := json.Marshal(m)
	if err != nil {
		http.Error(w, "encode the manifest", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = manifestPage().Execute(w, map[string]string{
		"Name": f.opts.name, "Hook": m.HookAttributes.URL, "Action": f.formAction(), "Manifest": string(raw),
	})
}

// serveCallback takes GitHub's redirect. A wrong state or a malformed code is
// refused and the flow keeps waiting; a conversion ends it either way (a code
// is good once).
func (f *manifestFlow) serveCallback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if !f.fromBrowser(r) {
		done(w, http.StatusForbidden, "Not the browser that opened the page", "Finish the flow in the browser that opened the page app-create printed.")
		return
	}
	if q.Get("state") != f.state {
		done(w, http.StatusBadRequest, "Not from this app-create", "The state does not match the one this page sent; start again from the page app-create printed.")
		return
	}
	code := q.Get("code")
	if !manifestCode().MatchString(code) {
		done(w, http.StatusBadRequest, "No code", "GitHub's redirect carried no usable code.")
		return
	}
	res := f.convert(r.Context(), code)
	if res.err != nil {
		done(w, http.StatusBadGateway, "The App was not saved", res.err.Error())
	} else {
		done(w, http.StatusOK, "GitHub App created", fmt.Sprintf("The App %s (id %d) is saved; the terminal shows the configuration to add. You can close this page.", res.slug, res.appID))
	}
	select {
	case f.done <- res:
	default: // a second callback after the first: the command is already ending
	}
}

// redactCode keeps the one-time code out of a transport error's text.
func redactCode(err error, code string) error {
	return errors.New(strings.ReplaceAll(err.Error(), code, "CODE"))
}

func done(w http.ResponseWriter, status int, title, text string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = manifestDonePage().Execute(w, map[string]string{"Title": title, "Text": text})
}

// convert exchanges the code for the App (POST /app-manifests/{code}/conversions,
// unauthenticated: the code is the credential) and writes its credentials.
func (f *manifestFlow) convert(ctx context.Context, code string) manifestResult {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	client := github.NewClient(&http.Client{Timeout: time.Minute})
	client.BaseURL = f.opts.apiURL
	cfg, _, err := client.Apps.CompleteAppManifest(ctx, code)
	if err != nil {
		// go-github's error names the URL, which holds the code: say only
		// what GitHub answered.
		var gerr *github.ErrorResponse
		if errors.As(err, &gerr) && gerr.Response != nil {
			return manifestResult{err: fmt.Errorf("convert the manifest code at %s: GitHub answered %s: %s", f.opts.apiURL, gerr.Response.Status, gerr.Message)}
		}
		return manifestResult{err: fmt.Errorf("convert the manifest code at %s: %w", f.opts.apiURL, redactCode(err, code))}
	}
	if cfg.GetID() == 0 || cfg.GetPEM() == "" || cfg.GetWebhookSecret() == "" || cfg.GetClientID() == "" || cfg.GetClientSecret() == "" {
		return manifestResult{err: errors.New("convert the manifest code: GitHub's answer lacks the App id, private key, webhook secret or OAuth client")}
	}
	if !manifestCode().MatchString(strings.ReplaceAll(cfg.GetClientID(), ".", "")) {
		return manifestResult{err: errors.New("convert the manifest code: GitHub's answer holds a client id that is not letters, digits, '.', '-' and '_'")}
	}
	files := []appFile{
		{appIDFile, strconv.FormatInt(cfg.GetID(), 10) + "\n"},
		{appKeyFile, cfg.GetPEM()},
		{appWebhookSecFile, cfg.GetWebhookSecret()},
		{appOAuthSecFile, cfg.GetClientSecret()},
	}
	if err := saveAppFiles(f.opts.dir, files); err != nil {
		return manifestResult{err: fmt.Errorf("the App %s (id %d) was created on GitHub: %w", cfg.GetSlug(), cfg.GetID(), err)}
	}
	return manifestResult{appID: cfg.GetID(), slug: cfg.GetSlug(), htmlURL: cfg.GetHTMLURL(), clientID: cfg.GetClientID()}
}

// appFile is one of the App's credentials and the name it is saved under.
type appFile struct{ name, content string }

// saveMu makes one callback's files go into place before another's: two
// Apps' files are never mixed.
var saveMu sync.Mutex

// saveAppFiles saves the App's credentials in dir. GitHub hands them out
// once, so nothing may be lost: each is first written to a private directory
// of its own beside them (.app-create-*, or in the system's temporary
// directory when dir takes none), then linked into place, never over a file
// that exists. Should a step fail, the files put in place are taken back and
// the private directory is kept, and the error says where.
func saveAppFiles(dir string, files []appFile) error {
	saveMu.Lock()
	defer saveMu.Unlock()
	keep, err := os.MkdirTemp(dir, ".app-create-")
	if err != nil {
		if keep, err = os.MkdirTemp("", "shardgate-app-create-"); err != nil {
			return fmt.Errorf("save its credentials: %w", err)
		}
	}
	kept := func(err error) error {
		return fmt.Errorf("%w; the credentials GitHub gave are kept in %s (mode 0600): move them into place by hand", err, keep)
	}
	for _, file := range files {
		if err := writeSecretFile(filepath.Join(keep, file.name), file.content); err != nil {
			return kept(err)
		}
	}
	var placed []string
	for _, file := range files {
		path := filepath.Join(dir, file.name)
		if err := os.Link(filepath.Join(keep, file.name), path); err != nil {
			for _, p := range placed {
				_ = os.Remove(p)
			}
			return kept(fmt.Errorf("put %s in place: %w", path, err))
		}
		placed = append(placed, path)
	}
	_ = os.RemoveAll(keep) // its files are in place
	return nil
}

// writeSecretFile creates a file readable by its owner only; it never
// replaces one (O_EXCL), so a second run cannot clobber a live App's key.
func writeSecretFile(path, content string) error {
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := fh.WriteString(content); err != nil {
		_ = fh.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := fh.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
