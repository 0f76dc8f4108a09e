package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/shardgate/shardgate/bot/drift"
	"github.com/shardgate/shardgate/bot/livestate"
	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/policy/report"
	"github.com/shardgate/shardgate/terraform/runner"
)

func init() {
	register("drift", command{summary: "plan a directory and compare every coordinator group's desired shard count with the live one", run: runDrift})
}

const driftSynopsis = "shardgate drift --dir DIR [--workspace NAME] [--var-file FILE]... [--lock-timeout DURATION] [--coordinator-url-prefix URL]... [--coordinator-user NAME] [--format text|json|markdown]"

// EnvCoordinatorPassword holds the password of --coordinator-user: secrets
// never go on the command line.
const EnvCoordinatorPassword = "SHARDGATE_COORDINATOR_PASSWORD"

// Exit codes of drift: no drift, drift found.
const (
	exitNoDrift = 0
	exitDrift   = 1
)

// runDrift plans a directory and checks it for drift. Exit 0 no drift, 1 drift
// found, 2 bad usage or input, 3 terraform failed or the coordinator could not
// be read (the check could not tell). Nothing is applied.
func runDrift(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("drift", driftSynopsis, stderr)
	dir := fs.String("dir", "", "Terraform root module directory")
	workspace := fs.String("workspace", "", "Terraform workspace (default: the current one)")
	var varFiles, prefixes stringList
	fs.Var(&varFiles, "var-file", "a Terraform variables file (repeatable)")
	lockTimeout := fs.Duration("lock-timeout", runner.DefaultLockTimeout, "how long to wait for a state lock held by someone else; never force-unlocks")
	tfBinary := fs.String("terraform", "", "terraform binary (default: ./bin/terraform, then terraform on PATH)")
	fs.Var(&prefixes, "coordinator-url-prefix", "a coordinator URL prefix shardgate may read live state from (repeatable); others are not called")
	user := fs.String("coordinator-user", "", "coordinator user; its password is read from $"+EnvCoordinatorPassword)
	format := fs.String("format", "text", "text, json or markdown (the drift issue's body)")
	if code := parseFlags(fs, args, stderr); code >= 0 {
		return code
	}
	cfg, absVarFiles, code := driftInputs(*dir, *lockTimeout, *format, varFiles, prefixes, *user, stderr)
	if code >= 0 {
		return code
	}
	bin, _, err := runner.FindTerraform(*tfBinary, "")
	if err != nil {
		fmt.Fprintf(stderr, "shardgate drift: %v\n", err)
		return exitTerraform
	}
	wait := runner.DefaultWaitPolicy()
	wait.Timeout = *lockTimeout
	r, err := runner.New(bin, runner.WithInheritEnv(), runner.WithWaitPolicy(wait), runner.WithOnLockWait(func(w runner.LockWait) {
		fmt.Fprintf(stderr, "shardgate drift: %s\n", lockWaitLine(w))
	}))
	if err != nil {
		fmt.Fprintf(stderr, "shardgate drift: %v\n", err)
		return exitTerraform
	}
	job, err := r.NewJob(runner.JobConfig{Dir: *dir, Workspace: *workspace, VarFiles: absVarFiles})
	if err != nil {
		fmt.Fprintf(stderr, "shardgate drift: %v\n", err)
		return exitTerraform
	}
	defer job.Close()
	cs, err := planJob(ctx, job)
	if err != nil {
		fmt.Fprintf(stderr, "shardgate drift: %s\n", terraformFailure(err))
		writeDiagnostics(stderr, runner.DiagnosticsOf(err))
		return exitTerraform
	}
	// The coordinator client's retry logs are the service's; the command says what failed.
	coords := livestate.New(cfg, nil, logctx.NewLogger(io.Discard, logrus.ErrorLevel), nil, nil)
	coords.NotCovered = "a --coordinator-url-prefix"
	coordinator, live := coords.Read(ctx, cs)
	res := drift.Check(cs, coordinator, live)
	res.Project, res.CheckedAt = *dir, time.Now().UTC()
	res.Error = redactIn(cfg, res.Error)
	if err := writeDrift(stdout, *format, res); err != nil {
		fmt.Fprintf(stderr, "shardgate drift: %v\n", err)
		return exitUsage
	}
	switch res.Status {
	case drift.StatusDrifted:
		return exitDrift
	case drift.StatusError:
		fmt.Fprintf(stderr, "shardgate drift: %s\n", report.Plain(res.Error))
		return exitTerraform
	}
	return exitNoDrift
}

