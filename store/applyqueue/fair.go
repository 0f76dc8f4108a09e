package applyqueue

// fairStarts returns the runnable jobs a scheduling pass starts, in the
// order it starts them: those this process does not run yet, at most free
// of them (free < 0: no bound). Without a bound that is all of them, in merge
// order. With one, slots go one at a time to the earliest job of the
// repository with the fewest of this process's applies running (those
// started before in the pass included), so a merge train of one repository,
// whose applies on disjoint streams are all runnable at once, cannot hold
// every slot while another repository's apply waits behind it. Within a
// repository the merge order is kept.
func fairStarts(jobs []*Job, running map[string]string, free int) []*Job {
	var todo []*Job
	for _, j := range jobs {
		if _, ok := running[j.Seq]; !ok {
			todo = append(todo, j)
		}
	}
	if free < 0 {
		return todo
	}
	load := map[string]int{}
	for _, repo := range running {
		load[repo]++
	}
	var out []*Job
	for len(out) < free && len(todo) > 0 {
		best := 0
		for i, j := range todo {
			if load[applyRepo(j)] < load[applyRepo(todo[best])] {
				best = i
			}
		}
		j := todo[best]
		out = append(out, j)
		load[applyRepo(j)]++
		todo = append(todo[:best], todo[best+1:]...)
	}
	return out
}

// applyRepo is the repository whose applies share fairly in the slots.
func applyRepo(j *Job) string { return j.Ref.FullName() }
