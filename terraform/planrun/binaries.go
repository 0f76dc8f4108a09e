package planrun

import (
	"fmt"
	"sort"
	"strings"

	version "github.com/hashicorp/go-version"

	"github.com/shardgate/shardgate/internal/tfconfig"
	"github.com/shardgate/shardgate/policy/repoconfig"
	"github.com/shardgate/shardgate/terraform/runner"
)

// Binary is one configured terraform or OpenTofu binary with its runner.
type Binary struct {
	runner.Identity
	Runner *runner.Runner
}

// Binaries are the server's binaries: the default (terraform.binary) and
// those of terraform.binaries. A project runs the newest that satisfies its
// version constraints; its plan and apply run the same one.
type Binaries struct {
	def Binary
	all []Binary // newest first; of equal versions the default first
}

// NewBinaries returns the binaries; more may repeat def (one path counts once).
func NewBinaries(def Binary, more ...Binary) *Binaries {
	b := &Binaries{def: def, all: []Binary{def}}
	for _, m := range more {
		if _, ok := b.ByPath(m.Path); !ok {
			b.all = append(b.all, m)
		}
	}
	sort.SliceStable(b.all, func(i, j int) bool { return newer(b.all[i].Version, b.all[j].Version) })
	return b
}

func newer(a, b string) bool {
	va, erra := version.NewVersion(a)
	vb, errb := version.NewVersion(b)
	return erra == nil && errb == nil && va.GreaterThan(vb)
}

// Several says whether there is a choice: the comment then names the binary.
func (b *Binaries) Several() bool { return len(b.all) > 1 }

// ByPath is the configured binary at path (the one a plan ran), for its apply.
func (b *Binaries) ByPath(path string) (Binary, bool) {
	for _, x := range b.all {
		if x.Path == path {
			return x, true
		}
	}
	return Binary{}, false
}

// For chooses the binary of project p in checkout: the newest whose version
// satisfies p's terraform_version or, without one, every required_version of
// its root module; with neither, the default. None satisfying is an error
// that names the constraint and the versions there are.
func (b *Binaries) For(checkout string, p repoconfig.Project) (Binary, error) {
	constraints, from := []string{p.TerraformVersion}, "terraform_version"
	if p.TerraformVersion == "" {
		m, err := tfconfig.Read(checkout, p.Dir)
		if err != nil || len(m.RequiredVersions) == 0 {
			return b.def, nil // terraform itself reports a file it cannot parse
		}
		constraints, from = m.RequiredVersions, "required_version in "+p.Dir
	}
	var cs version.Constraints
	for _, c := range constraints {
		parsed, err := version.NewConstraint(c)
		if err != nil {
			return Binary{}, fmt.Errorf("project %q: %s %q is not a version constraint", p.Name, from, c)
		}
		cs = append(cs, parsed...)
	}
	var names []string
	for _, x := range b.all {
		v, err := version.NewVersion(x.Version)
		if err == nil && cs.Check(v) {
			return x, nil
		}
		names = append(names, x.Name())
	}
	return Binary{}, fmt.Errorf("project %q: no terraform of this shardgate server satisfies %s %q; it has %s (terraform.binary and terraform.binaries)",
		p.Name, from, strings.Join(constraints, ", "), strings.Join(names, ", "))
}
