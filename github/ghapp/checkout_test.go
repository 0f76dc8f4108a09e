package ghapp

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/fakeclock"
)

type entry struct {
	name, body string
	typ        byte
	link       string
}

func tarball(t testing.TB, entries []entry) []byte {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		typ := e.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		hdr := &tar.Header{Name: e.name, Typeflag: typ, Mode: 0o644, Size: int64(len(e.body)), Linkname: e.link}
		if typ == tar.TypeXGlobalHeader {
			hdr = &tar.Header{Typeflag: typ, PAXRecords: map[string]string{"comment": "abc123"}}
		}
		if typ != tar.TypeReg {
			hdr.Size = 0
		}
		require.NoError(t, tw.WriteHeader(hdr))
		if typ == tar.TypeReg {
			_, err := tw.Write([]byte(e.body))
			require.NoError(t, err)
		}
	}
	require.NoError(t, tw.Close())
	require.NoError(t, gz.Close())
	return buf.Bytes()
}

func TestExtractTarball(t *testing.T) {
	dst := t.TempDir()
	_, err := ExtractTarball(bytes.NewReader(tarball(t, []entry{
		{name: "pax_global_header", typ: tar.TypeXGlobalHeader},
		{name: "acme-streams-abc123/", typ: tar.TypeDir},
		{name: "acme-streams-abc123/examples/streams/main.tf", body: "terraform {}"},
		{name: "acme-streams-abc123/.shardgate.yaml", body: "version: 1\n"},
	})), dst, 1<<20, 10)
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(dst, "examples", "streams", "main.tf"))
	require.NoError(t, err)
	require.Equal(t, "terraform {}", string(b))
	require.FileExists(t, filepath.Join(dst, ".shardgate.yaml"))
}

// refusedTarballs are archives ExtractTarball refuses, and why.
var refusedTarballs = []struct {
	name    string
	entries []entry
	want    string
}{
	{"parent escape", []entry{{name: "top/../../etc/passwd", body: "x"}}, "escapes"},
	{"absolute inside", []entry{{name: "top//etc/passwd", body: "x"}}, "escapes"},
	{"second top dir", []entry{{name: "top/a", body: "x"}, {name: "other/b", body: "y"}}, "outside the archive's top directory"},
	{"device", []entry{{name: "top/dev", typ: tar.TypeChar}}, "unsupported type"},
	{"too many files", []entry{{name: "top/1", body: "a"}, {name: "top/2", body: "b"}, {name: "top/3", body: "c"}}, "more than 2 entries"},
	{"too many directories", []entry{{name: "top/1/", typ: tar.TypeDir}, {name: "top/2/", typ: tar.TypeDir}, {name: "top/3/", typ: tar.TypeDir}}, "more than 2 entries"},
	{"implied directories count", []entry{{name: "top/a/b/c.tf", body: "x"}, {name: "top/d.tf", body: "y"}}, "more than 2 entries"},
	{"too many links", []entry{{name: "top/a", typ: tar.TypeSymlink, link: "b"}, {name: "top/b", typ: tar.TypeSymlink, link: "c"}, {name: "top/c", body: "x"}}, "more than 2 entries"},
	{"too large", []entry{{name: "top/big", body: string(make([]byte, 2048))}}, "larger than"},
	{"directories count toward the size", []entry{{name: "top/d/", typ: tar.TypeDir}}, "larger than"},
	{"duplicate entry", []entry{{name: "top/a", body: "x"}, {name: "top/a", body: "y"}}, "appears twice"},
	{"file over a directory", []entry{{name: "top/a/", typ: tar.TypeDir}, {name: "top/a", body: "y"}}, "appears twice"},
	{"empty symlink", []entry{{name: "top/a", typ: tar.TypeSymlink, link: ""}}, "no target"},
	{"entry written through a symlink", []entry{
		{name: "top/sub/", typ: tar.TypeDir},
		{name: "top/s", typ: tar.TypeSymlink, link: "sub"},
		{name: "top/s/x.tf", body: "x"},
	}, `inside the symlink "s"`},
	{"entry inside a file", []entry{{name: "top/a", body: "x"}, {name: "top/a/b", body: "y"}}, `inside the file "a"`},
	{"symlink target too long", []entry{{name: "top/a", typ: tar.TypeSymlink, link: strings.Repeat("a/", 2048)}}, "at most 4095"},
	{"links too long to resolve", longChain(40, 2000), "takes too long to resolve"},
	{"symlink over a symlink", []entry{{name: "top/s", typ: tar.TypeSymlink, link: "a"}, {name: "top/s", typ: tar.TypeSymlink, link: "b"}}, "already a symlink"},
	// Hard links name an earlier regular file of the archive, inside it.
	{"hard link out of the archive", []entry{{name: "top/b", typ: tar.TypeLink, link: "top/../../etc/passwd"}}, "escapes the checkout"},
	{"absolute hard link", []entry{{name: "top/b", typ: tar.TypeLink, link: "/etc/passwd"}}, "outside the archive's top directory"},
	{"hard link to another top dir", []entry{{name: "top/b", typ: tar.TypeLink, link: "other/a"}}, "outside the archive's top directory"},
	{"hard link to nothing earlier", []entry{{name: "top/b", typ: tar.TypeLink, link: "top/a"}, {name: "top/a", body: "x"}}, "not an earlier file"},
	{"hard link to a directory", []entry{{name: "top/d/", typ: tar.TypeDir}, {name: "top/b", typ: tar.TypeLink, link: "top/d"}}, "not an earlier file"},
	{"hard link through a symlink", []entry{
		{name: "top/a", body: "x"},
		{name: "top/s", typ: tar.TypeSymlink, link: "."},
		{name: "top/b", typ: tar.TypeLink, link: "top/s/a"},
	}, `inside the symlink "s"`},
}

