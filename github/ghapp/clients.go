// Package ghapp is shardgate's access to GitHub as an App: clients
// authenticated per installation, the retry policy every GitHub call goes
// through, tarball checkout of a commit, and the table of the API calls
// shardgate makes (the source of the App manifest's permissions).
package ghapp

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v60/github"
	lru "github.com/hashicorp/golang-lru/v2"
)

// UserAgent identifies shardgate to GitHub.
const UserAgent = "shardgate"

// ClientCreator makes GitHub clients authenticated as one installation of the
// App. Implementations cache clients per installation id.
type ClientCreator interface {
	NewInstallationClient(installationID int64) (*github.Client, error)
	// InstallationHTTPClient is the authenticated transport of that
	// installation, for downloads (tarballs) go-github does not wrap.
	InstallationHTTPClient(installationID int64) (*http.Client, error)
}

// MaxInstallationClients bounds the installation clients kept: the least
// recently used goes first, and is made again (with a new token) when its
// installation sends an event again.
const MaxInstallationClients = 1024

// CachingClientCreator authenticates as each installation of the App through
// ghinstallation, keeping one client per installation id so tokens are reused
// (the most recently used MaxInstallationClients of them).
type CachingClientCreator struct {
	apiURL *url.URL
	appID  int64
	key    []byte
	base   http.RoundTripper

	mu      sync.Mutex // one client made per installation, even when asked at once
	clients *lru.Cache[int64, *installationClient]
	budgets *Budgets
	etags   *ETagCache
	pace    Pace
	sleep   func(context.Context, time.Duration) error
}

type installationClient struct {
	http *http.Client
	gh   *github.Client
}

var _ ClientCreator = (*CachingClientCreator)(nil)

// NewClientCreator returns a ClientCreator for the App appID with its PEM
// private key. base is the transport under authentication (nil: a retrying
// http.DefaultTransport).
func NewClientCreator(apiURL string, appID int64, privateKeyPEM []byte, base http.RoundTripper) (*CachingClientCreator, error) {
	u, err := url.Parse(apiURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("new client creator: api url %q is not a URL", apiURL)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	if _, err := ghinstallation.NewAppsTransport(http.DefaultTransport, appID, privateKeyPEM); err != nil {
		return nil, fmt.Errorf("new client creator: private key: %w", err)
	}
	if base == nil {
		base = NewRetryTransport(http.DefaultTransport)
	}
	clients, err := lru.New[int64, *installationClient](MaxInstallationClients)
	if err != nil {
		return nil, fmt.Errorf("new client creator: %w", err)
	}
	return &CachingClientCreator{apiURL: u, appID: appID, key: privateKeyPEM, base: base, clients: clients,
		budgets: NewBudgets(nil), etags: NewETagCache(0, 0, 0), pace: DefaultPace()}, nil
}

// SetPace sets how each installation's requests are paced (default
// DefaultPace); call it before the clients are used.
func (c *CachingClientCreator) SetPace(p Pace) { c.pace = p }

// SetSleep replaces the pacer's wait (a timer cut short by the request's
// context) — tests move a clock instead; call it before the clients are used.
func (c *CachingClientCreator) SetSleep(sleep func(context.Context, time.Duration) error) {
	c.sleep = sleep
}

// ETags is the conditional-request cache of every installation.
func (c *CachingClientCreator) ETags() *ETagCache { return c.etags }

// Budgets is what GitHub last said about each installation's rate limits;
// the installation clients do not send a request GitHub said it would refuse.
func (c *CachingClientCreator) Budgets() *Budgets { return c.budgets }

func (c *CachingClientCreator) get(installationID int64) (*installationClient, error) {
	if installationID <= 0 {
		return nil, fmt.Errorf("github client: the event has no installation id")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if ic, ok := c.clients.Get(installationID); ok {
		return ic, nil
	}
	itr, err := ghinstallation.New(c.base, c.appID, installationID, c.key)
	if err != nil {
		return nil, fmt.Errorf("github client for installation %d: %w", installationID, err)
	}
	itr.BaseURL = strings.TrimSuffix(c.apiURL.String(), "/")
	// Outermost first: conditional requests, then pacing (a paced request
	// reserves its budget once it may go), the budget, the token.
	budgets := c.budgets
	pc := newPacer(c.pace, func() time.Time { return budgets.now() }, c.sleep,
		func(kind string, d time.Duration) { budgets.paced(installationID, kind, d) })
	var rt http.RoundTripper = &budgetTransport{next: itr, installationID: installationID, budgets: budgets}
	rt = &paceTransport{next: rt, pacer: pc, installationID: installationID}
	rt = &etagTransport{next: rt, installationID: installationID, cache: c.etags}
	hc := &http.Client{Transport: rt}
	gh := github.NewClient(hc)
	gh.BaseURL = c.apiURL
	gh.UploadURL = c.apiURL
	gh.UserAgent = UserAgent
	ic := &installationClient{http: hc, gh: gh}
	c.clients.Add(installationID, ic)
	return ic, nil
}

// NewInstallationClient returns the cached go-github client of an installation.
func (c *CachingClientCreator) NewInstallationClient(installationID int64) (*github.Client, error) {
	ic, err := c.get(installationID)
	if err != nil {
		return nil, err
	}
	return ic.gh, nil
}

// InstallationHTTPClient returns the authenticated HTTP client of an installation.
func (c *CachingClientCreator) InstallationHTTPClient(installationID int64) (*http.Client, error) {
	ic, err := c.get(installationID)
	if err != nil {
		return nil, err
	}
	return ic.http, nil
}

// Forget drops an installation's cached client (the App was uninstalled).
func (c *CachingClientCreator) Forget(installationID int64) {
	c.clients.Remove(installationID)
	c.etags.forget(installationID)
}
