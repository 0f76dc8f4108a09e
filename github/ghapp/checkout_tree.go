package ghapp

import (
	"archive/tar"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// tree is a checkout being extracted: what it holds so far and what it costs.
// Names are slash-separated, relative to the checkout, cleaned.
type tree struct {
	root       *os.Root
	maxBytes   int64
	maxEntries int
	bytes      int64
	top        string
	entries    map[string]byte   // every entry by name: its tar type; implied directories too
	links      map[string]string // symlink name -> target, made by finish
	order      []string          // symlinks and explicit directories, in archive order
	skipped    []SkippedLink     // symlinks finish does not make, in archive order
	steps      int               // path components walked resolving links, against maxResolveSteps
}

// Bounds on resolving links, so an archive of long chained targets cannot
// make the walk itself the attack: targets and walked paths within PATH_MAX,
// and a budget of components walked for the whole tree (a repository with
// thousands of links walks a few tens of thousands).
const (
	maxPathBytes    = 4096
	maxResolveSteps = 1 << 20
)

func newTree(root *os.Root, maxBytes int64, maxEntries int) *tree {
	return &tree{root: root, maxBytes: maxBytes, maxEntries: maxEntries,
		entries: map[string]byte{}, links: map[string]string{}}
}

func refuse(format string, args ...any) error {
	return &CheckoutError{Reason: fmt.Sprintf(format, args...)}
}

// entryName strips the archive's top directory from an archive name and
// refuses names outside it or escaping it; "" is the top directory itself.
func (x *tree) entryName(archived string) (string, error) {
	first, rest, _ := strings.Cut(strings.TrimPrefix(archived, "./"), "/")
	if x.top == "" {
		x.top = first
	}
	if first != x.top {
		return "", refuse("entry %q is outside the archive's top directory", archived)
	}
	if rest == "" {
		return "", nil
	}
	clean := path.Clean(rest)
	if path.IsAbs(rest) || clean == ".." || strings.HasPrefix(clean, "../") || strings.Contains(rest, "\\") {
		return "", refuse("entry %q escapes the checkout directory", archived)
	}
	return clean, nil
}

// add records or writes one entry.
func (x *tree) add(hdr *tar.Header, name string, r io.Reader) error {
	if err := x.claim(name, hdr.Typeflag); err != nil {
		return err
	}
	switch hdr.Typeflag {
	case tar.TypeDir:
		x.order = append(x.order, name)
		return x.charge(entryBlock)
	case tar.TypeReg:
		if err := x.charge(hdr.Size); err != nil {
			return err
		}
		return x.writeFile(name, r, hdr)
	case tar.TypeSymlink:
		if hdr.Linkname == "" {
			return refuse("symlink %q has no target", name)
		}
		if len(hdr.Linkname) >= maxPathBytes {
			return refuse("symlink %q has a target of %d bytes; the kernel takes at most %d", name, len(hdr.Linkname), maxPathBytes-1)
		}
		x.links[name] = hdr.Linkname
		x.order = append(x.order, name)
		return x.charge(entryBlock)
	case tar.TypeLink:
		return x.hardLink(name, hdr.Linkname)
	default:
		delete(x.entries, name)
		return refuse("entry %q has unsupported type %q", hdr.Name, string(hdr.Typeflag))
	}
}

// claim counts name and the directories its path implies as entries, and
// refuses a name given twice or one that lies inside a symlink: nothing is
// ever written through a link.
func (x *tree) claim(name string, typ byte) error {
	for dir := range parents(name) {
		switch t, seen := x.entries[dir]; {
		case t == tar.TypeSymlink:
			return refuse("entry %q is inside the symlink %q", name, dir)
		case seen && t != tar.TypeDir:
			return refuse("entry %q is inside the file %q", name, dir)
		case !seen:
			x.entries[dir] = tar.TypeDir
			if err := x.charge(entryBlock); err != nil {
				return err
			}
		}
	}
	switch t, seen := x.entries[name]; {
	case t == tar.TypeSymlink:
		return refuse("entry %q is already a symlink", name)
	case seen && !(t == tar.TypeDir && typ == tar.TypeDir):
		return refuse("entry %q appears twice in the archive", name)
	case seen:
		return nil // an implied directory, now listed itself
	}
	x.entries[name] = typ
	if len(x.entries) > x.maxEntries {
		return refuse("the tree has more than %d entries (files, directories and links)", x.maxEntries)
	}
	return nil
}

// parents yields the directories above name, outermost first.
func parents(name string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for i := 0; i < len(name); i++ {
			if name[i] == '/' && !yield(name[:i]) {
				return
			}
		}
	}
}

func (x *tree) charge(n int64) error {
	x.bytes += n
	if len(x.entries) > x.maxEntries {
		return refuse("the tree has more than %d entries (files, directories and links)", x.maxEntries)
	}
	if x.bytes > x.maxBytes {
		if x.maxBytes%(1<<20) == 0 {
			return refuse("the tree is larger than %d MiB", x.maxBytes>>20)
		}
		return refuse("the tree is larger than %d bytes", x.maxBytes)
	}
	return nil
}

