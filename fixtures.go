// Package shardgate holds the repository's files that programs other than
// the service need at run time, embedded so that they work from any working
// directory and from a built binary: the GitHub fixtures of the fake GitHub
// (internal/testing/githubtest) and the example stream-group module the demo commits.
// The service itself (cmd/shardgate) never imports this package.
package shardgate

import (
	"embed"
	"io/fs"
)

//go:embed testdata/github/openapi/api.github.com.subset.json testdata/github/webhooks testdata/github/webhooks-extra
var githubFixtures embed.FS

//go:embed examples/modules/stream-group
var streamGroupModule embed.FS

// GitHubFixtures is testdata/github: the GitHub REST OpenAPI subset
// (openapi/api.github.com.subset.json) and the real webhook payloads
// (webhooks/, webhooks-extra/); see testdata/PROVENANCE.md.
func GitHubFixtures() fs.FS { return sub(githubFixtures, "testdata/github") }

// StreamGroupModule is examples/modules/stream-group: main.tf, apply.sh and
// the rest of the module, at the root of the returned file system.
func StreamGroupModule() fs.FS { return sub(streamGroupModule, "examples/modules/stream-group") }

func sub(f embed.FS, dir string) fs.FS {
	s, err := fs.Sub(f, dir)
	if err != nil {
		panic("shardgate: embedded " + dir + ": " + err.Error()) // a fixed, valid path
	}
	return s
}
