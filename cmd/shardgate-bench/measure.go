package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

// sample is one run of one process.
type sample struct {
	wall   time.Duration
	cpu    time.Duration // user + system, of the process and the children it waited for
	user   time.Duration // the two parts of cpu
	sys    time.Duration
	maxRSS int64 // bytes
	exit   int
}

// proc is a command line to time.
type proc struct {
	name string
	args []string
	dir  string
	env  []string // nil: this process's environment
}

// runOnce runs p to completion with stdout to out and returns its wall time and
// peak RSS. The RSS is what /usr/bin/time -f %M reports when it is there. Go
// starts a child with vfork, so the child's own ru_maxrss (the fallback) may
// count this process's memory until exec: correct only while this process is
// smaller than what it measures.
func runOnce(ctx context.Context, p proc, out io.Writer) (sample, error) {
	name, args := p.name, p.args
	var rssFile string
	if gnuTime != "" {
		f, err := os.CreateTemp("", "bench-rss-")
		if err != nil {
			return sample{}, fmt.Errorf("make rss file: %w", err)
		}
		rssFile = f.Name()
		f.Close()
		defer os.Remove(rssFile)
		name, args = gnuTime, append([]string{"-f", "%M %U %S", "-o", rssFile, p.name}, p.args...)
	}
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = p.dir
	cmd.Env = p.env
	cmd.Stdout = out
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	s := sample{wall: time.Since(start)}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		s.exit = exitErr.ExitCode()
	default:
		return s, fmt.Errorf("run %s: %w", p.name, err)
	}
	if s.exit > 1 {
		return s, fmt.Errorf("run %s %s: exit %d: %s", p.name, strings.Join(p.args, " "), s.exit, lastLines(stderr.String(), 5))
	}
	if rssFile == "" {
		s.maxRSS = maxRSS(cmd.ProcessState)
		s.user, s.sys = cmd.ProcessState.UserTime(), cmd.ProcessState.SystemTime()
		s.cpu = s.user + s.sys
		return s, nil
	}
	if s.maxRSS, s.user, s.sys, err = readTime(rssFile); err != nil {
		return s, err
	}
	s.cpu = s.user + s.sys
	return s, nil
}

// gnuTime is /usr/bin/time when it is GNU time (it takes -f and -o).
var gnuTime = func() string {
	const bin = "/usr/bin/time"
	f, err := os.CreateTemp("", "bench-rss-")
	if err != nil {
		return ""
	}
	f.Close()
	defer os.Remove(f.Name())
	if exec.Command(bin, "-f", "%M %U %S", "-o", f.Name(), "true").Run() != nil {
		return ""
	}
	if _, _, _, err := readTime(f.Name()); err != nil {
		return ""
	}
	return bin
}()

// readTime reads what GNU time wrote with -f "%M %U %S": peak RSS in KiB, user
// and system seconds. It is the last line: time writes a "Command exited with
// non-zero status" line before it.
func readTime(path string) (rss int64, user, sys time.Duration, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("read time's report: %w", err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	f := strings.Fields(lines[len(lines)-1])
	bad := fmt.Errorf("read time's report: %q is not \"KiB user system\"", b)
	if len(f) != 3 {
		return 0, 0, 0, bad
	}
	kib, err1 := strconv.ParseInt(f[0], 10, 64)
	u, err2 := strconv.ParseFloat(f[1], 64)
	k, err3 := strconv.ParseFloat(f[2], 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return 0, 0, 0, bad
	}
	return kib * 1024, time.Duration(u * float64(time.Second)), time.Duration(k * float64(time.Second)), nil
}

// rssSource says where the memory figures come from, for the report.
func rssSource() string {
	if gnuTime != "" {
		return "/usr/bin/time -f %M"
	}
	return "getrusage of the child"
}

// runSeq runs processes one after another as one step: wall times add up, peak
// RSS is the largest of them. The last one's stdout goes to out.
func runSeq(ctx context.Context, ps []proc, out io.Writer) (sample, error) {
	var total sample
	for i, p := range ps {
		w := io.Discard
		if i == len(ps)-1 {
			w = out
		}
		s, err := runOnce(ctx, p, w)
		if err != nil {
			return total, err
		}
		total.wall += s.wall
		total.cpu += s.cpu
		total.user += s.user
		total.sys += s.sys
		total.maxRSS = max(total.maxRSS, s.maxRSS)
		total.exit = s.exit
	}
	return total, nil
}

// stats summarise the runs of one command: the median wall time, and the peak RSS
// over all runs.
type stats struct {
	runs    int
	median  time.Duration
	fastest time.Duration // least disturbed by other load on a shared machine
	cpu     time.Duration // median user + system time
	user    time.Duration // median user time
	sys     time.Duration // median system time
	peak    int64
}

func summarise(samples []sample) stats {
	if len(samples) == 0 {
		return stats{}
	}
	walls := make([]time.Duration, len(samples))
	cpus := make([]time.Duration, len(samples))
	users := make([]time.Duration, len(samples))
	syss := make([]time.Duration, len(samples))
	var peak int64
	for i, s := range samples {
		walls[i], cpus[i], users[i], syss[i] = s.wall, s.cpu, s.user, s.sys
		peak = max(peak, s.maxRSS)
	}
	return stats{runs: len(samples), median: median(walls), fastest: slices.Min(walls), cpu: median(cpus),
		user: median(users), sys: median(syss), peak: peak}
}

// median of an odd count is the middle value; of an even count, the mean of the
// two middle values.
func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// alternate runs a and b runs times each, interleaved (a b a b ...) so that a change
// in the machine's load falls on both alike. Each run's stdout is written to a
// fresh file, outA and outB, so the last output can be checked afterwards.
func alternate(ctx context.Context, runs int, a, b func(context.Context, io.Writer) (sample, error), outA, outB string) (sa, sb []sample, err error) {
	got, err := alternateAll(ctx, runs, []runner{{a, outA}, {b, outB}})
	if err != nil {
		return nil, nil, err
	}
	return got[0], got[1], nil
}

// runner is one command of an interleaved measurement and the file its stdout
// goes to.
type runner struct {
	fn  func(context.Context, io.Writer) (sample, error)
	out string
}

// alternateAll runs every runner runs times, in turn (a b c a b c ...).
func alternateAll(ctx context.Context, runs int, rs []runner) ([][]sample, error) {
	got := make([][]sample, len(rs))
	for range runs {
		for i, r := range rs {
			f, err := os.Create(r.out)
			if err != nil {
				return nil, fmt.Errorf("create output file: %w", err)
			}
			s, err := r.fn(ctx, f)
			if cerr := f.Close(); err == nil && cerr != nil {
				err = fmt.Errorf("write output file: %w", cerr)
			}
			if err != nil {
				return nil, err
			}
			got[i] = append(got[i], s)
		}
	}
	return got, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
