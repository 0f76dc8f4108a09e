package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/shardgate/shardgate/planparse/planparsetest"
)

// realRoot is a copy of examples/streams and its module with N instances in its
// state as an apply leaves them (apply.sh replaced by `exit 0`: no coordinator
// is needed, and terraform_data makes no network call), kept in the cache until
// its inputs change.
type realRoot struct {
	dir   string // the root module, examples/streams's copy
	size  int
	shape string // "" or soloPrefix: the instances' shape (solo.go)
	tf    string
	env   []string
}

func newRealRoot(o options, size int) realRoot {
	return newShapedRoot(o, size, "")
}

// newShapedRoot is a real root of the shape's instances: "" for ten groups per
// stream, soloPrefix for one stream per instance (with soloOverride).
func newShapedRoot(o options, size int, shape string) realRoot {
	return realRoot{
		dir:   filepath.Join(o.cache, fmt.Sprintf("terraform-%s%d", shape, size), "streams"),
		size:  size,
		shape: shape,
		tf:    o.terraform,
		// No CLI configuration (no provider mirrors, no credentials): a bare
		// terraform, as in the project's other real-terraform tests.
		env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
			"TF_IN_AUTOMATION=1", "TF_INPUT=0", "CHECKPOINT_DISABLE=1", "TF_CLI_CONFIG_FILE="},
	}
}

// tfvars writes terraform.tfvars for the instances before (the applied state) or
// after (the plan) a case's change.
func (r realRoot) tfvars(ins []planparsetest.Instance, after bool) error {
	var b strings.Builder
	b.WriteString("groups = {\n")
	for _, in := range ins {
		shards := in.ShardsBefore
		if after {
			if in.Removed {
				continue
			}
			shards = in.ShardsAfter
		}
		fmt.Fprintf(&b, "  %q = { stream_prefix = %q, consumer_group = %q, shard_count = %d }\n", in.Key, in.StreamPrefix, in.ConsumerGroup, shards)
	}
	b.WriteString("}\n")
	if err := os.WriteFile(filepath.Join(r.dir, "terraform.tfvars"), []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("write tfvars: %w", err)
	}
	return nil
}

func (r realRoot) run(ctx context.Context, stdout io.Writer, args ...string) error {
	cmd := exec.CommandContext(ctx, r.tf, args...)
	cmd.Dir, cmd.Env, cmd.Stdout = r.dir, r.env, stdout
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("terraform %s: %w: %s", args[0], err, lastLines(stderr.String(), 5))
	}
	return nil
}

// ensureApplied makes the root and gives it the state an apply of the "before"
// instances leaves (tfstate.go), unless the cache already holds exactly that.
// The key covers the example sources, the instances and the terraform binary.
func (r realRoot) ensureApplied(ctx context.Context, repo string) (string, error) {
	ins := instances(r.size, r.shape+caseDenied)
	key, err := r.key(repo, ins)
	if err != nil {
		return "", err
	}
	stamp := filepath.Join(filepath.Dir(r.dir), "applied")
	if b, err := os.ReadFile(stamp); err == nil && string(b) == key {
		return key, nil
	}
	if err := r.prepare(ctx, repo, ins); err != nil {
		return "", err
	}
	if err := r.writeState(ins); err != nil {
		return "", err
	}
	if err := os.WriteFile(stamp, []byte(key), 0o644); err != nil {
		return "", fmt.Errorf("write stamp: %w", err)
	}
	return key, nil
}

// prepare makes the root afresh (the example, its module with apply.sh a no-op,
// the shape's additions, the instances' tfvars) and initialises it.
func (r realRoot) prepare(ctx context.Context, repo string, ins []planparsetest.Instance) error {
	top := filepath.Dir(r.dir)
	if err := os.RemoveAll(top); err != nil {
		return fmt.Errorf("clear terraform root: %w", err)
	}
	if err := copyTF(filepath.Join(repo, "examples", "streams"), r.dir); err != nil {
		return err
	}
	module := filepath.Join(top, "modules", "stream-group")
	if err := copyTF(filepath.Join(repo, "examples", "modules", "stream-group"), module); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(module, "apply.sh"), []byte("exit 0\n"), 0o755); err != nil {
		return fmt.Errorf("write apply.sh: %w", err)
	}
	if r.shape == soloPrefix {
		if err := os.WriteFile(filepath.Join(r.dir, "coordinator.tf"), []byte(soloResource), 0o644); err != nil {
			return fmt.Errorf("write the coordinator resource: %w", err)
		}
		if err := os.WriteFile(filepath.Join(r.dir, "main_override.tf"), []byte(soloOverride), 0o644); err != nil {
			return fmt.Errorf("write the override: %w", err)
		}
	}
	if err := r.tfvars(ins, false); err != nil {
		return err
	}
	return r.run(ctx, io.Discard, "init", "-input=false", "-no-color")
}

