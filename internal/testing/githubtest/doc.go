// Package githubtest is an in-process fake of the GitHub REST API for the
// bot's tests. Every request is checked against the 2021 OpenAPI subset in
// testdata/github/openapi (kin-openapi): a request outside it (unknown path
// or method, bad parameter, bad body) is answered 404/422 AND reported with
// t.Errorf, so the test fails. Answers are built from the spec's schemas and
// validated before they are written, so the bot decodes documented shapes.
// New takes a TB, which testing.TB satisfies and a program (shardgate demo)
// can implement.
//
// # Wiring the bot to the fake
//
// Set the API URL to srv.URL() (it ends in "/") and use it as go-github's
// BaseURL directly, not through WithEnterpriseURLs, which appends "api/v3/":
//
//	client := github.NewClient(httpClient)
//	client.BaseURL, _ = url.Parse(srv.URL())
//
// ghinstallation authenticates against the fake end to end:
//
//	itr, _ := ghinstallation.New(http.DefaultTransport, srv.AppID(), installationID, srv.AppPrivateKeyPEM())
//	itr.BaseURL = strings.TrimSuffix(srv.URL(), "/")
//
// # Behaviour worth knowing
//
//   - Repositories belong to one installation (DefaultInstallationID unless
//     InInstallation is given); other installations' tokens get 404.
//   - go-github v60's Issues.RemoveLabelForIssue does not escape the label;
//     the spec's {name} is one path segment, so pass url.PathEscape(label)
//     for names with "/" such as "policy-exception/<rule>".
//   - A GitHub App's user sign-in works end to end (oauth.go): SignInBrowser
//     names who is signed in to GitHub in the browser; GET
//     /login/oauth/authorize (web, not REST) redirects back with a code and
//     the state; POST /login/oauth/access_token trades it once for a ghu_
//     token (OAuthClient's id and secret, the same redirect_uri); GET /user
//     and team memberships answer for that token.
//   - Tarball links redirect to a one-off URL on this server that streams
//     `git archive` of the commit with GitHub's "<owner>-<repo>-<sha7>/"
//     prefix; the link expires after five minutes.
//   - Comments and labels written through the API are by BotLogin; labels
//     added by a person come from AddLabel and record that actor.
//   - A 403 from FailNext is GitHub's secondary rate limit error; go-github
//     then refuses further calls on that client until Retry-After passes.
//   - Inject fails the next N matching requests (Pattern "" matches all): with
//     a status, after doing the work (After: a creation whose answer was
//     lost), with a TCP reset, or by hanging until the client gives up.
//   - Check runs keep their external_id; listing them for a ref filters by
//     check_name, status and app_id, and filter=latest (the default) keeps the
//     newest run of each name.
//   - Every JSON answer to a GET carries an ETag, a strong hash of its body;
//     a GET whose If-None-Match names it (W/ forms and lists too) is answered
//     304 Not Modified with no body, logged with Status 304, and not counted
//     against the primary rate limit (WithRateLimits). The 2021 subset lists
//     304 for few GETs; kin-openapi does not validate a 304 answer.
//   - Operations of the subset the bot has no use for (team membership
//     PUT/DELETE, contents PUT/DELETE) answer 501 and fail the test.
package githubtest
