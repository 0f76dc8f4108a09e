package plan

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/policy/repoconfig"
)

// LinkRule is the rule id of the warning that names the symlinks of the
// checkout shardgate did not make.
const LinkRule = "checkout.symlink"

// maxLinksNamed bounds how many left-out links one warning or error names.
const maxLinksNamed = 10

// linksNeeded are the left-out links a project cannot be planned without:
// files terraform reads in the project's own directory, and its var files.
// A link elsewhere (a README alias, a docs link) costs nothing.
func linksNeeded(skipped []ghapp.SkippedLink, p repoconfig.Project) []ghapp.SkippedLink {
	var needed []ghapp.SkippedLink
	for _, l := range skipped {
		if isVarFile(p, l.Name) || path.Join(p.Dir, path.Base(l.Name)) == l.Name && terraformReads(l.Name) {
			needed = append(needed, l)
		}
	}
	return needed
}

func isVarFile(p repoconfig.Project, name string) bool {
	return slices.ContainsFunc(p.VarFiles, func(vf string) bool { return path.Join(p.Dir, vf) == name })
}

// terraformReads says whether terraform or OpenTofu loads a file of this name
// from a root module's directory.
func terraformReads(name string) bool {
	for _, ext := range []string{".tf", ".tf.json", ".tofu", ".tofu.json", ".tfvars", ".tfvars.json"} {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return path.Base(name) == ".terraform.lock.hcl"
}

// linksError is a project's plan error when it needs a left-out link.
func linksError(needed []ghapp.SkippedLink) string {
	return "the project needs a symlink shardgate does not follow: " + namedLinks(needed) +
		". Make it a link inside the repository, or a copy of the file."
}

// linksWarning names the links of the checkout that were not made.
func linksWarning(skipped []string) policy.Warning {
	return policy.Warning{Rule: LinkRule, Title: "Symlinks",
		Message: fmt.Sprintf("shardgate did not make %s of the repository (they lead out of it or loop): %s",
			plural(len(skipped), "symlink"), strings.Join(capNames(skipped), "; "))}
}

func namedLinks(links []ghapp.SkippedLink) string {
	return strings.Join(capNames(linkNames(links)), "; ")
}

func capNames(names []string) []string {
	if len(names) <= maxLinksNamed {
		return names
	}
	return append(names[:maxLinksNamed:maxLinksNamed], fmt.Sprintf("and %d more", len(names)-maxLinksNamed))
}

func linkNames(links []ghapp.SkippedLink) []string {
	var names []string
	for _, l := range links {
		names = append(names, l.String())
	}
	return names
}
