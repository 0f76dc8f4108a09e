package repoconfig

import (
	"path"
	"sort"
	"strings"
)

// SelectProjects picks the projects a change touches. With configured projects:
// those with a changed file under their dir, or all of them when a .tf file
// outside every project changed (a shared module). Without: every directory
// holding a changed .tf or .tfvars file.
func SelectProjects(cfg *Config, files []string) []Project {
	if len(cfg.Projects) > 0 {
		var out []Project
		sharedTF := false
		hit := map[string]bool{}
		for _, f := range files {
			inProject := false
			for _, p := range cfg.Projects {
				if p.Dir == "." || f == p.Dir || strings.HasPrefix(f, p.Dir+"/") {
					hit[p.Name] = true
					inProject = true
				}
			}
			if !inProject && isTerraformFile(f) {
				sharedTF = true
			}
		}
		for _, p := range cfg.Projects {
			if sharedTF || hit[p.Name] {
				out = append(out, p)
			}
		}
		return out
	}
	dirs := map[string]bool{}
	for _, f := range files {
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

func isTerraformFile(f string) bool {
	return strings.HasSuffix(f, ".tf") || strings.HasSuffix(f, ".tfvars") || strings.HasSuffix(f, ".tf.json")
}
