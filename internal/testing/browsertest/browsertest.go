// Package browsertest starts a headless Chromium for the browser tests of the
// status page (the statuspage package's and the service's). Tests only: the
// shipped binary never imports it.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/chromedp/chromedp"
)

// Chromium is Debian's chromium (what .ci/run installs), or another
// Chromium or Chrome on PATH. The test skips, saying so, only without one.
func Chromium(t testing.TB) string {
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

// New starts a headless Chromium for the test, closed when it ends.
func New(t testing.TB, ctx context.Context) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(Chromium(t)), chromedp.WindowSize(1400, 1000))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses to sandbox itself as root
	}
	actx, cancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancel)
	bctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	return bctx
}
