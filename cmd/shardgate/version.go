package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/shardgate/shardgate/bot"
)

// commit is set at build time (-ldflags "-X main.commit=..."); the build info's
// vcs.revision is used when it is empty.
var commit string

func init() {
	register("version", command{
		summary: "print the shardgate version, commit, and Go and OPA versions",
		run:     runVersion,
	})
	register("app-manifest", command{
		summary: "print the GitHub App manifest (minimal permissions and events) for a URL",
		run:     runAppManifest,
	})
}

// buildVersions reads the module version, commit, Go and OPA versions from the
// binary's build info.
func buildVersions() (module, rev, goVersion, opa string) {
	module, rev, goVersion, opa = "(devel)", commit, runtime.Version(), "unknown"
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return
	}
	if v := info.Main.Version; v != "" {
		module = v
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && rev == "" {
			rev = s.Value
		}
	}
	for _, d := range info.Deps {
		if d.Path == "github.com/open-policy-agent/opa" {
			opa = d.Version
		}
	}
	if rev == "" {
		rev = "unknown"
	}
	return
}

func runVersion(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("version", "shardgate version", stderr)
	if code := parseFlags(fs, args, stderr); code >= 0 {
		return code
	}
	module, rev, goVersion, opa := buildVersions()
	fmt.Fprintf(stdout, "shardgate %s\ncommit %s\ngo %s\nopa %s\n", module, rev, goVersion, opa)
	return exitOK
}

func runAppManifest(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("app-manifest", "shardgate app-manifest --url URL [--name NAME]", stderr)
	base := fs.String("url", "", "the public base URL of this shardgate (its webhook is URL/webhook) (required)")
	name := fs.String("name", "shardgate", "the GitHub App's name")
	if code := parseFlags(fs, args, stderr); code >= 0 {
		return code
	}
	if *base == "" {
		return usageError(stderr, "app-manifest", "--url is required")
	}
	u, err := url.Parse(*base)
	if err != nil || u.Host == "" || u.Scheme != "https" && u.Scheme != "http" {
		return usageError(stderr, "app-manifest", "--url %q is not an http(s) URL", *base)
	}
	if strings.TrimSpace(*name) == "" {
		return usageError(stderr, "app-manifest", "--name must not be empty")
	}
	out, err := json.MarshalIndent(bot.NewManifest(*name, strings.TrimRight(*base, "/")), "", "  ")
	if err != nil {
		fmt.Fprintf(stderr, "shardgate app-manifest: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(stdout, "%s\n", out)
	return exitOK
}