func (x *tree) writeFile(name string, r io.Reader, hdr *tar.Header) error {
	local := filepath.FromSlash(name)
	if err := x.root.MkdirAll(filepath.Dir(local), 0o755); err != nil {
		return fmt.Errorf("extract %s: %w", name, err)
	}
	mode := os.FileMode(0o644)
	if hdr.Mode&0o111 != 0 {
		mode = 0o755
	}
	f, err := x.root.OpenFile(local, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode)
	if err != nil {
		return fmt.Errorf("extract %s: %w", name, err)
	}
	if _, err := io.CopyN(f, r, hdr.Size); err != nil {
		f.Close()
		return fmt.Errorf("extract %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("extract %s: %w", name, err)
	}
	return nil
}

// hardLink links name to an earlier regular file of the archive; tar names
// that file by its archive path.
func (x *tree) hardLink(name, archived string) error {
	if err := x.charge(entryBlock); err != nil {
		return err
	}
	target, err := x.entryName(archived)
	if err != nil {
		return refuse("hard link %q -> %q leaves the checkout: %s", name, archived, err.(*CheckoutError).Reason)
	}
	for dir := range parents(target) {
		if x.entries[dir] == tar.TypeSymlink {
			return refuse("hard link %q -> %q is inside the symlink %q", name, archived, dir)
		}
	}
	if target == "" || x.entries[target] != tar.TypeReg {
		return refuse("hard link %q -> %q is not an earlier file of the archive", name, archived)
	}
	local := filepath.FromSlash(name)
	if err := x.root.MkdirAll(filepath.Dir(local), 0o755); err != nil {
		return fmt.Errorf("extract %s: %w", name, err)
	}
	if err := x.root.Link(filepath.FromSlash(target), local); err != nil {
		return fmt.Errorf("extract %s: %w", name, err)
	}
	return nil
}

// finish resolves every symlink against the whole tree, then makes the
// directories and the links that stay inside it. A link that leads out of
// the checkout or round in a loop is not made: a git clone would make it, but
// shardgate never follows it, and the rest of the tree is still good.
func (x *tree) finish() ([]SkippedLink, error) {
	skip := map[string]bool{}
	for _, name := range x.order {
		if target, ok := x.links[name]; ok {
			why, err := x.resolve(name, target)
			if err != nil {
				return nil, err
			}
			if why != "" {
				x.skipped = append(x.skipped, SkippedLink{Name: name, Target: target, Reason: why})
				skip[name] = true
			}
		}
	}
	for _, name := range x.order {
		if skip[name] {
			continue
		}
		local := filepath.FromSlash(name)
		target, isLink := x.links[name]
		var err error
		if isLink {
			if err = x.root.MkdirAll(filepath.Dir(local), 0o755); err == nil {
				err = x.root.Symlink(target, local)
			}
		} else {
			err = x.root.MkdirAll(local, 0o755)
		}
		if err != nil {
			return nil, fmt.Errorf("extract %s: %w", name, err)
		}
	}
	return x.skipped, nil
}

// Why resolve leaves a link out of the checkout.
const (
	skipEscapes = "escapes the checkout"
	skipLoop    = "is a loop or a chain of more than 40 links"
)

// resolve walks a symlink's target the way the kernel would, from the link's
// own directory, following the tree's other symlinks. It says why the link is
// not to be made when a ".." would climb above the checkout, a target is
// absolute, or the chain is longer than the kernel follows; it refuses the
// tree when the walk itself gets too long. Names that do not exist are walked
// as directories: a dangling link inside the tree is harmless.
func (x *tree) resolve(name, target string) (skip string, err error) {
	if path.IsAbs(target) {
		return skipEscapes, nil
	}
	var w walk // where the walk is, from the checkout's root
	if dir := path.Dir(name); dir != "." {
		for _, c := range strings.Split(dir, "/") {
			w.push(c)
		}
	}
	todo := strings.Split(target, "/")
	for hops, walked := 0, 0; len(todo) > 0; {
		c := todo[0]
		todo = todo[1:]
		x.steps++
		if walked += len(c) + 1; walked > (maxLinkHops+1)*maxPathBytes || x.steps > maxResolveSteps {
			return "", refuse("symlink %q -> %q takes too long to resolve", name, target)
		}
		switch c {
		case "", ".":
			continue
		case "..":
			if !w.pop() {
				return skipEscapes, nil
			}
			continue
		}
		w.push(c)
		next, isLink := x.links[string(w.path)]
		if !isLink {
			continue
		}
		if hops++; hops > maxLinkHops {
			return skipLoop, nil
		}
		if path.IsAbs(next) {
			return skipEscapes + " through " + strconv.Quote(string(w.path)), nil
		}
		w.pop()
		todo = append(strings.Split(next, "/"), todo...)
	}
	return "", nil
}

// walk is a path from the checkout's root, grown and shrunk a component at a
// time without rebuilding it.
type walk struct {
	path []byte
	ends []int
}

func (w *walk) push(c string) {
	w.ends = append(w.ends, len(w.path))
	if len(w.path) > 0 {
		w.path = append(w.path, '/')
	}
	w.path = append(w.path, c...)
}

// pop drops the last component; false when the walk is at the root.
func (w *walk) pop() bool {
	if len(w.ends) == 0 {
		return false
	}
	w.path = w.path[:w.ends[len(w.ends)-1]]
	w.ends = w.ends[:len(w.ends)-1]
	return true
}
