package githubtest

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"path"
	"strings"
	"time"
)

// codeloadPrefix is where tarball downloads are served, standing in for
// codeload.github.com; it is outside the API spec and not validated.
const codeloadPrefix = "/_codeload/"

// downloadTTL is how long a tarball link stays valid, like GitHub's
// short-lived codeload tokens.
const downloadTTL = 5 * time.Minute

type download struct {
	owner, name, sha string
	expires          time.Time
}

// refOf resolves the ref query parameter or path parameter, defaulting to
// the default branch; callers hold s.mu.
func (r *repo) resolve(ref string) (string, bool) {
	if r.git == nil {
		return "", false
	}
	if ref == "" {
		ref = r.defaultBranch
	}
	sha, err := r.git.Resolve(ref)
	return sha, err == nil
}

func (s *Server) contentURLs(r *repo, sha, p, typ string) map[string]any {
	self := fmt.Sprintf("%srepos/%s/contents/%s?ref=%s", s.URL(), r.fullName(), p, sha)
	html := fmt.Sprintf("https://github.example/%s/%s/%s/%s", r.fullName(), map[bool]string{true: "tree", false: "blob"}[typ == "dir"], sha, p)
	git := fmt.Sprintf("%srepos/%s/git/%ss/%s", s.URL(), r.fullName(), map[bool]string{true: "tree", false: "blob"}[typ == "dir"], sha)
	var dl any
	if typ == "file" {
		dl = fmt.Sprintf("https://raw.github.example/%s/%s/%s", r.fullName(), sha, p)
	}
	return map[string]any{
		"url": self, "html_url": html, "git_url": git, "download_url": dl,
		"_links": map[string]any{"self": self, "html": html, "git": git},
	}
}

func getContent(s *Server, c *call) reply {
	r, found := s.repoOf(c)
	if !found {
		return notFound()
	}
	sha, found := r.resolve(c.r.URL.Query().Get("ref"))
	if !found {
		return notFound()
	}
	p := strings.Trim(c.params["path"], "/")
	typ, err := r.git.objectType(sha, p)
	if err != nil {
		return notFound()
	}
	if typ == "tree" {
		entries, err := r.git.tree(sha, p)
		if err != nil {
			return notFound()
		}
		out := []any{}
		for _, e := range entries {
			child := path.Join(p, e.Name)
			kind := map[string]string{"blob": "file", "tree": "dir", "commit": "submodule"}[e.Type]
			out = append(out, merge(map[string]any{
				"type": kind, "size": 0, "name": e.Name, "path": child, "sha": e.SHA,
			}, s.contentURLs(r, sha, child, kind)))
		}
		return ok(out)
	}
	content, blobSHA, err := r.git.blob(sha, p)
	if err != nil {
		return notFound()
	}
	return ok(merge(s.spec.skeleton("content-file"), merge(map[string]any{
		"type": "file", "encoding": "base64", "size": len(content), "name": path.Base(p), "path": p,
		"content": wrapBase64(content), "sha": blobSHA,
	}, s.contentURLs(r, sha, p, "file"))))
}

// wrapBase64 breaks the encoding into 60-character lines as GitHub does;
// clients must strip the newlines before decoding.
func wrapBase64(b []byte) string {
	enc := base64.StdEncoding.EncodeToString(b)
	var sb strings.Builder
	for len(enc) > 60 {
		sb.WriteString(enc[:60] + "\n")
		enc = enc[60:]
	}
	sb.WriteString(enc + "\n")
	return sb.String()
}

func (s *Server) diffEntries(r *repo, base, head string) ([]any, error) {
	files, err := r.git.diff(base, head)
	if err != nil {
		return nil, err
	}
	out := []any{}
	for _, f := range files {
		out = append(out, merge(s.spec.skeleton("diff-entry"), map[string]any{
			"sha": f.BlobSHA, "filename": f.Path, "status": f.Status,
			"additions": f.Additions, "deletions": f.Deletions, "changes": f.Additions + f.Deletions,
			"blob_url":     fmt.Sprintf("https://github.example/%s/blob/%s/%s", r.fullName(), head, f.Path),
			"raw_url":      fmt.Sprintf("https://github.example/%s/raw/%s/%s", r.fullName(), head, f.Path),
			"contents_url": fmt.Sprintf("%srepos/%s/contents/%s?ref=%s", s.URL(), r.fullName(), f.Path, head),
		}))
	}
	return out, nil
}

// listPullFiles diffs the head against the merge base, like GitHub's
// three-dot comparison.
func listPullFiles(s *Server, c *call) reply {
	r, pr, found := s.issueOf(c)
	if !found || r.git == nil {
		return notFound()
	}
	mb, err := r.git.mergeBase(pr.BaseSHA, pr.HeadSHA)
	if err != nil {
		return reply{status: http.StatusInternalServerError, body: errorBody("merge base: " + err.Error())}
	}
	files, err := s.diffEntries(r, mb, pr.HeadSHA)
	if err != nil {
		return reply{status: http.StatusInternalServerError, body: errorBody(err.Error())}
	}
	return paginate(c, files)
}