// leftOutLinks are archives whose symlinks leave the checkout, however they
// get there, or loop: ExtractTarball makes the rest of the tree and leaves
// out those links, saying which.
var leftOutLinks = []struct {
	name    string
	entries []entry
	want    []string
}{
	{"absolute symlink", []entry{{name: "top/link", typ: tar.TypeSymlink, link: "/etc/passwd"}}, []string{`"link" -> "/etc/passwd" escapes the checkout`}},
	{"symlink to the parent", []entry{{name: "top/link", typ: tar.TypeSymlink, link: ".."}}, []string{`"link" -> ".." escapes the checkout`}},
	{"nested symlink climbing out", []entry{{name: "top/a/link", typ: tar.TypeSymlink, link: "../../etc"}}, []string{`"a/link" -> "../../etc" escapes the checkout`}},
	{"symlink climbing out and back", []entry{{name: "top/link", typ: tar.TypeSymlink, link: "../top/x"}}, []string{`"link" -> "../top/x" escapes the checkout`}},
	{"escape through another symlink", []entry{
		{name: "top/d/up", typ: tar.TypeSymlink, link: ".."},
		{name: "top/d/link", typ: tar.TypeSymlink, link: "up/../x"},
	}, []string{`"d/link" -> "up/../x" escapes the checkout`}},
	{"escape through a symlink that comes later", []entry{
		{name: "top/link", typ: tar.TypeSymlink, link: "self/.."},
		{name: "top/self", typ: tar.TypeSymlink, link: "."},
	}, []string{`"link" -> "self/.." escapes the checkout`}},
	{"lexically inside, really outside", []entry{
		{name: "top/modules/common/vars.tf", body: "x"},
		{name: "top/env/prod/common", typ: tar.TypeSymlink, link: "../../modules/common"},
		{name: "top/link", typ: tar.TypeSymlink, link: "env/prod/common/../../../main.tf"},
	}, []string{`"link" -> "env/prod/common/../../../main.tf" escapes the checkout`}},
	{"escape at the end of a chain", []entry{
		{name: "top/a", typ: tar.TypeSymlink, link: "b"},
		{name: "top/b", typ: tar.TypeSymlink, link: "c"},
		{name: "top/c", typ: tar.TypeSymlink, link: "/etc"},
	}, []string{`"a" -> "b" escapes the checkout through "c"`, `"b" -> "c" escapes the checkout through "c"`, `"c" -> "/etc" escapes the checkout`}},
	{"symlink loop", []entry{{name: "top/a", typ: tar.TypeSymlink, link: "b"}, {name: "top/b", typ: tar.TypeSymlink, link: "a"}},
		[]string{`"a" -> "b" is a loop or a chain of more than 40 links`, `"b" -> "a" is a loop or a chain of more than 40 links`}},
}

// TestExtractTarballLeavesOutEscapingLinks: an escaping link costs only
// itself; the checkout is made, the link is not, and the caller hears which.
func TestExtractTarballLeavesOutEscapingLinks(t *testing.T) {
	for _, tt := range leftOutLinks {
		t.Run(tt.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "co")
			require.NoError(t, os.Mkdir(dst, 0o755))
			entries := append([]entry{{name: "top/main.tf", body: "terraform {}"}}, tt.entries...)
			skipped, err := ExtractTarball(bytes.NewReader(tarball(t, entries)), dst, 1<<20, 100)
			require.NoError(t, err)
			var got []string
			for _, l := range skipped {
				got = append(got, l.String())
				_, err := os.Lstat(filepath.Join(dst, filepath.FromSlash(l.Name)))
				require.True(t, os.IsNotExist(err), "the left-out link %s is not made", l.Name)
			}
			require.Equal(t, tt.want, got)
			require.FileExists(t, filepath.Join(dst, "main.tf"))
			requireLinksStayInside(t, dst)
		})
	}
}

