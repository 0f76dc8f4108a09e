package githubtest

import (
	"fmt"
	"strconv"
	"strings"
)

// changedFile is one entry of a diff, the source of pulls/list-files and
// compare answers.
type changedFile struct {
	Path      string
	Status    string // added, removed, modified
	Additions int
	Deletions int
	BlobSHA   string
}

// treeEntry is one child of a directory at a commit.
type treeEntry struct {
	Name string
	Type string // blob, tree, commit
	SHA  string
}

func (g *GitRepo) objectType(sha, path string) (string, error) {
	out, err := g.run(nil, "cat-file", "-t", sha+":"+path)
	if err != nil {
		return "", fmt.Errorf("look up %s: not found", path)
	}
	return strings.TrimSpace(out), nil
}

func (g *GitRepo) blob(sha, path string) (content []byte, blobSHA string, err error) {
	id, err := g.run(nil, "rev-parse", sha+":"+path)
	if err != nil {
		return nil, "", fmt.Errorf("read %s: not found", path)
	}
	out, err := g.run(nil, "cat-file", "blob", strings.TrimSpace(id))
	if err != nil {
		return nil, "", fmt.Errorf("read %s: %w", path, err)
	}
	return []byte(out), strings.TrimSpace(id), nil
}

func (g *GitRepo) tree(sha, path string) ([]treeEntry, error) {
	spec := sha + ":" + path
	out, err := g.run(nil, "ls-tree", "-z", spec)
	if err != nil {
		return nil, fmt.Errorf("list %s: not found", path)
	}
	var entries []treeEntry
	for _, line := range strings.Split(out, "\x00") {
		meta, name, ok := strings.Cut(line, "\t")
		if !ok {
			continue
		}
		f := strings.Fields(meta)
		if len(f) != 3 {
			continue
		}
		entries = append(entries, treeEntry{Name: name, Type: f[1], SHA: f[2]})
	}
	return entries, nil
}

func (g *GitRepo) mergeBase(a, b string) (string, error) {
	out, err := g.run(nil, "merge-base", a, b)
	if err != nil {
		return "", fmt.Errorf("merge base of %s and %s: %w", a, b, err)
	}
	return strings.TrimSpace(out), nil
}

// commitsBetween lists the commits reachable from head and not from base,
// oldest first, as GitHub's compare does.
func (g *GitRepo) commitsBetween(base, head string) ([]string, error) {
	out, err := g.run(nil, "rev-list", "--reverse", base+".."+head)
	if err != nil {
		return nil, fmt.Errorf("list commits: %w", err)
	}
	return strings.Fields(out), nil
}

func (g *GitRepo) diff(base, head string) ([]changedFile, error) {
	out, err := g.run(nil, "diff", "--no-renames", "--raw", "--numstat", "-z", "--abbrev=40", base, head)
	if err != nil {
		return nil, fmt.Errorf("diff %s %s: %w", base, head, err)
	}
	// With -z, --raw records are ":<modes> <shas> <status>\0<path>\0" and
	// --numstat records are "<add>\t<del>\t<path>\0", in that order.
	fields := strings.Split(out, "\x00")
	byPath := map[string]*changedFile{}
	var files []*changedFile
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		switch {
		case strings.HasPrefix(f, ":") && i+1 < len(fields):
			meta := strings.Fields(f)
			path := fields[i+1]
			i++
			if len(meta) < 5 {
				continue
			}
			cf := &changedFile{Path: path, BlobSHA: meta[3], Status: "modified"}
			switch meta[4] {
			case "A":
				cf.Status = "added"
			case "D":
				cf.Status, cf.BlobSHA = "removed", meta[2]
			}
			byPath[path] = cf
			files = append(files, cf)
		case strings.Count(f, "\t") == 2:
			parts := strings.SplitN(f, "\t", 3)
			if cf := byPath[parts[2]]; cf != nil {
				cf.Additions, _ = strconv.Atoi(parts[0])
				cf.Deletions, _ = strconv.Atoi(parts[1])
			}
		}
	}
	result := make([]changedFile, 0, len(files))
	for _, cf := range files {
		result = append(result, *cf)
	}
	return result, nil
}

// isAncestor says whether commit a is reachable from b (a included).
func (g *GitRepo) isAncestor(a, b string) bool {
	_, err := g.run(nil, "merge-base", "--is-ancestor", a, b)
	return err == nil
}