func (s *Server) commitJSON(r *repo, sha string) map[string]any {
	msg, _ := r.git.run(nil, "log", "-1", "--format=%B", sha)
	return merge(s.spec.skeleton("commit"), map[string]any{
		"sha": sha, "node_id": nodeID("Commit", int64(len(sha))),
		"url":          fmt.Sprintf("%srepos/%s/commits/%s", s.URL(), r.fullName(), sha),
		"html_url":     fmt.Sprintf("https://github.example/%s/commit/%s", r.fullName(), sha),
		"comments_url": fmt.Sprintf("%srepos/%s/commits/%s/comments", s.URL(), r.fullName(), sha),
		"commit":       map[string]any{"message": strings.TrimSpace(msg)},
		"author":       nil, "committer": nil,
	})
}

func compareCommits(s *Server, c *call) reply {
	r, found := s.repoOf(c)
	if !found {
		return notFound()
	}
	baseRef, headRef, okSplit := strings.Cut(c.params["basehead"], "...")
	if !okSplit {
		return notFound()
	}
	base, okBase := r.resolve(baseRef)
	head, okHead := r.resolve(headRef)
	if !okBase || !okHead {
		return notFound()
	}
	mb, err := r.git.mergeBase(base, head)
	if err != nil {
		return notFound()
	}
	ahead, err1 := r.git.commitsBetween(base, head)
	behind, err2 := r.git.commitsBetween(head, base)
	files, err3 := s.diffEntries(r, mb, head)
	if err1 != nil || err2 != nil || err3 != nil {
		return reply{status: http.StatusInternalServerError, body: errorBody("compare failed")}
	}
	status := "identical"
	switch {
	case len(ahead) > 0 && len(behind) > 0:
		status = "diverged"
	case len(ahead) > 0:
		status = "ahead"
	case len(behind) > 0:
		status = "behind"
	}
	commits := []any{}
	for _, sha := range ahead {
		commits = append(commits, s.commitJSON(r, sha))
	}
	u := fmt.Sprintf("%srepos/%s/compare/%s", s.URL(), r.fullName(), c.params["basehead"])
	return ok(merge(s.spec.skeleton("commit-comparison"), map[string]any{
		"url": u, "html_url": u, "permalink_url": u, "diff_url": u + ".diff", "patch_url": u + ".patch",
		"base_commit": s.commitJSON(r, base), "merge_base_commit": s.commitJSON(r, mb),
		"status": status, "ahead_by": len(ahead), "behind_by": len(behind),
		"total_commits": len(ahead), "commits": commits, "files": files,
	}))
}

// tarballLink answers 302 to a one-off download URL on this server.
func tarballLink(s *Server, c *call) reply {
	r, found := s.repoOf(c)
	if !found {
		return notFound()
	}
	sha, found := r.resolve(c.params["ref"])
	if !found {
		return notFound()
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	tok := hex.EncodeToString(b)
	if s.downloads == nil {
		s.downloads = map[string]download{}
	}
	s.downloads[tok] = download{owner: r.owner, name: r.name, sha: sha, expires: s.now().Add(downloadTTL)}
	loc := fmt.Sprintf("%s%s/%s/legacy.tar.gz/%s?token=%s", strings.TrimSuffix(s.URL(), "/"), codeloadPrefix+r.owner, r.name, sha, tok)
	return reply{status: http.StatusFound, header: http.Header{"Location": {loc}}}
}

// serveDownload streams `git archive` of the commit with GitHub's
// "<owner>-<repo>-<short sha>/" prefix and returns the status it wrote.
func (s *Server) serveDownload(w http.ResponseWriter, r *http.Request) int {
	s.mu.Lock()
	d, found := s.downloads[r.URL.Query().Get("token")]
	var rp *repo
	if found {
		rp = s.repos[d.owner+"/"+d.name]
	}
	expired := found && s.now().After(d.expires)
	s.mu.Unlock()
	if !found || rp == nil || expired || !strings.HasSuffix(r.URL.Path, "/"+d.sha) {
		writeJSON(w, notFound())
		return http.StatusNotFound
	}
	short := d.sha[:7]
	w.Header().Set("Content-Type", "application/x-gzip")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%s-%s-%s.tar.gz", d.owner, d.name, short))
	prefix := fmt.Sprintf("--prefix=%s-%s-%s/", d.owner, d.name, short)
	if _, err := rp.git.run(w, "archive", "--format=tar.gz", prefix, d.sha); err != nil {
		s.t.Errorf("githubtest: archive %s: %v", d.sha, err)
	}
	return http.StatusOK
}
