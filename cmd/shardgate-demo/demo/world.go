package demo

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
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/shardgate/shardgate/bot"
	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/bot/webhook"
	"github.com/shardgate/shardgate/coord/coordsim"
	"github.com/shardgate/shardgate/internal/fakeclock"
	"github.com/shardgate/shardgate/internal/streamroot"
	"github.com/shardgate/shardgate/internal/testing/githubtest"
	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/store"
)

// The cast and the repository of the story.
const (
	owner    = "acme"
	repoName = "streams"
	project  = "streams"
	author   = "octo-dev"
	approver = "alice"
	simUser  = "shardgate-demo"
)

// mainGroups is the default branch: "prefix/group" -> shard count.
var mainGroups = map[string]int{"create-order/billing": 4, "create-order/audit": 4, "payments/ledger": 2}

// world is the whole product on loopback, as bot/harness_test.go wires it
// for the end-to-end tests.
type world struct {
	// clock is shared by the fake GitHub and shardgate: the people of the story
	// take a second before they act (clock.Advance), instead of sleeping.
	clock  *fakeclock.Clock
	opts   Options
	module fs.FS // the stream-group module committed to the repository
	tb     *programTB
	root   string
	tf     string
	tfVer  string
	secret string // the webhook secret
	simPW  string // the simulator user's password, never printed

	sim     *coordsim.Sim
	simURL  string
	gh      *githubtest.Server
	repo    *githubtest.GitRepo
	tfState string
	st      *store.Bolt
	srv     *bot.Server
	webURL  string
}

