package githubtest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
)

// ManifestApp is an App registered through the manifest flow: the manifest
// the browser posted and the credentials its conversion hands out once.
type ManifestApp struct {
	Org           string // "" when registered for the user
	State         string // the state the browser's form sent
	Manifest      map[string]any
	Code          string
	WebhookSecret string
	Converted     bool
}

// ManifestApps are the Apps registered through the manifest flow, in order.
func (s *Server) ManifestApps() []ManifestApp {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]ManifestApp, 0, len(s.manifestApps))
	for _, a := range s.manifestApps {
		out = append(out, *a)
	}
	return out
}

// manifestPage stands in for github.com's "Create GitHub App" page
// (POST /settings/apps/new, or /organizations/{org}/settings/apps/new): a
// person would confirm the name there; the fake registers at once and
// redirects to the manifest's redirect_url with a code and the form's state.
// It is web, not REST, so it is routed before the OpenAPI check.
func (s *Server) manifestPage(w http.ResponseWriter, r *http.Request, body []byte) (int, bool) {
	org, isOrg := strings.CutPrefix(r.URL.Path, "/organizations/")
	if isOrg {
		org, isOrg = strings.CutSuffix(org, "/settings/apps/new")
		if !isOrg || org == "" || strings.Contains(org, "/") {
			return 0, false
		}
	} else if r.URL.Path != "/settings/apps/new" {
		return 0, false
	}
	if r.Method != http.MethodPost {
		http.Error(w, "the manifest flow posts its form", http.StatusMethodNotAllowed)
		return http.StatusMethodNotAllowed, true
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return http.StatusBadRequest, true
	}
	var manifest map[string]any
	if err := json.Unmarshal([]byte(form.Get("manifest")), &manifest); err != nil {
		http.Error(w, "Invalid GitHub App configuration: the manifest is not JSON", http.StatusUnprocessableEntity)
		return http.StatusUnprocessableEntity, true
	}
	hook, _ := manifest["hook_attributes"].(map[string]any)
	redirect, _ := manifest["redirect_url"].(string)
	if name, _ := manifest["name"].(string); name == "" || hook == nil || hook["url"] == nil || redirect == "" {
		http.Error(w, "Invalid GitHub App configuration: name, hook_attributes.url and redirect_url are required", http.StatusUnprocessableEntity)
		return http.StatusUnprocessableEntity, true
	}
	back, err := url.Parse(redirect)
	if err != nil {
		http.Error(w, "Invalid GitHub App configuration: redirect_url", http.StatusUnprocessableEntity)
		return http.StatusUnprocessableEntity, true
	}
	s.mu.Lock()
	app := &ManifestApp{Org: org, State: r.URL.Query().Get("state"), Manifest: manifest, Code: randomHex(10), WebhookSecret: randomHex(20)}
	s.manifestApps = append(s.manifestApps, app)
	s.mu.Unlock()
	q := back.Query()
	q.Set("code", app.Code)
	if app.State != "" {
		q.Set("state", app.State)
	}
	back.RawQuery = q.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
	return http.StatusFound, true
}

// createFromManifest converts a code once into the App's credentials: the
// fake's own App id and key, so the new App's credentials work against it.
func createFromManifest(s *Server, c *call) reply {
	var app *ManifestApp
	for _, a := range s.manifestApps {
		if a.Code == c.params["code"] && !a.Converted {
			app = a
		}
	}
	if app == nil {
		return notFound()
	}
	app.Converted = true
	name, _ := app.Manifest["name"].(string)
	clientID, clientSecret := s.oauthLocked().clientID, s.oauthLocked().clientSecret
	owner := app.Org
	if owner == "" {
		owner = "octocat"
	}
	events := []any{}
	if e, ok := app.Manifest["default_events"].([]any); ok {
		events = e
	}
	perms := map[string]any{}
	if p, ok := app.Manifest["default_permissions"].(map[string]any); ok {
		perms = p
	}
	body := merge(s.spec.skeleton("integration"), map[string]any{
		"id": s.appID, "slug": strings.ToLower(strings.ReplaceAll(name, " ", "-")), "node_id": nodeID("Integration", s.appID),
		"name": name, "owner": s.userJSON(owner), "html_url": "https://github.example/apps/" + name,
		"external_url": app.Manifest["url"], "permissions": perms, "events": events,
		"created_at": ts(s.now()), "updated_at": ts(s.now()),
		"client_id": clientID, "client_secret": clientSecret,
		"webhook_secret": app.WebhookSecret, "pem": string(s.keyPEM),
	})
	return created(body)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