func TestExtractTarballRefuses(t *testing.T) {
	for _, tt := range refusedTarballs {
		t.Run(tt.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "co")
			require.NoError(t, os.Mkdir(dst, 0o755))
			maxBytes, maxEntries := int64(1<<20), 100
			switch {
			case strings.HasPrefix(tt.name, "too many"), tt.name == "implied directories count":
				maxEntries = 2
			case strings.HasPrefix(tt.name, "too large"), strings.HasPrefix(tt.name, "directories count"):
				maxBytes = 1024
			}
			_, err := ExtractTarball(bytes.NewReader(tarball(t, tt.entries)), dst, maxBytes, maxEntries)
			var refused *CheckoutError
			require.ErrorAs(t, err, &refused)
			require.ErrorContains(t, err, tt.want)
			_, statErr := os.Stat(filepath.Join(filepath.Dir(dst), "etc"))
			require.True(t, os.IsNotExist(statErr), "nothing was written outside the checkout")
			requireNoSymlinks(t, dst)
		})
	}
	_, err := ExtractTarball(bytes.NewReader([]byte("not gzip")), t.TempDir(), 1024, 2)
	require.ErrorContains(t, err, "not gzip")
}

// longChain is n symlinks, each to the next through a target padded with
// pad "./" components: every link is short enough and the chain within the
// kernel's 40 hops, but walking them all is 1.6 million components.
func longChain(n, pad int) []entry {
	var es []entry
	for i := 0; i < n; i++ {
		next := fmt.Sprintf("l%d", i+1)
		if i == n-1 {
			next = "end"
		}
		es = append(es, entry{name: fmt.Sprintf("top/l%d", i), typ: tar.TypeSymlink, link: strings.Repeat("./", pad) + next})
	}
	return es
}

// requireNoSymlinks: a refused tarball leaves no link behind, escaping or not.
func requireNoSymlinks(t *testing.T, dir string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		require.Zero(t, d.Type()&fs.ModeSymlink, "symlink %s left behind", p)
		return nil
	}))
}

// TestExtractTarballDirectoryBomb is issue 10's red-team tarball: 60,000
// directories and not one file, refused under the default limits.
func TestExtractTarballDirectoryBomb(t *testing.T) {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	require.NoError(t, tw.WriteHeader(&tar.Header{Name: "top/", Typeflag: tar.TypeDir, Mode: 0o755}))
	for i := 0; i < 60000; i++ {
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("top/d%d/", i), Typeflag: tar.TypeDir, Mode: 0o755}))
	}
	require.NoError(t, tw.Close())
	require.NoError(t, gz.Close())
	dst := t.TempDir()
	_, err := ExtractTarball(&buf, dst, DefaultMaxTreeBytes, DefaultMaxTreeEntries)
	var refused *CheckoutError
	require.ErrorAs(t, err, &refused)
	require.EqualError(t, err, "checkout refused: the tree has more than 50000 entries (files, directories and links)")
	made, err := os.ReadDir(dst)
	require.NoError(t, err)
	require.Empty(t, made, "directories are made once the tree is known to fit")
}

// TestExtractTarballLinksInsideTheTree: symlinks (relative, chained, to files
// and directories, even dangling) and hard links that stay inside the checkout
// are kept, and terraform can read through them.
func TestExtractTarballLinksInsideTheTree(t *testing.T) {
	dst := t.TempDir()
	skipped, err := ExtractTarball(bytes.NewReader(tarball(t, []entry{
		{name: "top/", typ: tar.TypeDir},
		{name: "top/main.tf", body: "terraform {}"},
		{name: "top/modules/common/vars.tf", body: "variable \"x\" {}"},
		{name: "top/env/prod/main.tf", typ: tar.TypeSymlink, link: "../../main.tf"},
		{name: "top/env/prod/common", typ: tar.TypeSymlink, link: "../../modules/common"},
		{name: "top/current.tf", typ: tar.TypeSymlink, link: "alias.tf"},
		{name: "top/alias.tf", typ: tar.TypeSymlink, link: "./env/prod/main.tf"},
		{name: "top/self", typ: tar.TypeSymlink, link: "."},
		{name: "top/via-self", typ: tar.TypeSymlink, link: "self/self/main.tf"},
		{name: "top/up-and-down", typ: tar.TypeSymlink, link: "env/prod/common/../../main.tf"}, // modules/common/../../main.tf
		{name: "top/dangling", typ: tar.TypeSymlink, link: "not/there"},
		{name: "top/copy.tf", typ: tar.TypeLink, link: "top/main.tf"},
	})), dst, 1<<20, 100)
	require.NoError(t, err)
	require.Empty(t, skipped)
	for name, want := range map[string]string{
		"env/prod/main.tf":        "terraform {}",
		"env/prod/common/vars.tf": "variable \"x\" {}",
		"current.tf":              "terraform {}",
		"via-self":                "terraform {}",
		"up-and-down":             "terraform {}",
		"copy.tf":                 "terraform {}",
	} {
		b, err := os.ReadFile(filepath.Join(dst, filepath.FromSlash(name)))
		require.NoError(t, err, name)
		require.Equal(t, want, string(b), name)
	}
	target, err := os.Readlink(filepath.Join(dst, "env", "prod", "main.tf"))
	require.NoError(t, err)
	require.Equal(t, "../../main.tf", target, "links are kept as the PR wrote them")
	_, err = os.Stat(filepath.Join(dst, "dangling"))
	require.True(t, os.IsNotExist(err))
	requireLinksStayInside(t, dst)
}

