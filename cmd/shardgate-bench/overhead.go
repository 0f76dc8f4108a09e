package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
)

// overhead is `shardgate plan` against the raw terraform commands it runs.
type overhead struct {
	size      int
	raw       stats // terraform init && plan -out && show -json, three processes
	shardgate stats // shardgate plan, one process (terraform's children not in its RSS)
}

// measurePlanOverhead times `shardgate plan --dir ROOT` against `terraform init &&
// terraform plan -out F && terraform show -json F` on the applied real root with
// the denied case's variables, interleaved. Both use the root's .terraform, so
// both inits find it initialised, as a CI job with a cached .terraform does.
func measurePlanOverhead(ctx context.Context, o options, size int, log func(string, ...any)) (overhead, error) {
	r := newRealRoot(o, size)
	if _, err := r.ensureApplied(ctx, o.repo); err != nil {
		return overhead{}, err
	}
	if err := r.tfvars(instances(size, caseDenied), true); err != nil {
		return overhead{}, err
	}
	planFile := filepath.Join(filepath.Dir(r.dir), "raw.tfplan")
	tf := func(args ...string) proc { return proc{name: r.tf, args: args, dir: r.dir, env: r.env} }
	raw := func(ctx context.Context, out io.Writer) (sample, error) {
		return runSeq(ctx, []proc{
			tf("init", "-input=false", "-no-color"),
			tf("plan", "-input=false", "-no-color", "-out="+planFile),
			tf("show", "-json", "-no-color", planFile),
		}, out)
	}
	sg := func(ctx context.Context, out io.Writer) (sample, error) {
		s, err := runOnce(ctx, proc{name: o.shardgate, dir: r.dir, env: r.env,
			args: []string{"plan", "--dir", r.dir, "--terraform", r.tf, "--format", "json"}}, out)
		if err == nil && s.exit != 1 {
			err = fmt.Errorf("shardgate plan of the denied case exited %d, want 1 (denied)", s.exit)
		}
		return s, err
	}
	log("plan overhead: %d instances, %d runs each", size, o.planRuns)
	dir := filepath.Dir(r.dir)
	rs, ss, err := alternate(ctx, o.planRuns, raw, sg, filepath.Join(dir, "raw.out"), filepath.Join(dir, "shardgate.out"))
	if err != nil {
		return overhead{}, err
	}
	return overhead{size: size, raw: summarise(rs), shardgate: summarise(ss)}, nil
}
