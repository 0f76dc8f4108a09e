package repoconfig

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// FromAtlantis translates a repository's atlantis.yaml (version 2 or 3) into
// a .shardgate.yaml: every project with its dir, workspace, terraform version,
// when_modified, depends_on (execution_order_group becomes dependencies on
// the group before), branches and its workflow's init and plan extra_args.
// What shardgate cannot carry over (custom run steps, apply requirements,
// automerge, ...) becomes a comment saying what shardgate does instead, and so
// does every key this translator does not know: nothing is dropped silently.
// notes lists those comments too, for the caller to show. A file that is not
// an atlantis.yaml is an *Error.
func FromAtlantis(source string, data []byte) (out []byte, notes []string, err error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, nil, &Error{Source: source, Problems: []string{"not YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}}
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, nil, &Error{Source: source, Problems: []string{"not an atlantis.yaml: want a mapping with version and projects"}}
	}
	t := &translator{workflows: map[string]*yaml.Node{}}
	root := doc.Content[0]
	if v := lookup(root, "version"); v == nil || (v.Value != "3" && v.Value != "2") {
		return nil, nil, &Error{Source: source, Problems: []string{"not an atlantis.yaml of version 2 or 3 (its version key)"}}
	}
	if wf := lookup(root, "workflows"); wf != nil && wf.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(wf.Content); i += 2 {
			t.workflows[wf.Content[i].Value] = wf.Content[i+1]
		}
	}
	var projects *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i].Value, root.Content[i+1]
		switch k {
		case "version":
		case "projects":
			projects = v
		case "workflows":
			// Used through each project's workflow; one no project uses is named.
			for i := 0; i+1 < len(v.Content); i += 2 {
				if !usesWorkflow(lookup(root, "projects"), v.Content[i].Value) {
					t.top = append(t.top, fmt.Sprintf("workflows.%s: no project uses it", v.Content[i].Value))
				}
			}
		default:
			t.top = append(t.top, topLevelNote(k, v))
		}
	}
	out, err = t.render(projects)
	return out, append(t.top, t.projectNotes...), err
}

// usesWorkflow says whether a project uses the workflow (the one named
// default serves projects that name none).
func usesWorkflow(projects *yaml.Node, name string) bool {
	if projects == nil {
		return false
	}
	for _, p := range projects.Content {
		if w := lookup(p, "workflow"); w != nil && w.Value == name {
			return true
		}
	}
	return name == "default"
}

// topLevelNote says what shardgate does instead of a top-level key.
func topLevelNote(key string, v *yaml.Node) string {
	instead := map[string]string{
		"automerge":                     "shardgate never merges; the merge applies the reviewed plans",
		"delete_source_branch_on_merge": "use the repository's \"Automatically delete head branches\" setting",
		"parallel_plan":                 "shardgate plans the projects of a pull request in one job; depends_on orders applies only",
		"parallel_apply":                "applies of different states run in parallel; depends_on orders them",
		"abort_on_execution_order_fail": "a dependent's apply always waits when its dependency fails",
		"autodiscover":                  "without a projects list shardgate plans every changed directory holding .tf files",
		"allowed_regexp_prefixes":       "shardgate has no regexp commands; `/shardgate apply <project>` names one project",
	}
	if why, ok := instead[key]; ok {
		return fmt.Sprintf("%s: %s: %s", key, scalarText(v), why)
	}
	return fmt.Sprintf("%s: unknown Atlantis key", key)
}

type translator struct {
	workflows    map[string]*yaml.Node
	top          []string
	projectNotes []string
}

// atlProject is one Atlantis project as read.
type atlProject struct {
	name, dir, workspace, version, branch, workflow string
	group                                           int
	hasGroup                                        bool
	whenModified, dependsOn                         []string
	notes                                           []string
}

