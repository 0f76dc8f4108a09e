// Package pullreq names a pull request the way shardgate keys everything it
// keeps about one: by installation, repository and number.
package pullreq

import "fmt"

// Ref names one pull request of one installation.
type Ref struct {
	Installation int64  `json:"installation"`
	Owner        string `json:"owner"`
	Repo         string `json:"repo"`
	Number       int    `json:"number"`
}

// FullName is "owner/repo".
func (p Ref) FullName() string { return p.Owner + "/" + p.Repo }

// Key orders a repository's pull requests by number.
func (p Ref) Key() string { return fmt.Sprintf("%s/%s#%08d", p.Owner, p.Repo, p.Number) }

func (p Ref) String() string { return fmt.Sprintf("%s/%s#%d", p.Owner, p.Repo, p.Number) }

// ShortSHA is the first seven characters of a commit SHA, as GitHub shows it.
func ShortSHA(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}
