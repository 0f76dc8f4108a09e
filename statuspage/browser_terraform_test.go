package statuspage

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/tftest"
	"github.com/shardgate/shardgate/runner"
)

// EnvScreenshotDir, when set, is where the browser tests also save their
// screenshots (the README's docs/status-page.png comes from there).
const EnvScreenshotDir = "SHARDGATE_SCREENSHOT_DIR"

// chromium is Debian's chromium (what .ci/run installs), or another
// Chromium or Chrome on PATH. The test skips, saying so, only without one.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no Chromium installed (looked for chromium, chromium-browser, google-chrome on PATH): the browser test did not run; " +
		"install Debian's chromium package (apt-get install chromium), as .ci/run does")
	return ""
}

// browser starts a headless Chromium for the test.
func browser(t *testing.T, ctx context.Context) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium(t)), chromedp.WindowSize(1400, 1000))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses to sandbox itself as root
	}
	actx, cancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancel)
	bctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	return bctx
}

// screenshot saves a full-page screenshot into the test's artifact
// directory (kept with go test -artifacts) and EnvScreenshotDir.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	path := filepath.Join(t.ArtifactDir(), name)
	require.NoError(t, os.WriteFile(path, png, 0o644))
	t.Logf("screenshot: %s", path)
	if dir := os.Getenv(EnvScreenshotDir); dir != "" {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), png, 0o644))
	}
}

// chattyApply prints two lines from its apply, the second only once the
// test lets it go on (a file appears): the page must show the first while
// terraform still runs.
func chattyApply(gate string) string {
	return fmt.Sprintf(`resource "terraform_data" "scale" {
  provisioner "local-exec" {
    command = "echo 'scaling orders: migration PREPARING'; while [ ! -e '%s' ]; do sleep 0.05; done; echo 'scaling orders: migration DEPRECATED'"
  }
}
`, gate)
}

// Two applies queued on one stream, the first running real terraform whose
// output the job page shows as it comes.
func TestBrowserShowsTheQueueAndTheLiveLog(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bctx := browser(t, ctx)
	bin := tftest.Binary(t)
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			s := newScene(t, backend, Options{Drift: fakeDrift{rows: []DriftRow{{Repo: "acme/streams", Project: "orders-east", Status: "drifted",
				Groups: []DriftGroup{{Prefix: "create-order", Group: "billing", Desired: 4, Live: 6}}, Since: time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC),
				CheckedAt: time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC), IssueURL: "https://github.com/acme/streams/issues/40"}}}})
			s.history(t)
			const stream = "http://coord:8080 create-order"
			first := s.enqueue(t, 11, "orders-east", stream)
			s.enqueue(t, 12, "orders-west", stream)
			s.enqueue(t, 13, "payments", "http://coord:8080 payments")
			log := s.start(t, first)

			dir := t.TempDir()
			gate := filepath.Join(t.TempDir(), "go-on")
			require.NoError(t, os.WriteFile(filepath.Join(dir, "main.tf"), []byte(chattyApply(gate)), 0o644))
			// Whatever happens, terraform is let go and the log ends before the
			// server closes.
			t.Cleanup(func() { _ = os.WriteFile(gate, nil, 0o644); log.Close() })
			r, err := runner.New(bin, runner.WithTempDir(t.TempDir()))
			require.NoError(t, err)
			job, err := r.NewJob(runner.JobConfig{Dir: dir, DataDir: t.TempDir(), Output: log})
			require.NoError(t, err)
			defer job.Close()
			applied := make(chan error, 1)
			go func() {
				defer log.Close()
				if err := job.Init(ctx); err != nil {
					applied <- err
					return
				}
				if _, err := job.Plan(ctx); err != nil {
					applied <- err
					return
				}
				applied <- job.Apply(ctx)
			}()

			// The overview: the stream's queue in merge order, the second
			// waiting behind the first, which holds the stream lock.
			require.NoError(t, chromedp.Do(bctx,
				chromedp.Navigate(s.srv.URL+"/"),
				chromedp.WaitVisible(chromedp.CSS(`table.queue`)),
			))
			projects, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("section.stream")]
				.filter(s => s.querySelector(".stream-prefix").textContent === "create-order")[0]
				.querySelectorAll("tr.queued-job td.project").values().map(td => td.textContent).toArray()`))
			require.NoError(t, err)
			require.Equal(t, []string{"orders-east", "orders-west"}, projects)
			waits, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("tr.queued-job .waits, tr.queued-job .holds")].map(e => e.textContent)`))
			require.NoError(t, err)
			require.Contains(t, strings.Join(waits, "\n"), "waits behind apply 1 (acme/streams#11, project orders-east) on stream create-order: stream lock held by apply 1, applying on replica-a")
			require.Contains(t, strings.Join(waits, "\n"), "holds the stream lock: applying, lease held by replica-a")
			screenshot(t, bctx, "status-page-"+backend+".png")

			// The first apply's page: its terraform output arrives while it runs.
			require.NoError(t, chromedp.Do(bctx,
				chromedp.Click(chromedp.CSS(`td.apply a`)),
				chromedp.WaitVisible(chromedp.CSS(`pre#log`)),
				waitLine("terraform_data.scale (local-exec): scaling orders: migration PREPARING"),
			))
			status, err := chromedp.Run(bctx, chromedp.Text(chromedp.CSS(`#status`)))
			require.NoError(t, err)
			require.Equal(t, "running", status, "log: %v", log.Read(0).Lines)
			lines, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#log .line")].map(d => d.textContent)`))
			require.NoError(t, err)
			require.NotContains(t, lines, "terraform_data.scale (local-exec): scaling orders: migration DEPRECATED", "terraform is still held at the gate")
			screenshot(t, bctx, "job-log-"+backend+".png")

			require.NoError(t, os.WriteFile(gate, nil, 0o644))
			require.NoError(t, <-applied)
			require.NoError(t, chromedp.Do(bctx,
				waitLine("terraform_data.scale (local-exec): scaling orders: migration DEPRECATED"),
				waitLine("Apply complete! Resources: 1 added, 0 changed, 0 destroyed."),
				waitText(`#status`, "ended"),
			))
		})
	}
}

// waitText waits, on the page's own clock, until the element's text is want.
func waitText(sel, want string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](fmt.Sprintf(`document.querySelector(%q).textContent === %q`, sel, want),
		chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(time.Minute))
}

// waitLine waits until the log shows a line that is exactly want.
func waitLine(want string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](fmt.Sprintf(`[...document.querySelectorAll("#log .line")].some(d => d.textContent === %q)`, want),
		chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(time.Minute))
}