func (t *translator) render(projects *yaml.Node) ([]byte, error) {
	var ps []*atlProject
	if projects != nil {
		for i, n := range projects.Content {
			ps = append(ps, t.readProject(i, n))
		}
	}
	names := map[string]int{}
	for _, p := range ps {
		names[p.name]++
	}
	// Unnamed projects get one from their dir and workspace.
	for _, p := range ps {
		if p.name == "" {
			p.name = strings.NewReplacer("/", "-", ".", "root").Replace(strings.Trim(p.dir, "/"))
			if p.name == "" {
				p.name = "root"
			}
			if p.workspace != "" && p.workspace != DefaultWorkspace {
				p.name += "-" + p.workspace
			}
			if names[p.name] > 0 {
				p.name += "-" + strconv.Itoa(names[p.name])
			}
			names[p.name]++
		}
	}
	groupDeps(ps)

	root := &yaml.Node{Kind: yaml.MappingNode}
	root.HeadComment = "Translated from atlantis.yaml by `shardgate config from-atlantis`.\nSettings it could not carry over are comments beside what they belonged to."
	add(root, "version", scalar("1"))
	if len(t.top) > 0 {
		root.Content[0].HeadComment = root.HeadComment + "\n\n" + strings.Join(prefixed(t.top), "\n")
		root.HeadComment = ""
	}
	list := &yaml.Node{Kind: yaml.SequenceNode}
	for _, p := range ps {
		item := &yaml.Node{Kind: yaml.MappingNode}
		add(item, "name", scalar(p.name))
		add(item, "dir", scalar(p.dir))
		if p.workspace != "" && p.workspace != DefaultWorkspace {
			add(item, "workspace", scalar(p.workspace))
		}
		if p.version != "" {
			add(item, "terraform_version", scalar(p.version))
		}
		addList(item, "when_modified", p.whenModified)
		addList(item, "depends_on", p.dependsOn)
		init, plan, env := t.workflowArgs(p)
		addList(item, "init_args", init)
		addList(item, "plan_args", plan)
		if len(env) > 0 {
			m := &yaml.Node{Kind: yaml.MappingNode}
			for _, k := range sortedKeys(env) {
				add(m, k, scalar(env[k]))
			}
			add(item, "env", m)
		}
		if p.branch != "" {
			if g, ok := branchGlob(p.branch); ok {
				addList(item, "branches", []string{g})
			} else {
				p.notes = append(p.notes, fmt.Sprintf("branch %s: a regular expression shardgate cannot write as a glob; set branches: [GLOB] by hand (default: the default branch)", p.branch))
			}
		}
		if len(p.notes) > 0 {
			item.HeadComment = strings.Join(prefixed(p.notes), "\n")
			for _, n := range p.notes {
				t.projectNotes = append(t.projectNotes, p.name+": "+n)
			}
		}
		list.Content = append(list.Content, item)
	}
	if len(list.Content) == 0 {
		list.Style = yaml.FlowStyle
	}
	add(root, "projects", list)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return nil, err
	}
	return buf.Bytes(), enc.Close()
}

func prefixed(notes []string) []string {
	out := make([]string, len(notes))
	for i, n := range notes {
		out[i] = "not carried over: " + strings.TrimPrefix(n, "not carried over: ")
	}
	return out
}

