package repoconfig

import (
	"path"
	"slices"
	"sort"
	"strings"
)

// ModuleCalls lists the local modules the Terraform module in dir calls: the
// directories of its module blocks' local sources ("./x", "../x"), slash-
// separated and relative to the repository root. Remote sources are not
// listed. It may be nil (nothing is known of the modules).
type ModuleCalls func(dir string) []string

// Change is what a pull request changes, for SelectProjects.
type Change struct {
	Files []string
	// Calls reads the module graph of the pull request's head; may be nil.
	Calls ModuleCalls
	// Base is the branch the pull request merges into, DefaultBranch the
	// repository's; "" when not known (then every project's branches match).
	Base, DefaultBranch string
}

// SelectProjects picks the projects a change touches.
//
// With configured projects, those whose base branches match (branches, the
// default branch when unset) and that read a changed file: with
// when_modified, a file its globs match; without, a file under its dir, one
// of its var files or of the files its init and plan arguments name, or a
// file under a local module it calls, directly or through other modules. A
// change no project reads selects none.
//
// Without configured projects: every directory holding a changed .tf or
// .tfvars file.
func SelectProjects(cfg *Config, ch Change) []Project {
	if len(cfg.Projects) > 0 {
		var out []Project
		for _, p := range cfg.Projects {
			if p.OnBranch(ch.Base, ch.DefaultBranch) && p.reads(ch.Files, ch.Calls) {
				out = append(out, p)
			}
		}
		return out
	}
	dirs := map[string]bool{}
	for _, f := range ch.Files {
		if isTerraformFile(f) {
			dirs[path.Dir(f)] = true
		}
	}
	var out []Project
	for d := range dirs {
		out = append(out, Project{Name: d, Dir: d, Workspace: DefaultWorkspace, Apply: ApplyOnMerge})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Dir < out[j].Dir })
	return out
}

// OnBranch says whether pull requests into base plan the project.
func (p Project) OnBranch(base, defaultBranch string) bool {
	if base == "" {
		return true
	}
	if len(p.Branches) == 0 {
		return defaultBranch == "" || base == defaultBranch
	}
	for _, g := range p.Branches {
		if ok, _ := path.Match(g, base); ok {
			return true
		}
	}
	return false
}

// reads says whether the project reads one of files.
func (p Project) reads(files []string, calls ModuleCalls) bool {
	if len(p.WhenModified) > 0 {
		return slices.ContainsFunc(files, p.whenModified)
	}
	roots := append([]string{p.Dir}, p.ModuleDirs(calls)...)
	named := p.NamedFiles()
	return slices.ContainsFunc(files, func(f string) bool {
		return slices.Contains(named, f) || slices.ContainsFunc(roots, func(d string) bool { return under(f, d) })
	})
}

// whenModified says whether the project's when_modified globs match the
// repository-relative file f: the last glob that matches decides (a glob
// starting with ! excludes), as in .dockerignore.
func (p Project) whenModified(f string) bool {
	matched := false
	for _, g := range p.WhenModified {
		neg := strings.HasPrefix(g, "!")
		pattern := path.Join(p.Dir, strings.TrimPrefix(g, "!"))
		if globMatch(pattern, f) {
			matched = !neg
		}
	}
	return matched
}

// ModuleDirs are the local module directories the project calls, directly or
// through other modules, in the order found.
func (p Project) ModuleDirs(calls ModuleCalls) []string {
	if calls == nil {
		return nil
	}
	seen := map[string]bool{p.Dir: true}
	var out []string
	queue := []string{p.Dir}
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		for _, m := range calls(d) {
			if !seen[m] {
				seen[m] = true
				out = append(out, m)
				queue = append(queue, m)
			}
		}
	}
	return out
}

// NamedFiles are the repository-relative files the project's var_files,
// init_args and plan_args name.
func (p Project) NamedFiles() []string {
	var out []string
	for _, vf := range p.VarFiles {
		out = append(out, path.Join(p.Dir, vf))
	}
	for _, a := range slices.Concat(p.InitArgs, p.PlanArgs) {
		name, value, ok := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if ok && (name == "var-file" || (name == "backend-config" && !strings.Contains(value, "="))) {
			out = append(out, path.Join(p.Dir, value))
		}
	}
	return out
}

func under(f, dir string) bool {
	return dir == "." || f == dir || strings.HasPrefix(f, dir+"/")
}

// globMatch matches a slash-separated path against a glob where * and ?
// stay within one path segment and ** matches any number of segments. A
// glob that matches a directory matches everything below it.
func globMatch(pattern, name string) bool {
	ps, ns := strings.Split(pattern, "/"), strings.Split(name, "/")
	for n := len(ns); n > 0; n-- {
		if matchSegments(ps, ns[:n]) {
			return true
		}
	}
	return false
}

func matchSegments(ps, ns []string) bool {
	for len(ps) > 0 {
		if ps[0] == "**" {
			for i := 0; i <= len(ns); i++ {
				if matchSegments(ps[1:], ns[i:]) {
					return true
				}
			}
			return false
		}
		if len(ns) == 0 {
			return false
		}
		if ok, _ := path.Match(ps[0], ns[0]); !ok {
			return false
		}
		ps, ns = ps[1:], ns[1:]
	}
	return len(ns) == 0
}

func isTerraformFile(f string) bool {
	return strings.HasSuffix(f, ".tf") || strings.HasSuffix(f, ".tfvars") || strings.HasSuffix(f, ".tf.json")
}
