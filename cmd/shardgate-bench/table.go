package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
)

// machine is where the figures were measured.
type machine struct {
	cpu                   string
	cores                 int
	loadBefore, loadAfter string
	took                  time.Duration
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

func cores() int { return runtime.NumCPU() }

// loadAverage is the 1, 5 and 15 minute load average.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.3f s", d.Seconds()) }

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

func mb(b int64) string { return fmt.Sprintf("%.1f MB", float64(b)/1e6) }

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func printReport(w io.Writer, o options, m machine, id idle, results []checkResult, notes []string, ov *overhead) {
	fmt.Fprintf(w, "\nwhole-process benchmark (go run ./cmd/shardgate-bench): %d cores, %s, load average %s before, %s after; %s in all\n",
		m.cores, m.cpu, m.loadBefore, m.loadAfter, m.took.Round(time.Second))
	fmt.Fprintf(w, "plans: %d%% of the streams scaled by +2 shards; denied: 1%% of the instances removed, nothing attested; allowed: nothing removed, every scaled stream attested; heavy: denied with the scaled streams' deltas mixed (+2, -2, +6 beyond max_shard_delta, ×3 beyond both limits); ten groups per stream, solo-*: one stream per instance\n", scaledPercent)
	fmt.Fprintf(w, "shardgate version (the executable's idle peak, %d runs at the start and the end): median %s, max %s\n\n", id.runs, mib(id.median), mib(id.max))
	fmt.Fprintln(w, "| N | case | plan | shardgate check | conftest test | simdjson floor | conftest ÷ check (time / memory) | check ÷ floor | findings (both) | target |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range results {
		t := ratio(r.conftest.median.Seconds(), r.shardgate.median.Seconds())
		mem := ratio(float64(r.conftest.peak), float64(r.shardgate.peak))
		fl := ratio(r.shardgate.median.Seconds(), r.floor.median.Seconds())
		fmt.Fprintf(w, "| %s | %s | %s, %s | %s / %s | %s / %s | %s / %s (CPU %s user + %s sys) | %.1f× / %.1f× | %.2f× | %s | %s |\n",
			thousands(r.c.size), r.c.name, mb(r.c.bytes), r.c.source,
			seconds(r.shardgate.median), mib(r.shardgate.peak), seconds(r.conftest.median), mib(r.conftest.peak),
			seconds(r.floor.median), mib(r.floor.peak), seconds(r.floor.user), seconds(r.floor.sys),
			t, mem, fl, countByRule(r.findings), target(r, id, t, fl))
	}
	fmt.Fprintf(w, "\ntimes: median of the runs (%s per tool and case, interleaved check, conftest, floor); memory: peak RSS over the runs (%s)\n", runsText(o), rssSource())
	printCPU(w, results)
	printGrowth(w, results)
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
	if ov != nil {
		printOverhead(w, *ov)
	}
}

func printOverhead(w io.Writer, ov overhead) {
	r := ratio(ov.shardgate.median.Seconds(), ov.raw.median.Seconds())
	rf := ratio(ov.shardgate.fastest.Seconds(), ov.raw.fastest.Seconds())
	verdict := "ok"
	if r > 1.05 {
		verdict = "MISSED"
	}
	fmt.Fprintf(w, "\nshardgate plan vs terraform init && plan -out && show -json, %s instances (denied case, real terraform, %d interleaved runs each):\n",
		thousands(ov.size), ov.raw.runs)
	fmt.Fprintf(w, "  wall: median %s vs %s = %.3f× (target <= 1.05×: %s); fastest %s vs %s = %.3f×\n",
		seconds(ov.shardgate.median), seconds(ov.raw.median), r, verdict, seconds(ov.shardgate.fastest), seconds(ov.raw.fastest), rf)
	fmt.Fprintf(w, "  CPU (user + system, terraform's included; least sensitive to other load): median %s vs %s = %.3f×\n",
		seconds(ov.shardgate.cpu), seconds(ov.raw.cpu), ratio(ov.shardgate.cpu.Seconds(), ov.raw.cpu.Seconds()))
	fmt.Fprintf(w, "  peak RSS %s vs %s (the largest of the process and the terraform it waits for)\n", mib(ov.shardgate.peak), mib(ov.raw.peak))
}

// target checks issue 37's targets: at 10k and more, >= 20× faster than
// conftest, within 2× of the simdjson floor, and a peak RSS within the plan's
// size plus the executable's idle peak (the median of `shardgate version`);
// below, >= 3× faster than conftest.
func target(r checkResult, id idle, t, floor float64) string {
	if r.c.size >= 10000 {
		budget := r.c.bytes + id.median
		verdict := func(ok bool) string {
			if ok {
				return "ok"
			}
			return "MISSED"
		}
		return fmt.Sprintf(">= 20×: %s; <= 2× floor: %s; peak <= plan + idle (%s): %s",
			verdict(t >= 20), verdict(floor <= 2), mib(budget), verdict(r.shardgate.peak <= budget))
	}
	if t >= 3 {
		return ">= 3×: ok"
	}
	return ">= 3×: MISSED"
}

// printGrowth prints the time per MB of plan at each size over that at the
// smallest and at the previous size, per tool and case: 1.0 is linear. From the
// smallest size process start weighs in (it flatters the growth); between the two
// largest sizes it hardly does.
func printGrowth(w io.Writer, results []checkResult) {
	per := func(s stats, c planCase) float64 { return s.median.Seconds() / float64(c.bytes) }
	for _, name := range shapes {
		var rs []checkResult
		for _, r := range results {
			if r.c.name == name {
				rs = append(rs, r)
			}
		}
		slices.SortFunc(rs, func(a, b checkResult) int { return a.c.size - b.c.size })
		for i := 1; i < len(rs); i++ {
			froms := []checkResult{rs[0]}
			if i > 1 {
				froms = append(froms, rs[i-1])
			}
			for _, from := range froms {
				to := rs[i]
				g := ratio(per(to.shardgate, to.c), per(from.shardgate, from.c))
				gc := ratio(per(to.conftest, to.c), per(from.conftest, from.c))
				gf := ratio(per(to.floor, to.c), per(from.floor, from.c))
				limit := 1.5
				if from.c.size >= 10000 {
					limit = 1.2 // process start no longer flatters it
				}
				verdict := "ok"
				if g > limit {
					verdict = "MISSED"
				}
				fmt.Fprintf(w, "growth %s→%s, %s: time per MB ×%.2f for shardgate (target <= %.1f: %s), ×%.2f for conftest, ×%.2f for the floor\n",
					thousands(from.c.size), thousands(to.c.size), name, g, limit, verdict, gc, gf)
			}
		}
	}
}

func runsText(o options) string {
	var parts []string
	for _, s := range o.sizes {
		n := o.runs[s]
		if n == 0 {
			n = 3
		}
		parts = append(parts, fmt.Sprintf("%d at %s", n, thousands(s)))
	}
	return strings.Join(parts, ", ")
}

func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// printCPU prints each case's median CPU time, user and system apart, of check
// and the floor: check parses on every core and the floor on one, so their wall
// times compare the programs on an idle machine and their CPU times the work.
func printCPU(w io.Writer, results []checkResult) {
	for _, r := range results {
		fmt.Fprintf(w, "CPU %s %s: check %s (%s user + %s sys), floor %s (%s + %s): check ÷ floor ×%.2f\n",
			thousands(r.c.size), r.c.name, seconds(r.shardgate.cpu), seconds(r.shardgate.user), seconds(r.shardgate.sys),
			seconds(r.floor.cpu), seconds(r.floor.user), seconds(r.floor.sys), ratio(r.shardgate.cpu.Seconds(), r.floor.cpu.Seconds()))
	}
}
