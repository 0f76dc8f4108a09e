package ghapp

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// Limits on a fetched source tree: a pull request cannot make shardgate fill
// its disk. Every entry counts, files, directories (also those only implied by
// a file's path) and links; directories and links cost a filesystem block each
// against the size.
const (
	DefaultMaxTreeBytes   = 512 << 20
	DefaultMaxTreeEntries = 50000
	entryBlock            = 4 << 10
	// maxLinkHops is Linux's MAXSYMLINKS: a longer chain cannot be followed anyway.
	maxLinkHops = 40
)

// SkippedLink is a symlink of the tree that was not made, and why: its
// target leaves the checkout or it is a loop. Name and Target come from the
// pull request: they are data.
type SkippedLink struct{ Name, Target, Reason string }

func (l SkippedLink) String() string { return fmt.Sprintf("%q -> %q %s", l.Name, l.Target, l.Reason) }

// CheckoutError says why a source tree was refused; it is shown on the PR.
type CheckoutError struct{ Reason string }

func (e *CheckoutError) Error() string { return "checkout refused: " + e.Reason }

// DownloadTarball fetches GitHub's tarball of ref through the installation's
// authenticated client and extracts it into dst (which must exist and be
// empty), saying which symlinks it left out. A rate-limit answer is a wait
// read on now (an installation client answers it as a *LimitError already).
func DownloadTarball(ctx context.Context, hc *http.Client, apiURL, owner, repo, ref, dst string, now func() time.Time) ([]SkippedLink, error) {
	u := fmt.Sprintf("%srepos/%s/%s/tarball/%s", apiURL, owner, repo, ref)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("download tarball: %w", err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("download tarball of %s/%s@%s: %w", owner, repo, ref, err)
	}
	defer resp.Body.Close()
	if l, ok := limitAnswer(resp, now()); ok {
		// A rate limit is a wait, not a failure (LimitWait finds it).
		return nil, fmt.Errorf("download tarball of %s/%s@%s: %w", owner, repo, ref, &l)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("download tarball of %s/%s@%s: GitHub answered %s", owner, repo, ref, resp.Status)
	}
	return ExtractTarball(resp.Body, dst, DefaultMaxTreeBytes, DefaultMaxTreeEntries)
}

// ExtractTarball unpacks a gzip'd tar whose entries all sit under one top
// directory (GitHub's "<owner>-<repo>-<sha>/"), stripping it. It refuses
// entries that escape dst, devices, and trees over the limits. Symlinks and
// directories are made only once the whole archive has been read and every
// link resolved inside the tree, so no entry is ever written through a link,
// and a refused tarball leaves no link behind. A symlink that leads out of
// the tree (or loops) is not made, and returned.
func ExtractTarball(r io.Reader, dst string, maxBytes int64, maxEntries int) ([]SkippedLink, error) {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return nil, &CheckoutError{Reason: "the tarball is not gzip: " + err.Error()}
	}
	defer gz.Close()
	root, err := os.OpenRoot(dst)
	if err != nil {
		return nil, fmt.Errorf("extract tarball: %w", err)
	}
	defer root.Close()
	x := newTree(root, maxBytes, maxEntries)
	tr := tar.NewReader(gz)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return x.finish()
		}
		if err != nil {
			return nil, &CheckoutError{Reason: "the tarball is damaged: " + err.Error()}
		}
		if hdr.Typeflag == tar.TypeXGlobalHeader {
			continue // git archive's pax header with the commit id
		}
		name, err := x.entryName(hdr.Name)
		if err != nil {
			return nil, err
		}
		if name == "" {
			continue // the top directory itself
		}
		if err := x.add(hdr, name, tr); err != nil {
			return nil, err
		}
	}
}