// newSecret makes up the webhook secret and the simulator's password; tests
// replace it to look for the values in the output.
var newSecret = func() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("read random: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// startSimulator serves the coordinator simulator on a loopback port with
// one user whose password is random, and runs its event loop.
func (w *world) startSimulator(ctx context.Context) error {
	w.sim = coordsim.New(coordsim.WithMembersPerGroup(2),
		coordsim.WithUsers(coordsim.User{Name: simUser, Password: w.simPW, Roles: coordsim.AllRoles()}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listen for the simulator: %w", err)
	}
	hs := &http.Server{Handler: w.sim, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	tickCtx, stop := context.WithCancel(ctx)
	go w.sim.Run(tickCtx, w.opts.Tick)
	w.tb.Cleanup(func() {
		stop()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
	})
	w.simURL = "http://" + ln.Addr().String()
	return nil
}

// buildRepo commits the example module and a root configuration for the
// simulator to a fresh git repository served by the fake GitHub.
func (w *world) buildRepo() error {
	w.gh = githubtest.New(w.tb, githubtest.WithClock(w.clock.Now))
	w.repo = githubtest.NewGitRepo(w.tb)
	// In a directory of its own: the service's sandbox lets terraform write
	// it (terraform.sandbox_writable), and nothing else of w.root.
	w.tfState = filepath.Join(w.root, "state", "terraform.tfstate")
	if err := os.MkdirAll(filepath.Dir(w.tfState), 0o700); err != nil {
		return fmt.Errorf("make the state dir: %w", err)
	}
	entries, err := fs.ReadDir(w.module, ".")
	if err != nil {
		return fmt.Errorf("read the example module: %w", err)
	}
	copied := 0
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := fs.ReadFile(w.module, e.Name())
		if err != nil {
			return fmt.Errorf("read the example module: %w", err)
		}
		w.repo.WriteFile("modules/stream-group/"+e.Name(), string(b))
		copied++
	}
	if copied == 0 {
		return fmt.Errorf("read the example module: it has no files")
	}
	w.writeRoot(mainGroups)
	w.repo.WriteFile(".shardgate.yaml", "version: 1\nprojects:\n  - name: "+project+"\n    dir: streams\n")
	w.repo.Commit("streams: create-order and payments")
	w.gh.AddRepo(owner, repoName, w.repo)
	for _, u := range []string{author, approver} {
		w.gh.SetPermission(owner, repoName, u, "write")
	}
	return nil
}

// writeRoot writes streams/main.tf: a local state shared by every checkout,
// as a remote backend would be, and the module once per group.
func (w *world) writeRoot(groups map[string]int) {
	w.repo.WriteFile("streams/main.tf", streamroot.MainTF(w.tfState, w.simURL, groups))
}

// applyMain applies the default branch with the real terraform, as an
// operator did before the pull request: the simulator then holds the groups.
func (w *world) applyMain(ctx context.Context) error {
	dir := w.tb.TempDir()
	tarball := filepath.Join(dir, "main.tar")
	if out, err := exec.CommandContext(ctx, "git", "-C", w.repo.Dir(), "archive", "--format=tar", "-o", tarball, "main").CombinedOutput(); err != nil {
		return fmt.Errorf("archive main: %w: %s", err, strings.TrimSpace(string(out)))
	}
	if out, err := exec.CommandContext(ctx, "tar", "-xf", tarball, "-C", dir).CombinedOutput(); err != nil {
		return fmt.Errorf("extract main: %w: %s", err, strings.TrimSpace(string(out)))
	}
	env := append(os.Environ(), "TF_IN_AUTOMATION=1", "TF_CLI_CONFIG_FILE=",
		"TF_VAR_coordinator_username="+simUser, "TF_VAR_coordinator_password="+w.simPW)
	for _, args := range [][]string{{"init", "-input=false", "-no-color"}, {"apply", "-input=false", "-auto-approve", "-no-color"}} {
		cmd := exec.CommandContext(ctx, w.tf, args...)
		cmd.Dir, cmd.Env = filepath.Join(dir, "streams"), env
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("terraform %s on main: %w: %s", args[0], err, w.redact(lastLines(string(out), 15)))
		}
	}
	return nil
}

// startService runs shardgate's service on a loopback port, configured as a
// deployment would be for this fake GitHub and this coordinator.
func (w *world) startService(ctx context.Context) error {
	var err error
	if w.st, err = store.OpenBolt(filepath.Join(w.root, "shardgate.db")); err != nil {
		return fmt.Errorf("open the store: %w", err)
	}
	w.tb.Cleanup(func() { _ = w.st.Close() })
	cfg := &serverconfig.Config{
		Listen: "127.0.0.1:0", GitHubAPIURL: w.gh.URL(), AppID: w.gh.AppID(),
		PrivateKey: serverconfig.NewSecret(string(w.gh.AppPrivateKeyPEM())), WebhookSecret: serverconfig.NewSecret(w.secret),
		StorePath: filepath.Join(w.root, "shardgate.db"), TerraformBinary: w.tf, LockTimeout: time.Minute,
		Coordinators:  []serverconfig.CoordinatorCredentials{{URLPrefix: w.simURL, Username: simUser, Password: serverconfig.NewSecret(w.simPW)}},
		ApproverUsers: []string{approver}, Policy: policy.DefaultConfig(), AttestationTTL: serverconfig.DefaultAttestationTTL,
		AllowRepoOverride: true, QueueSize: 100, Workers: 2, WorkDir: filepath.Join(w.root, "work"),
		ConvergeTimeout: w.opts.ApplyTimeout, SandboxWritable: []string{filepath.Dir(w.tfState)},
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	if w.opts.Log != nil {
		log.SetOutput(w.opts.Log)
	}
	log.SetFormatter(&logrus.JSONFormatter{})
	if w.srv, err = bot.New(cfg, w.st, bot.WithLogEntry(logrus.NewEntry(log)), bot.WithClock(w.clock.Now)); err != nil {
		return fmt.Errorf("start shardgate: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listen for shardgate: %w", err)
	}
	hs := webhook.NewHTTPServer("", w.srv.Handler())
	go func() {
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			w.tb.Errorf("shardgate's listener: %v", err)
		}
	}()
	if err := w.srv.Start(ctx); err != nil {
		_ = hs.Close()
		return fmt.Errorf("start shardgate: %w", err)
	}
	w.tb.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
		w.srv.Close(sctx)
	})
	w.webURL = "http://" + ln.Addr().String()
	return nil
}

// redact removes the credentials the demo made up from text it prints.
func (w *world) redact(s string) string {
	for _, secret := range []string{w.simPW, w.secret} {
		if secret != "" {
			s = strings.ReplaceAll(s, secret, "[redacted]")
		}
	}
	return s
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
