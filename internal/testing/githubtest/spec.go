package githubtest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/shardgate/shardgate"
)

// specFile is the GitHub REST subset every request is checked against; see
// testdata/PROVENANCE.md section 4 (a 2021 description, OpenAPI 3.0.3). It
// is read from the fixtures embedded in the module's root package, so the
// fake works from any working directory and inside a built binary (the demo).
const specFile = "openapi/api.github.com.subset.json"

type spec struct {
	doc    *openapi3.T
	router routers.Router
}

var (
	specOnce sync.Once
	specVal  *spec
	specErr  error
)

// loadSpec parses the subset once per test binary: the document is read-only
// after loading and is shared by every Server.
func loadSpec() (*spec, error) {
	specOnce.Do(func() {
		data, err := fs.ReadFile(shardgate.GitHubFixtures(), specFile)
		if err != nil {
			specErr = fmt.Errorf("read github openapi subset: %w", err)
			return
		}
		loader := openapi3.NewLoader()
		doc, err := loader.LoadFromData(data)
		if err != nil {
			specErr = fmt.Errorf("load github openapi subset: %w", err)
			return
		}
		if err := doc.Validate(loader.Context); err != nil {
			specErr = fmt.Errorf("validate github openapi subset: %w", err)
			return
		}
		// Route on the path alone: the spec's server is https://api.github.com
		// while the fake listens on a loopback port.
		doc.Servers = nil
		router, err := legacy.NewRouter(doc)
		if err != nil {
			specErr = fmt.Errorf("route github openapi subset: %w", err)
			return
		}
		specVal = &spec{doc: doc, router: router}
	})
	return specVal, specErr
}

var validationOptions = &openapi3filter.Options{
	AuthenticationFunc:                openapi3filter.NoopAuthenticationFunc,
	MultiError:                        true,
	RejectWhenRequestBodyNotSpecified: true,
}

// validateRequest checks method, path, parameters and body. body is the
// already-read request body; the request's Body is replaced with a copy.
func (sp *spec) validateRequest(r *http.Request, body []byte) (*routers.Route, map[string]string, error) {
	routed := r.Clone(r.Context())
	routed.URL.Path, routed.URL.RawPath = routingPath(r.URL.EscapedPath()), ""
	route, params, err := sp.router.FindRoute(routed)
	if err != nil {
		return nil, nil, fmt.Errorf("find route: %w", err)
	}
	for k, v := range params {
		// The legacy router lets a trailing parameter match nothing
		// ("/pulls" matches "/pulls/{pull_number}"); GitHub answers 404.
		if v == "" {
			return nil, nil, fmt.Errorf("find route: empty %s: %w", k, &routers.RouteError{Reason: routers.ErrPathNotFound.Error()})
		}
		if params[k], err = url.PathUnescape(v); err != nil {
			return nil, nil, fmt.Errorf("unescape %s: %w", k, err)
		}
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	in := &openapi3filter.RequestValidationInput{
		Request:    r,
		PathParams: params,
		Route:      route,
		Options:    validationOptions,
	}
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
		return route, params, fmt.Errorf("validate request: %w", err)
	}
	return route, params, nil
}

// greedyParams are the last path parameters GitHub lets span several
// segments: a file path, and refs such as "feature/x" or "main...feature/x".
var greedyParams = map[string]bool{"contents": true, "tarball": true, "compare": true}

// routingPath keeps escaped segments escaped (a label "a/b" arrives as
// "a%2Fb") and folds a greedy parameter's segments into one, because the
// router matches one segment per parameter.
func routingPath(escaped string) string {
	segs := strings.Split(escaped, "/")
	if len(segs) > 6 && segs[1] == "repos" && greedyParams[segs[4]] {
		segs = append(segs[:5], strings.Join(segs[5:], "%2F"))
	}
	return strings.Join(segs, "/")
}

// validateResponse checks the fake's own answer, so the bot is tested
// against documented shapes rather than whatever the fake happens to write.
func validateResponse(r *http.Request, route *routers.Route, params map[string]string, status int, header http.Header, body []byte) error {
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request:    r,
			PathParams: params,
			Route:      route,
			Options:    validationOptions,
		},
		Status:  status,
		Header:  header,
		Options: validationOptions,
	}
	in.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		return fmt.Errorf("validate response: %w", err)
	}
	return nil
}
