package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The files app-create writes, in --dir; serve reads them through the
// config lines it prints.
const (
	appIDFile         = "app-id"
	appKeyFile        = "app.pem"
	appWebhookSecFile = "webhook-secret"
	// appOAuthSecFile is the App's OAuth client secret: the status page's
	// sign-in with GitHub (status.github_oauth).
	appOAuthSecFile = "oauth-client-secret"
)

func init() {
	register("app-create", command{
		summary: "create the GitHub App from its manifest in a browser; write its id, key, webhook secret and OAuth client secret",
		run:     runAppCreate,
	})
}

// appCreateOptions are app-create's checked flags.
type appCreateOptions struct {
	name, publicURL string
	webURL, apiURL  *url.URL // the GitHub web and REST bases, both ending in "/"
	org, dir        string
	listen          string
}

func runAppCreate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("app-create", "shardgate app-create --url URL [--org ORG] [--github-url URL] [--api-url URL] [--dir DIR]", stderr)
	base := fs.String("url", "", "the public base URL of this shardgate (its webhook is URL/webhook) (required)")
	name := fs.String("name", "shardgate", "the GitHub App's name")
	org := fs.String("org", "", "create the App for this organisation (default: for your user)")
	web := fs.String("github-url", "https://github.com", "GitHub's web address (GitHub Enterprise Server: https://HOST)")
	api := fs.String("api-url", "", "GitHub's REST API (default: https://api.github.com/, or GITHUB-URL/api/v3/ for GitHub Enterprise Server)")
	dir := fs.String("dir", ".", "the directory the App id, private key and webhook secret are written to (files with mode 0600)")
	listen := fs.String("listen", "127.0.0.1:0", "the loopback address of the local page the browser opens")
	if code := parseFlags(fs, args, stderr); code >= 0 {
		return code
	}
	o, err := checkAppCreateFlags(*base, *name, *org, *web, *api, *dir, *listen)
	if err != nil {
		return usageError(stderr, "app-create", "%v", err)
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return usageError(stderr, "app-create", "listen on %s: %v", o.listen, err)
	}
	page := "http://" + ln.Addr().String() + "/"
	flow := &manifestFlow{opts: o, state: randomState(), redirect: page + "callback", done: make(chan manifestResult, 1),
		hosts: pageHosts(ln.Addr().String()), browser: randomState()}
	srv := &http.Server{Handler: flow, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer func() {
		shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutCtx)
	}()
	fmt.Fprintf(stdout, "Open %s in a browser signed in to %s and confirm the App there.\n", page, strings.TrimSuffix(o.webURL.String(), "/"))
	select {
	case <-ctx.Done():
		fmt.Fprintln(stderr, "shardgate app-create: stopped before GitHub sent the App back; nothing was written")
		return exitFailed
	case res := <-flow.done:
		if res.err != nil {
			fmt.Fprintf(stderr, "shardgate app-create: %v\n", res.err)
			return exitFailed
		}
		printAppConfig(stdout, o, res)
		return exitOK
	}
}

func checkAppCreateFlags(base, name, org, web, api, dir, listen string) (appCreateOptions, error) {
	o := appCreateOptions{name: strings.TrimSpace(name), org: org, dir: dir, listen: listen}
	if base == "" {
		return o, errors.New("--url is required")
	}
	if u, err := url.Parse(base); err != nil || u.Host == "" || u.Scheme != "https" && u.Scheme != "http" {
		return o, fmt.Errorf("--url %q is not an http(s) URL", base)
	}
	o.publicURL = strings.TrimRight(base, "/")
	if o.name == "" {
		return o, errors.New("--name must not be empty")
	}
	if org != "" && strings.ContainsAny(org, "/?#% ") {
		return o, fmt.Errorf("--org %q is not an organisation login", org)
	}
	var err error
	if o.webURL, err = baseURL("--github-url", web); err != nil {
		return o, err
	}
	if api == "" {
		api = "https://api.github.com/"
		if o.webURL.Host != "github.com" {
			api = o.webURL.String() + "api/v3/"
		}
	}
	if o.apiURL, err = baseURL("--api-url", api); err != nil {
		return o, err
	}
	if host, _, err := net.SplitHostPort(listen); err != nil || !net.ParseIP(host).IsLoopback() && host != "localhost" {
		return o, fmt.Errorf("--listen %q is not a loopback host:port (the page hands out the App's credentials)", listen)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return o, fmt.Errorf("--dir %q is not a directory", dir)
	}
	for _, f := range []string{appIDFile, appKeyFile, appWebhookSecFile, appOAuthSecFile} {
		if _, err := os.Lstat(filepath.Join(dir, f)); !errors.Is(err, fs.ErrNotExist) {
			return o, fmt.Errorf("%s already exists: app-create never overwrites an App's credentials (move it away or pick another --dir)", filepath.Join(dir, f))
		}
	}
	return o, nil
}

// baseURL parses an http(s) base URL and ends it in "/".
func baseURL(flagName, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Scheme != "https" && u.Scheme != "http" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("%s %q is not an http(s) base URL", flagName, raw)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	return u, nil
}

func randomState() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// printAppConfig prints where the credentials went and the configuration
// lines that use them; never the secrets themselves.
func printAppConfig(w io.Writer, o appCreateOptions, res manifestResult) {
	abs := func(f string) string {
		p, err := filepath.Abs(filepath.Join(o.dir, f))
		if err != nil {
			return filepath.Join(o.dir, f)
		}
		return p
	}
	fmt.Fprintf(w, "Created the GitHub App %q (id %d): %s\n", res.slug, res.appID, res.htmlURL)
	fmt.Fprintf(w, "Wrote %s, %s, %s and %s (mode 0600).\n", abs(appIDFile), abs(appKeyFile), abs(appWebhookSecFile), abs(appOAuthSecFile))
	fmt.Fprintln(w, "Add to the serve configuration:")
	fmt.Fprintln(w, "github:")
	fmt.Fprintf(w, "  api_url: %s\n", o.apiURL)
	fmt.Fprintf(w, "  app_id: %d\n", res.appID)
	fmt.Fprintf(w, "  private_key_file: %s\n", abs(appKeyFile))
	fmt.Fprintf(w, "  webhook_secret_file: %s\n", abs(appWebhookSecFile))
	fmt.Fprintln(w, "status:")
	fmt.Fprintln(w, "  listen: 127.0.0.1:9092")
	fmt.Fprintln(w, "  github_oauth:")
	fmt.Fprintf(w, "    client_id: %s\n", res.clientID)
	fmt.Fprintf(w, "    client_secret_file: %s\n", abs(appOAuthSecFile))
	fmt.Fprintf(w, "Then install the App on the repositories that hold your stream Terraform: %sinstallations/new\n", strings.TrimSuffix(res.htmlURL, "/")+"/")
	fmt.Fprintln(w, "For the status page's sign-in with GitHub (status.github_oauth), set the App's callback URL on its GitHub settings page "+
		"to the status page's address and /auth/callback, e.g. https://status.example.com/auth/callback.")
}