// driftInputs checks the flags (code exitUsage with a one-line reason when
// one is wrong; -1 to go on) and builds the coordinator credentials.
func driftInputs(dir string, lockTimeout time.Duration, format string, varFiles, prefixes []string, user string, stderr io.Writer) (*serverconfig.Config, []string, int) {
	switch {
	case dir == "":
		return nil, nil, usageError(stderr, "drift", "--dir is required (run 'shardgate drift --help')")
	case lockTimeout < 0:
		return nil, nil, usageError(stderr, "drift", "--lock-timeout must not be negative")
	case format != "text" && format != "json" && format != "markdown":
		return nil, nil, usageError(stderr, "drift", "--format %q: use text, json or markdown", format)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, nil, usageError(stderr, "drift", "--dir %s is not a directory", dir)
	}
	var abs []string
	for _, vf := range varFiles {
		a, err := filepath.Abs(vf)
		if err != nil {
			return nil, nil, usageError(stderr, "drift", "--var-file %s: %v", vf, err)
		}
		if _, err := os.Stat(a); err != nil {
			return nil, nil, usageError(stderr, "drift", "--var-file %s does not exist", vf)
		}
		abs = append(abs, a)
	}
	password := os.Getenv(EnvCoordinatorPassword)
	if password != "" && user == "" {
		return nil, nil, usageError(stderr, "drift", "$%s is set but --coordinator-user is not", EnvCoordinatorPassword)
	}
	cfg := &serverconfig.Config{}
	for _, p := range prefixes {
		u, err := url.Parse(p)
		if err != nil || u.Host == "" || u.User != nil {
			return nil, nil, usageError(stderr, "drift", "--coordinator-url-prefix %q is not a URL such as https://coordinator.example.com (credentials go in --coordinator-user and $%s)", report.Plain(p), EnvCoordinatorPassword)
		}
		cfg.Coordinators = append(cfg.Coordinators, serverconfig.CoordinatorCredentials{URLPrefix: p, Username: user, Password: serverconfig.NewSecret(password)})
	}
	return cfg, abs, -1
}

// redactIn removes the coordinator password from a text about the check.
func redactIn(cfg *serverconfig.Config, s string) string {
	for _, c := range cfg.Coordinators {
		if p := c.Password.Reveal(); p != "" {
			s = strings.ReplaceAll(s, p, "[redacted]")
		}
	}
	return s
}

func writeDrift(w io.Writer, format string, res drift.Result) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	case "markdown":
		_, err := io.WriteString(w, drift.Markdown(res))
		return err
	}
	fmt.Fprintf(w, "%s: %s\n", report.Plain(res.Project), res.Summary())
	for _, g := range res.Groups {
		live := "missing"
		if g.Live != nil {
			live = fmt.Sprint(*g.Live)
		}
		fmt.Fprintf(w, "  %s/%s at %s: desired %d, live %s (%+d)  %s\n", report.Plain(g.StreamPrefix), report.Plain(g.ConsumerGroup),
			report.Plain(g.Coordinator), g.Desired, live, g.Delta, report.Plain(g.Address))
	}
	for _, p := range res.Pending {
		what := p.Action
		if what == "" {
			what = report.ActionWords(p.Actions)
		}
		fmt.Fprintf(w, "  terraform would %s %s\n", report.Plain(what), report.Plain(p.Address))
	}
	return nil
}