func (t *translator) readProject(i int, n *yaml.Node) *atlProject {
	p := &atlProject{}
	if n.Kind != yaml.MappingNode {
		p.notes = append(p.notes, fmt.Sprintf("projects[%d] is not a mapping", i))
		return p
	}
	for j := 0; j+1 < len(n.Content); j += 2 {
		k, v := n.Content[j].Value, n.Content[j+1]
		switch k {
		case "name":
			p.name = v.Value
		case "dir":
			p.dir = strings.TrimPrefix(v.Value, "./")
			if p.dir == "" {
				p.dir = "."
			}
		case "workspace":
			p.workspace = v.Value
		case "terraform_version":
			p.version = versionConstraint(v.Value)
		case "branch":
			p.branch = v.Value
		case "workflow":
			p.workflow = v.Value
		case "execution_order_group":
			p.group, _ = strconv.Atoi(v.Value)
			p.hasGroup = true
		case "depends_on":
			p.dependsOn = append(p.dependsOn, strings_(v)...)
		case "autoplan":
			for a := 0; a+1 < len(v.Content); a += 2 {
				switch v.Content[a].Value {
				case "when_modified":
					p.whenModified = strings_(v.Content[a+1])
				case "enabled":
					if v.Content[a+1].Value == "false" {
						p.notes = append(p.notes, "autoplan.enabled: false: shardgate plans every pull request that changes what the project reads; narrow that with when_modified")
					}
				default:
					p.notes = append(p.notes, fmt.Sprintf("autoplan.%s: unknown Atlantis key", v.Content[a].Value))
				}
			}
		case "apply_requirements", "plan_requirements", "import_requirements":
			p.notes = append(p.notes, fmt.Sprintf("%s: %s: shardgate plans every pull request and applies on merge, so branch protection (required reviews, the shardgate checks) is the requirement; `apply: manual` waits for an approver's `/shardgate apply`", k, scalarText(v)))
		case "delete_source_branch_on_merge":
			p.notes = append(p.notes, k+": use the repository's \"Automatically delete head branches\" setting")
		case "repo_locking", "repo_locks":
			p.notes = append(p.notes, k+": shardgate holds the Terraform state lock and its own stream locks; there is no repository lock")
		case "custom_policy_check":
			p.notes = append(p.notes, k+": shardgate judges every plan by its Rego policy (policy.policy_dirs adds your own)")
		case "silence_pr_comments":
			p.notes = append(p.notes, k+": shardgate keeps one comment per pull request and one check run per project")
		case "terraform_distribution":
			p.notes = append(p.notes, fmt.Sprintf("%s: %s: shardgate picks among the server's terraform.binaries (terraform or OpenTofu) by terraform_version", k, v.Value))
		default:
			p.notes = append(p.notes, k+": unknown Atlantis key")
		}
	}
	if p.dir == "" {
		p.dir = "."
		p.notes = append(p.notes, "dir: missing in atlantis.yaml; set to the repository root")
	}
	return p
}

// groupDeps turns execution_order_group into depends_on: each project depends
// on every project of the nearest lower group (the order is transitive).
func groupDeps(ps []*atlProject) {
	var groups []int
	seen := map[int]bool{}
	for _, p := range ps {
		if p.hasGroup && !seen[p.group] {
			seen[p.group] = true
			groups = append(groups, p.group)
		}
	}
	sort.Ints(groups)
	if len(groups) < 2 {
		return
	}
	for _, p := range ps {
		g := 0
		if p.hasGroup {
			g = p.group
		}
		prev, found := 0, false
		for _, x := range groups {
			if x < g {
				prev, found = x, true
			}
		}
		if !found {
			continue
		}
		for _, q := range ps {
			if q.hasGroup && q.group == prev && !slices.Contains(p.dependsOn, q.name) {
				p.dependsOn = append(p.dependsOn, q.name)
			}
		}
	}
}

var exactVersion = regexp.MustCompile(`^v?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?)$`)

var literalBranch = regexp.MustCompile(`^[A-Za-z0-9._/-]+$`)

func lookup(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func strings_(n *yaml.Node) []string {
	if n.Kind == yaml.ScalarNode {
		return []string{n.Value}
	}
	var out []string
	for _, c := range n.Content {
		out = append(out, c.Value)
	}
	return out
}

func scalarText(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode {
		return n.Value
	}
	b, _ := yaml.Marshal(n)
	return strings.Join(strings.Fields(string(b)), " ")
}

func scalar(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: v} }

func add(m *yaml.Node, key string, v *yaml.Node) {
	m.Content = append(m.Content, scalar(key), v)
}

func addList(m *yaml.Node, key string, items []string) {
	if len(items) == 0 {
		return
	}
	l := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	for _, it := range items {
		l.Content = append(l.Content, scalar(it))
	}
	add(m, key, l)
}