// requireLinksStayInside checks every symlink under dst with the kernel's own
// resolution (os.Root follows links and refuses those that leave it).
func requireLinksStayInside(t *testing.T, dst string) {
	t.Helper()
	root, err := os.OpenRoot(dst)
	require.NoError(t, err)
	defer root.Close()
	realDst, err := filepath.EvalSymlinks(dst)
	require.NoError(t, err)
	require.NoError(t, filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		if d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		rel, err := filepath.Rel(dst, p)
		require.NoError(t, err)
		if _, err := root.Stat(rel); err != nil {
			require.NotContains(t, err.Error(), "escapes", "symlink %s leaves the checkout", rel)
		}
		if real, err := filepath.EvalSymlinks(p); err == nil {
			require.True(t, real == realDst || strings.HasPrefix(real, realDst+string(filepath.Separator)), "symlink %s resolves to %s", rel, real)
		}
		return nil
	}))
}

func FuzzExtractTarball(f *testing.F) {
	f.Add(tarball(f, []entry{{name: "top/a.tf", body: "x"}}))
	f.Add(tarball(f, []entry{{name: "top/../x", body: "x"}}))
	f.Add(tarball(f, []entry{{name: "top/s", typ: tar.TypeSymlink, link: "."}, {name: "top/l", typ: tar.TypeSymlink, link: "s/.."}}))
	f.Add(tarball(f, []entry{{name: "top/a.tf", body: "x"}, {name: "top/b", typ: tar.TypeSymlink, link: "a.tf"}, {name: "top/c", typ: tar.TypeLink, link: "top/a.tf"}}))
	f.Add(tarball(f, []entry{{name: "top/d/up", typ: tar.TypeSymlink, link: ".."}, {name: "top/d/l", typ: tar.TypeSymlink, link: "up/../x"}}))
	f.Add([]byte{0x1f, 0x8b})
	f.Fuzz(func(t *testing.T, data []byte) {
		parent := t.TempDir()
		dst := filepath.Join(parent, "co")
		require.NoError(t, os.Mkdir(dst, 0o755))
		skipped, err := ExtractTarball(bytes.NewReader(data), dst, 1<<20, 100)
		entries, rerr := os.ReadDir(parent)
		require.NoError(t, rerr)
		require.Len(t, entries, 1, "nothing is written beside the checkout")
		if err == nil {
			requireLinksStayInside(t, dst)
			for _, l := range skipped {
				_, err := os.Lstat(filepath.Join(dst, filepath.FromSlash(l.Name)))
				require.True(t, os.IsNotExist(err), "the left-out link %s is not made", l.Name)
			}
		} else {
			requireNoSymlinks(t, dst)
		}
	})
}

// GitHub's rate limit on a tarball is a wait the caller recognises
// (LimitWait), not an unexplained failure.
func TestDownloadTarballRateLimitIsAWait(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "30")
		w.WriteHeader(http.StatusForbidden)
	}))
	defer srv.Close()
	clock := fakeclock.New(time.Date(2026, 12, 4, 13, 30, 0, 0, time.UTC))
	_, err := DownloadTarball(context.Background(), srv.Client(), srv.URL+"/", "o", "r", "abc", t.TempDir(), clock.Now)
	until, limit, ok := LimitWait(err, clock.Now())
	require.True(t, ok, "%v", err)
	require.Equal(t, LimitSecondary, limit)
	require.Equal(t, clock.Now().Add(30*time.Second), until, "read on the given clock")
}
