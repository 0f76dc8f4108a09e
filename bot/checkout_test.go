package bot

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
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
	err := extractTarball(bytes.NewReader(tarball(t, []entry{
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

func TestExtractTarballRefuses(t *testing.T) {
	tests := []struct {
		name    string
		entries []entry
		want    string
	}{
		{"parent escape", []entry{{name: "top/../../etc/passwd", body: "x"}}, "escapes"},
		{"absolute inside", []entry{{name: "top//etc/passwd", body: "x"}}, "escapes"},
		{"second top dir", []entry{{name: "top/a", body: "x"}, {name: "other/b", body: "y"}}, "outside the archive's top directory"},
		{"symlink", []entry{{name: "top/link", typ: tar.TypeSymlink, link: "/etc/passwd"}}, "is a link"},
		{"hard link", []entry{{name: "top/a", body: "x"}, {name: "top/b", typ: tar.TypeLink, link: "top/a"}}, "is a link"},
		{"device", []entry{{name: "top/dev", typ: tar.TypeChar}}, "unsupported type"},
		{"too many files", []entry{{name: "top/1", body: "a"}, {name: "top/2", body: "b"}, {name: "top/3", body: "c"}}, "more than 2 files"},
		{"too large", []entry{{name: "top/big", body: string(make([]byte, 2048))}}, "larger than"},
		{"duplicate entry", []entry{{name: "top/a", body: "x"}, {name: "top/a", body: "y"}}, "file exists"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "co")
			require.NoError(t, os.Mkdir(dst, 0o755))
			err := extractTarball(bytes.NewReader(tarball(t, tt.entries)), dst, 1024, 2)
			require.ErrorContains(t, err, tt.want)
			_, statErr := os.Stat(filepath.Join(filepath.Dir(dst), "etc"))
			require.True(t, os.IsNotExist(statErr), "nothing was written outside the checkout")
		})
	}
	err := extractTarball(bytes.NewReader([]byte("not gzip")), t.TempDir(), 1024, 2)
	require.ErrorContains(t, err, "not gzip")
}

func FuzzExtractTarball(f *testing.F) {
	f.Add(tarball(f, []entry{{name: "top/a.tf", body: "x"}}))
	f.Add(tarball(f, []entry{{name: "top/../x", body: "x"}}))
	f.Add([]byte{0x1f, 0x8b})
	f.Fuzz(func(t *testing.T, data []byte) {
		parent := t.TempDir()
		dst := filepath.Join(parent, "co")
		require.NoError(t, os.Mkdir(dst, 0o755))
		_ = extractTarball(bytes.NewReader(data), dst, 1<<20, 100)
		entries, err := os.ReadDir(parent)
		require.NoError(t, err)
		require.Len(t, entries, 1, "nothing is written beside the checkout")
	})
}