func (r realRoot) key(repo string, ins []planparsetest.Instance) (string, error) {
	h := sha256.New()
	for _, dir := range []string{filepath.Join(repo, "examples", "streams"), filepath.Join(repo, "examples", "modules", "stream-group")} {
		files, err := filepath.Glob(filepath.Join(dir, "*.tf"))
		if err != nil {
			return "", fmt.Errorf("find example sources: %w", err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return "", fmt.Errorf("read example source: %w", err)
			}
			h.Write(b)
		}
	}
	fmt.Fprintf(h, "%v", ins)
	if r.shape == soloPrefix {
		h.Write([]byte(soloResource + soloOverride))
	}
	st, err := os.Stat(r.tf)
	if err != nil {
		return "", fmt.Errorf("stat terraform: %w", err)
	}
	fmt.Fprintf(h, "%s %d %s", r.tf, st.Size(), st.ModTime())
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// plan writes terraform.tfvars for a case, plans and shows the plan as JSON.
func (r realRoot) plan(ctx context.Context, name string) ([]byte, error) {
	if err := r.tfvars(instances(r.size, name), true); err != nil {
		return nil, err
	}
	planFile := filepath.Join(filepath.Dir(r.dir), name+".tfplan")
	// No state lock: the root is the bench's own, and a run stopped mid-plan
	// (10,000 instances take terraform minutes) would leave a lock that fails
	// every later run.
	if err := r.run(ctx, io.Discard, "plan", "-input=false", "-no-color", "-lock=false", "-out="+planFile); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := r.run(ctx, &out, "show", "-json", planFile); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// realPlan is a case's plan made by terraform, cached beside the applied root. It
// also says whether planparsetest's synthesizer writes the same plan.
func realPlan(ctx context.Context, o options, size int, name string) (planCase, string, error) {
	r := newRealRoot(o, size)
	if _, solo := soloCase(name); solo {
		r = newShapedRoot(o, size, soloPrefix)
	}
	key, err := r.ensureApplied(ctx, o.repo)
	if err != nil {
		return planCase{}, "", err
	}
	path := filepath.Join(o.cache, fmt.Sprintf("terraform-%d-%s-%s.json", size, name, key))
	real, err := os.ReadFile(path)
	if err != nil {
		if real, err = r.plan(ctx, name); err != nil {
			return planCase{}, "", err
		}
		if err := removeStale(o.cache, fmt.Sprintf("terraform-%d-%s-*.json", size, name)); err != nil {
			return planCase{}, "", err
		}
		if err := writeAtomic(path, real); err != nil {
			return planCase{}, "", err
		}
	}
	note := fmt.Sprintf("synthesizer vs terraform at %d instances, %s: ", size, name)
	if diff := compareShape(real, planparsetest.Render(instances(size, name))); diff != "" {
		note += "DIFFERENT: " + diff
	} else {
		note += "identical after normalising random ids, the timestamp and the groups default"
	}
	c, err := newCase(o.cache, size, name, path, "terraform "+planparsetest.TerraformVersion)
	return c, note, err
}

func copyTF(from, to string) error {
	if err := os.MkdirAll(to, 0o755); err != nil {
		return fmt.Errorf("make root: %w", err)
	}
	files, err := filepath.Glob(filepath.Join(from, "*.tf"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("find %s/*.tf: %v", from, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("copy example: %w", err)
		}
		if err := os.WriteFile(filepath.Join(to, filepath.Base(f)), b, 0o644); err != nil {
			return fmt.Errorf("copy example: %w", err)
		}
	}
	return nil
}
