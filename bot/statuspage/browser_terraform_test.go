package statuspage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/server/livelog"
	"github.com/shardgate/shardgate/internal/testing/browsertest"
	"github.com/shardgate/shardgate/internal/testing/tftest"
	"github.com/shardgate/shardgate/terraform/runner"
)

// EnvScreenshotDir, when set, is where the browser tests also save their
// screenshots (the README's docs/status-page.png comes from there).
const EnvScreenshotDir = "SHARDGATE_SCREENSHOT_DIR"

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

// terraformRun runs init, plan and, when apply, apply of dir with the real
// terraform, its output to out; the result arrives on the channel.
func terraformRun(ctx context.Context, t *testing.T, bin, dir string, out *livelog.Log, apply bool) <-chan error {
	t.Helper()
	r, err := runner.New(bin, runner.WithTempDir(t.TempDir()))
	require.NoError(t, err)
	job, err := r.NewJob(runner.JobConfig{Dir: dir, DataDir: t.TempDir(), Output: out,
		Wait: &runner.WaitPolicy{Timeout: 2 * time.Minute, InitialBackoff: 500 * time.Millisecond, MaxBackoff: time.Second}})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		defer job.Close()
		defer out.Close()
		err := job.Init(ctx)
		if err == nil {
			_, err = job.Plan(ctx)
		}
		if err == nil && apply {
			err = job.Apply(ctx)
		}
		done <- err
	}()
	return done
}

// Two applies queued on one stream, the first running real terraform whose
// output the job page shows as it comes, and a plan waiting on the state
// lock the first apply holds.
func TestBrowserShowsTheQueueAndTheLiveLog(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bctx := browsertest.New(t, ctx)
	bin := tftest.Binary(t)
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			// The page's clock reads the real time: terraform's lock times are real.
			now := time.Now().UTC().Truncate(time.Second)
			s := newScene(t, backend, Options{Drift: fakeDrift{rows: []DriftRow{{Repo: "acme/streams", Project: "orders-east", Status: "drifted",
				Groups: []DriftGroup{{Prefix: "create-order", Group: "billing", Desired: 4, Live: intp(6)}}, Since: now.Add(-90 * time.Minute),
				CheckedAt: now.Add(-30 * time.Minute), IssueURL: "https://github.com/acme/streams/issues/40"}}}})
			s.clock.Set(now)
			s.history(t)
			const stream = "http://coord:8080 create-order"
			first := s.enqueue(t, 11, "orders-east", stream)
			s.enqueue(t, 12, "orders-west", stream)
			s.enqueue(t, 13, "payments", "http://coord:8080 payments")
			log := s.start(t, first)
			dir, gate := t.TempDir(), filepath.Join(t.TempDir(), "go-on")
			require.NoError(t, os.WriteFile(filepath.Join(dir, "main.tf"), []byte(chattyApply(gate)), 0o644))
			// Whatever happens, terraform is let go before the server closes.
			t.Cleanup(func() { _ = os.WriteFile(gate, nil, 0o644) })
			applied := terraformRun(ctx, t, bin, dir, log, true)

			browseQueue(t, bctx, s.srv.URL)

			// The first apply's page: its terraform output arrives while it runs.
			require.NoError(t, chromedp.Do(bctx,
				chromedp.Click(chromedp.CSS(`td.apply a`)),
				chromedp.WaitVisible(chromedp.CSS(`pre#log`)),
				waitLine("terraform_data.scale (local-exec): scaling orders: migration PREPARING"),
				waitText(`#status`, "running"),
			))
			lines, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#log .line")].map(d => d.textContent)`))
			require.NoError(t, err)
			require.NotContains(t, lines, "terraform_data.scale (local-exec): scaling orders: migration DEPRECATED", "terraform is still held at the gate")
			screenshot(t, bctx, "job-log-"+backend+".png")
			jobPage, err := chromedp.Run(bctx, chromedp.Location())
			require.NoError(t, err)

			// A plan of the same state meanwhile waits on the apply's state lock.
			planLog := s.logs.Start(livelog.Info{Kind: livelog.KindPlan, Ref: refOf(14), Project: "orders-east",
				SHA: "5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d"})
			planned := terraformRun(ctx, t, bin, dir, planLog, false)
			require.Eventually(t, func() bool { return planLog.Snapshot().LockWait != nil }, time.Minute, 20*time.Millisecond)
			require.NoError(t, chromedp.Do(bctx, chromedp.Navigate(s.srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`.lock-wait`))))
			wait, err := chromedp.Run(bctx, chromedp.Text(chromedp.CSS(`.lock-wait`)))
			require.NoError(t, err)
			require.Regexp(t, `^waiting for the Terraform state lock held by \S+@\S+ \(lock [0-9a-f-]+, OperationTypeApply, `, wait)
			screenshot(t, bctx, "status-page-"+backend+".png")

			// Back on the apply's page, terraform is let go: the rest follows live.
			require.NoError(t, chromedp.Do(bctx, chromedp.Navigate(jobPage),
				waitLine("terraform_data.scale (local-exec): scaling orders: migration PREPARING")))
			require.NoError(t, os.WriteFile(gate, nil, 0o644))
			require.NoError(t, <-applied)
			require.NoError(t, chromedp.Do(bctx,
				waitLine("terraform_data.scale (local-exec): scaling orders: migration DEPRECATED"),
				waitLine("Apply complete! Resources: 1 added, 0 changed, 0 destroyed."),
				waitText(`#status`, "ended"),
			))
			require.NoError(t, <-planned, "the plan got the lock once the apply let it go")
			require.Nil(t, planLog.Snapshot().LockWait)
		})
	}
}

// browseQueue loads the overview and checks the stream's queue: merge
// order, the second waiting behind the first, which holds the stream lock.
func browseQueue(t *testing.T, bctx context.Context, url string) {
	t.Helper()
	require.NoError(t, chromedp.Do(bctx, chromedp.Navigate(url+"/"), chromedp.WaitVisible(chromedp.CSS(`table.queue`))))
	projects, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("section.stream")]
		.filter(s => s.querySelector(".stream-prefix").textContent === "create-order")[0]
		.querySelectorAll("tr.queued-job td.project").values().map(td => td.textContent).toArray()`))
	require.NoError(t, err)
	require.Equal(t, []string{"orders-east", "orders-west"}, projects)
	waits, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("tr.queued-job .waits, tr.queued-job .holds")].map(e => e.textContent)`))
	require.NoError(t, err)
	require.Contains(t, strings.Join(waits, "\n"), "waits behind apply 1 (acme/streams#11, project orders-east) on stream create-order: stream lock held by apply 1, applying on replica-a")
	require.Contains(t, strings.Join(waits, "\n"), "holds the stream lock: applying, lease held by replica-a")
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
