package bot

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Limits on a fetched source tree: a pull request cannot make shardgate fill its disk.
const (
	DefaultMaxTreeBytes = 512 << 20
	DefaultMaxTreeFiles = 50000
)

// CheckoutError says why a source tree was refused; it is shown on the PR.
type CheckoutError struct{ Reason string }

func (e *CheckoutError) Error() string { return "checkout refused: " + e.Reason }

// downloadTarball fetches GitHub's tarball of ref through the installation's
// authenticated client and extracts it into dst (which must exist and be empty).
func downloadTarball(ctx context.Context, hc *http.Client, apiURL, owner, repo, ref, dst string) error {
	u := fmt.Sprintf("%srepos/%s/%s/tarball/%s", apiURL, owner, repo, ref)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("download tarball: %w", err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("download tarball of %s/%s@%s: %w", owner, repo, ref, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("download tarball of %s/%s@%s: GitHub answered %s", owner, repo, ref, resp.Status)
	}
	return extractTarball(resp.Body, dst, DefaultMaxTreeBytes, DefaultMaxTreeFiles)
}

// extractTarball unpacks a gzip'd tar whose entries all sit under one top
// directory (GitHub's "<owner>-<repo>-<sha>/"), stripping it. It refuses
// entries that escape dst, links of any kind, devices, and trees over the limits.
func extractTarball(r io.Reader, dst string, maxBytes int64, maxFiles int) error {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return &CheckoutError{Reason: "the tarball is not gzip: " + err.Error()}
	}
	defer gz.Close()
	tr := tar.NewReader(gz)
	var total int64
	files := 0
	top := ""
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return &CheckoutError{Reason: "the tarball is damaged: " + err.Error()}
		}
		if hdr.Typeflag == tar.TypeXGlobalHeader {
			continue // git archive's pax header with the commit id
		}
		name := strings.TrimPrefix(hdr.Name, "./")
		first, rest, _ := strings.Cut(name, "/")
		if top == "" {
			top = first
		}
		if first != top {
			return &CheckoutError{Reason: fmt.Sprintf("entry %q is outside the archive's top directory", hdr.Name)}
		}
		if rest == "" {
			continue
		}
		clean := path.Clean(rest)
		if path.IsAbs(rest) || clean == ".." || strings.HasPrefix(clean, "../") || strings.Contains(rest, "\\") {
			return &CheckoutError{Reason: fmt.Sprintf("entry %q escapes the checkout directory", hdr.Name)}
		}
		target := filepath.Join(dst, filepath.FromSlash(clean))
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return fmt.Errorf("extract %s: %w", clean, err)
			}
		case tar.TypeReg:
			files++
			total += hdr.Size
			if files > maxFiles {
				return &CheckoutError{Reason: fmt.Sprintf("the tree has more than %d files", maxFiles)}
			}
			if total > maxBytes {
				return &CheckoutError{Reason: fmt.Sprintf("the tree is larger than %d MiB", maxBytes>>20)}
			}
			if err := writeEntry(target, tr, hdr); err != nil {
				return fmt.Errorf("extract %s: %w", clean, err)
			}
		case tar.TypeSymlink, tar.TypeLink:
			return &CheckoutError{Reason: fmt.Sprintf("entry %q is a link; shardgate does not follow links in pull requests", hdr.Name)}
		default:
			return &CheckoutError{Reason: fmt.Sprintf("entry %q has unsupported type %q", hdr.Name, string(hdr.Typeflag))}
		}
	}
}

func writeEntry(target string, r io.Reader, hdr *tar.Header) error {
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err
	}
	mode := os.FileMode(0o644)
	if hdr.Mode&0o111 != 0 {
		mode = 0o755
	}
	f, err := os.OpenFile(target, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode)
	if err != nil {
		return err
	}
	if _, err := io.CopyN(f, r, hdr.Size); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
