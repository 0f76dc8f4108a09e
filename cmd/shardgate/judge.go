package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"time"

	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/policy/repoconfig"
	"github.com/shardgate/shardgate/policy/report"
)

// DefaultAttestationTTL is how long a local --attest stays fresh.
const DefaultAttestationTTL = 2 * time.Hour

// judgeFlags are the flags `check` and `plan` share: what the policy sees besides the plan.
type judgeFlags struct {
	config  string
	labels  stringList
	attests stringList
	format  string
}

func (j *judgeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&j.config, "config", "", "repository configuration (.shardgate.yaml): policy thresholds, duplicate-tolerant streams, extra policy dirs")
	fs.Var(&j.labels, "label", "a pull-request label to treat as present, e.g. policy-exception/shard_delta (repeatable; trusted locally)")
	fs.Var(&j.attests, "attest", "record a producer-quiesce attestation for this stream prefix, made now by you (repeatable)")
	fs.StringVar(&j.format, "format", "text", "output format: text, json or markdown (the PR comment body)")
}

// judge is everything needed to evaluate change sets for one command run.
type judge struct {
	flags  judgeFlags
	cfg    *repoconfig.Config
	engine *policy.Engine
}

// newJudge validates the shared flags and loads the configuration and policies.
// Any problem is bad usage or input: the caller exits 2 with the returned reason.
func newJudge(j judgeFlags) (*judge, error) {
	switch j.format {
	case "text", "json", "markdown":
	default:
		return nil, fmt.Errorf("--format %q is not one of text, json, markdown", j.format)
	}
	for _, a := range j.attests {
		if strings.TrimSpace(a) == "" || strings.ContainsAny(a, "{} \t") {
			return nil, fmt.Errorf("--attest %q is not a stream prefix", a)
		}
	}
	for _, l := range j.labels {
		if strings.TrimSpace(l) == "" {
			return nil, errors.New("--label needs a label name")
		}
	}
	cfg := repoconfig.Default()
	var dirs []string
	if j.config != "" {
		data, err := os.ReadFile(j.config)
		if err != nil {
			return nil, fmt.Errorf("read config: %w", err)
		}
		cfg, err = repoconfig.Parse(j.config, data)
		if err != nil {
			return nil, err
		}
		// Extra policy dirs are relative to the repository root, which holds the config file.
		root := filepath.Dir(j.config)
		for _, d := range cfg.PolicyDirs {
			dirs = append(dirs, filepath.Join(root, filepath.FromSlash(d)))
		}
	}
	engine, err := policy.New(policy.WithPolicyDirs(dirs...))
	if err != nil {
		return nil, fmt.Errorf("load policies: %w", err)
	}
	return &judge{flags: j, cfg: cfg, engine: engine}, nil
}

// unknownExceptionLabels names --label values that look like exception labels of
// no known rule: almost always a typo the user wants to hear about.
func (jg *judge) unknownExceptionLabels() []string {
	var out []string
	for _, l := range jg.flags.labels {
		if id, ok := strings.CutPrefix(l, policy.ExceptionLabelPrefix); ok {
			if _, known := jg.engine.Rule(id); !known {
				out = append(out, l)
			}
		}
	}
	return out
}

func localUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "local"
}

// evaluate judges one change set and renders it. It returns the exit code.
func (jg *judge) evaluate(ctx context.Context, cs *planparse.ChangeSet, lockWaits []report.LockWait, stdout, stderr io.Writer, cmd string) int {
	now := time.Now().UTC()
	me := localUser()
	req := policy.Request{ChangeSet: cs, Config: jg.cfg.Policy, Now: now}
	for _, l := range jg.flags.labels {
		req.Labels = append(req.Labels, policy.Label{Name: l, Actor: me, Counted: true})
	}
	for _, a := range jg.flags.attests {
		req.Attestations = append(req.Attestations, policy.Attestation{StreamPrefix: a, Actor: me, CreatedAt: now, ExpiresAt: now.Add(DefaultAttestationTTL)})
	}
	for _, l := range jg.unknownExceptionLabels() {
		fmt.Fprintf(stderr, "shardgate %s: note: label %q waives no known rule\n", cmd, l)
	}
	dec, err := jg.engine.Evaluate(ctx, req)
	if err != nil {
		// Fail closed: the decision already denies; say why on stderr as well.
		fmt.Fprintf(stderr, "shardgate %s: policy evaluation failed, denying: %v\n", cmd, err)
	}
	rep := &report.Report{ChangeSet: cs, Decision: dec, Rules: jg.engine.Rules(), LockWaits: lockWaits, Local: true,
		Approvers: "an approver who is not the PR author"}
	switch jg.flags.format {
	case "json":
		// Encoded as it is written: a large plan's report is never held whole.
		// Its errors say "render json" or "write output".
		err = rep.WriteJSON(stdout)
	case "markdown":
		err = writeOutput(stdout, rep.Markdown(report.MaxCommentChars))
	default:
		err = writeOutput(stdout, rep.Text())
	}
	if err != nil {
		fmt.Fprintf(stderr, "shardgate %s: %v\n", cmd, err)
		return exitDenied
	}
	if !dec.Allowed {
		return exitDenied
	}
	return exitOK
}

// writeOutput writes a rendered report to the command's output.
func writeOutput(w io.Writer, s string) error {
	if _, err := io.WriteString(w, s); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}
