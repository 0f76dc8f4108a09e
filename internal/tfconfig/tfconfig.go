// Package tfconfig reads the little of a Terraform module's files that
// shardgate needs before running terraform: the local modules it calls (to
// know which projects a change reaches) and its required_version constraints
// (to choose the terraform binary). It parses HCL and JSON syntax and never
// evaluates anything; a file it cannot parse is reported, not guessed at.
package tfconfig

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
)

// Module is what one directory's .tf and .tf.json files say.
type Module struct {
	// LocalCalls are the directories of the module blocks' local sources
	// ("./x", "../x"), slash-separated and relative to the repository root,
	// sorted, each once. Remote sources and sources leaving the repository
	// are not listed.
	LocalCalls []string
	// RequiredVersions are the terraform blocks' required_version
	// constraints, in file order.
	RequiredVersions []string
}

var schema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{
	{Type: "module", LabelNames: []string{"name"}},
	{Type: "terraform"},
}}

var moduleSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "source"}}}
var terraformSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "required_version"}}}

// Read parses the module in dir (slash-separated, relative to root, the
// repository's checkout). A directory without Terraform files is an empty
// Module; a file that does not parse is an error naming it.
func Read(root, dir string) (Module, error) {
	var m Module
	abs := filepath.Join(root, filepath.FromSlash(dir))
	entries, err := os.ReadDir(abs)
	if os.IsNotExist(err) {
		return m, nil
	}
	if err != nil {
		return m, err
	}
	p := hclparse.NewParser()
	calls := map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() {
			continue
		}
		var f *hcl.File
		var diags hcl.Diagnostics
		switch {
		case strings.HasSuffix(name, ".tf"):
			f, diags = p.ParseHCLFile(filepath.Join(abs, name))
		case strings.HasSuffix(name, ".tf.json"):
			f, diags = p.ParseJSONFile(filepath.Join(abs, name))
		default:
			continue
		}
		if diags.HasErrors() {
			return m, fmt.Errorf("%s: %s", path.Join(dir, name), diags.Errs()[0])
		}
		content, _, _ := f.Body.PartialContent(schema)
		for _, b := range content.Blocks {
			switch b.Type {
			case "module":
				if src, ok := literal(b.Body, moduleSchema, "source"); ok && (strings.HasPrefix(src, "./") || strings.HasPrefix(src, "../")) {
					if d := path.Join(dir, src); d != ".." && !strings.HasPrefix(d, "../") {
						calls[d] = true
					}
				}
			case "terraform":
				if v, ok := literal(b.Body, terraformSchema, "required_version"); ok {
					m.RequiredVersions = append(m.RequiredVersions, v)
				}
			}
		}
	}
	for d := range calls {
		m.LocalCalls = append(m.LocalCalls, d)
	}
	sort.Strings(m.LocalCalls)
	return m, nil
}

// literal is the string value of an attribute written as a constant.
func literal(body hcl.Body, s *hcl.BodySchema, name string) (string, bool) {
	c, _, _ := body.PartialContent(s)
	a, ok := c.Attributes[name]
	if !ok {
		return "", false
	}
	v, diags := a.Expr.Value(nil)
	if diags.HasErrors() || v.IsNull() || !v.IsKnown() || v.Type().FriendlyName() != "string" {
		return "", false
	}
	return v.AsString(), true
}
