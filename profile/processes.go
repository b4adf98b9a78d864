package profile

import (
	"bytes"
	"fmt"
)

// Process is one program run by one process of a traced process tree
// (memspy run follows forks and execs): its own counters, and where it
// stands in the tree. A process that execs runs several programs, one
// Process each, in order.
type Process struct {
	Pid     int    `json:"pid"`
	Parent  int    `json:"parent"`  // the parent's pid
	Command string `json:"command"` // the program and its arguments
	// Exec is the program this one exec'd ("" when it ended otherwise);
	// ExecUntraced says it ran untraced (a 32-bit program).
	Exec         string `json:"exec,omitempty"`
	ExecUntraced bool   `json:"exec_untraced,omitempty"`
	// Exit says how it ended: "exit code N", "killed by signal S",
	// "killed by a signal", "exec", or "running" when memspy stopped
	// waiting for it.
	Exit string `json:"exit"`
	// Profile holds the counters of this program alone, without its
	// where-and-why (Summary): that adds up into the tree's.
	Profile *Profile `json:"profile"`
}

// Total returns the profile of a process tree: the sum of every
// process's counters (the first's Source, Machine and Options), with
// procs as its Processes. procs must not be empty.
func Total(procs []Process) (*Profile, error) {
	first, err := clone(procs[0].Profile)
	if err != nil {
		return nil, err
	}
	t := Tree{total: first}
	for _, pr := range procs[1:] { // (summaries: Add takes no entries of theirs)
		if err := t.Add(pr.Profile, pr.Pid, pr.Command); err != nil {
			return nil, err
		}
	}
	total, err := t.Total()
	if err != nil {
		return nil, err
	}
	total.Processes = procs
	return total, nil
}

// Tree adds up the profiles of the programs of a process tree as they
// end: their counters (Merge), the modules the total lacks, and the
// first error of a program. Unlike Merge it settles the where-and-why of
// the total (bounded sharing lists, focus copies, references and pairs
// trimmed to MaxReferences and MaxPairs) once, in Total, finding the
// entries through an index kept from one program to the next; the
// references are trimmed on the way whenever they come to twice
// MaxReferences, and the pairs likewise, which bounds the total's size
// however many programs the tree runs.
type Tree struct {
	total *Profile
	index whereIndex
}

// Add adds q, the profile of a program that process pid ran (cmd); the
// first becomes the total. q is the tree's from then on: its entries may
// become the total's.
func (t *Tree) Add(q *Profile, pid int, cmd string) error {
	p := t.total
	if p == nil {
		t.total = q
		return nil
	}
	t.index.take = true // (q's profile is let go: Add's caller keeps a Summary)
	if err := p.add(q, &t.index); err != nil {
		return fmt.Errorf("process %d (%s): %w", pid, cmd, err)
	}
	if q.Error != "" && p.Error == "" {
		p.Error = fmt.Sprintf("process %d: %s", pid, q.Error)
	}
	if len(p.References) > 2*MaxReferences {
		for i := range p.References {
			focusOn(&p.References[i], p.Focus) // (the order of the references)
		}
		p.TrimReferences()
		t.index.references = nil
	}
	// (Trimming keeps the pairs of the references listed: beyond those
	// and MaxPairs, at least MaxPairs more go each time.)
	if len(p.Pairs) > 2*MaxPairs+len(p.References) {
		for i := range p.Pairs {
			focusOn(&p.Pairs[i], p.Focus)
		}
		p.TrimPairs()
		t.index.pairs = nil
	}
	return nil
}

// Total returns the total so far, settled; nil before the first Add.
func (t *Tree) Total() (*Profile, error) {
	if p := t.total; p != nil && p.Options.Where {
		if err := p.settleWhere(); err != nil {
			return nil, err
		}
	}
	return t.total, nil
}

// Summary returns a copy of p without its where-and-why (functions,
// objects, pairs, lines, references, call tree, modules, causes of misses,
// the timeline, NUMA's objects, pairs and migration hints): what a process tree keeps of each of its
// programs, whose where-and-why adds up into the tree's, so that its size
// follows the tree's distinct code and data, not its number of processes.
func (p *Profile) Summary() (*Profile, error) {
	s := *p
	s.Functions, s.Objects, s.Pairs, s.Lines, s.References, s.Modules, s.Processes = nil, nil, nil, nil, nil, nil, nil
	s.OmittedReferences, s.OmittedPairs, s.CallTree, s.Timeline = nil, nil, nil, nil
	s.Options.Where, s.Options.MissOnly, s.Focus = false, false, ""
	if p.Numa != nil {
		n := *p.Numa
		n.Objects, n.Pairs, n.Hints = nil, nil, nil
		s.Numa = &n
	}
	q, err := clone(&s)
	if err != nil {
		return nil, err
	}
	for i := range q.Caches {
		q.Caches[i].Causes = nil
	}
	for i := range q.Processors {
		for j := range q.Processors[i].Caches {
			q.Processors[i].Caches[j].Causes = nil
		}
	}
	return q, nil
}

// ForPid returns the profile of process pid alone: the counters of the
// programs it ran, added up. An error names the processes there are.
func (p *Profile) ForPid(pid int) (*Profile, error) {
	var mine []Process
	for _, pr := range p.Processes {
		if pr.Pid == pid {
			mine = append(mine, pr)
		}
	}
	if len(mine) == 0 {
		if len(p.Processes) == 0 {
			return nil, fmt.Errorf("--pid %d: the profile is of one process (it holds no process tree)", pid)
		}
		pids := make([]string, len(p.Processes))
		for i, pr := range p.Processes {
			pids[i] = fmt.Sprint(pr.Pid)
		}
		return nil, fmt.Errorf("--pid %d: no such process in the profile (processes: %s)", pid, joinUnique(pids))
	}
	if len(mine) == 1 {
		return mine[0].Profile, nil
	}
	q, err := Total(mine)
	if err != nil {
		return nil, err
	}
	q.Processes = nil
	return q, nil
}

// joinUnique joins the distinct strings of s, in order, with spaces.
func joinUnique(s []string) string {
	var b bytes.Buffer
	seen := map[string]bool{}
	for _, x := range s {
		if !seen[x] {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(x)
			seen[x] = true
		}
	}
	return b.String()
}

// clone returns a deep copy of p.
func clone(p *Profile) (*Profile, error) {
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		return nil, err
	}
	return Read(&b)
}
