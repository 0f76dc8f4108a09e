package prreport

import (
	"fmt"
	"sort"
	"strings"

	"github.com/shardgate/shardgate/policy/report"
	"github.com/shardgate/shardgate/store/records"
)

// settings is a project's way of running terraform, folded away under its
// section: the var files, init and plan arguments and the names of its
// environment (secret_env and backend_config_env name only the server's
// variables, never a value). "" when the project sets none of them.
func settings(p *records.Plan) string {
	var lines []string
	line := func(label string, items []string) {
		if len(items) == 0 {
			return
		}
		quoted := make([]string, len(items))
		for i, it := range items {
			quoted[i] = report.Code(it)
		}
		lines = append(lines, fmt.Sprintf("- %s: %s", label, strings.Join(quoted, " ")))
	}
	names := func(m map[string]string, server bool) []string {
		var out []string
		for k, v := range m {
			if server {
				out = append(out, k+" ← $"+v)
			} else {
				out = append(out, k+"="+v)
			}
		}
		sort.Strings(out)
		return out
	}
	if p.Terraform != "" {
		line("with", []string{p.Terraform})
	}
	line("var files", p.VarFiles)
	line("init arguments", p.Keys.InitArgs)
	line("plan arguments", p.Keys.PlanArgs)
	line("backend settings from the server's environment", names(p.Keys.BackendConfigEnv, true))
	line("env", names(p.Keys.Env, false))
	line("secret env from the server's environment", names(p.Keys.SecretEnv, true))
	if len(lines) == 0 {
		return ""
	}
	return fmt.Sprintf("\n<details><summary>How %s was planned</summary>\n\n%s\n\n</details>\n", report.Code(p.Project), strings.Join(lines, "\n"))
}
