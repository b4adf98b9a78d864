package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/memspy/memspy/profile"
	"github.com/memspy/memspy/sim"
	"github.com/memspy/memspy/tracer/valgrind"
)

// childGrace is how long memspy run waits, after the program it started
// ended, for the streams of processes still running (a child left in the
// background): the rest is reported as running.
const childGrace = 2 * time.Second

// image is one program run by one process of a traced tree (a process
// that execs runs several), and its simulation: an engine of its own, as
// its own address space.
type image struct {
	// r is its stream while it runs (nil once its simulation ended: how
	// it ended is kept in end, and r goes with its buffers and the code
	// it described).
	r   *valgrind.StreamReader
	end ending
	// h is its engine while it runs; p its summary once it ended (the
	// engine is then let go, and its where-and-why added to the tree's).
	h      *sim.Hierarchy
	p      *profile.Profile
	root   bool  // a program of the process memspy started
	err    error // what ended its stream or simulation early
	closed bool  // its stream was closed: the process was still running
}

// ending is what a process tree's report says of an image's stream: who
// ran it and how it ended.
type ending struct {
	pid, parent  int
	cmd          string
	exec         string // the program it exec'd
	execUntraced bool
	status       int // its exit status, when exited
	exited       bool
	killed       bool
}

// endingOf returns what r says of its process.
func endingOf(r *valgrind.StreamReader) ending {
	e := ending{pid: r.Pid()}
	e.cmd, e.parent = r.Command()
	e.exec, e.execUntraced = r.Exec()
	e.status, e.exited, e.killed = r.Exit()
	return e
}

// ending returns how im's stream ended (so far, while it runs).
func (im *image) ending() ending {
	if im.r != nil {
		return endingOf(im.r)
	}
	return im.end
}

// tree follows the process tree of a traced program: the programs that its
// process execs and those of every forked child, each simulated by a new
// engine, concurrently.
type tree struct {
	engine func() (*sim.Hierarchy, error)
	ctx    context.Context
	mu     sync.Mutex
	images []*image // in the order they started
	wg     sync.WaitGroup
	// building holds a place for each ended program whose profile is
	// being built (build): at most two at a time, on two CPUs, as
	// building takes far more memory for a moment than the profile keeps
	// (many programs of a tree may end at once).
	building chan struct{}
	// total adds up the profiles of the programs that ended; err says why
	// one could not be added.
	total profile.Tree
	err   error
}

// add records an image that starts.
func (t *tree) add(im *image) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.images = append(t.images, im)
}

// chain simulates the program of stream r, with a new engine, and then
// the programs its process execs, one after the other; root says the
// process is the one memspy started.
func (t *tree) chain(r *valgrind.StreamReader, root bool) {
	for r != nil {
		h, err := t.engine()
		im := &image{r: r, h: h, root: root}
		t.add(im)
		if err != nil {
			t.finish(im, err)
			r.Drain() // the process must not wait for a reader
			r.Close()
			return
		}
		r.SetIFetchRuns(h.IFetchRuns())
		err = sim.Run(t.ctx, h, r, nil)
		h.Finish()
		t.finish(im, err)
		t.keep(im, t.build(h))
		next := r.Next()
		if next == nil {
			r.Close()
		}
		r = next
	}
}

// build returns h's profile, built when a place is free (tree.building).
func (t *tree) build(h *sim.Hierarchy) *profile.Profile {
	t.building <- struct{}{}
	defer func() { <-t.building }()
	return h.Profile()
}

// maxBuilding is how many programs' profiles a tree builds at a time.
const maxBuilding = 2

// finish records that im's simulation ended, with err.
func (t *tree) finish(im *image, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	im.err = err
	im.end, im.r = endingOf(im.r), nil
}

// keep ends im, whose simulation ended, with its profile p: p's counters
// add up into the tree's total, and im keeps p's summary.
func (t *tree) keep(im *image, p *profile.Profile) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := im.ending()
	p.Source = profile.Source{Name: e.cmd, Format: "valgrind"}
	switch {
	case im.closed:
		p.Complete, p.Error = false, "still running when memspy stopped waiting for it"
	case im.err != nil:
		p.Complete, p.Error = false, im.err.Error()
	}
	sum, err := p.Summary()
	if err == nil {
		err = t.total.Add(p, e.pid, e.cmd)
	}
	im.h, im.p = nil, sum
	if err != nil && t.err == nil {
		t.err = err
	}
}

// follow simulates the chain of every forked child as its stream comes,
// until no traced process is left (the channel is closed).
func (t *tree) follow(children <-chan *valgrind.StreamReader) {
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		for r := range children {
			t.wg.Add(1)
			go func() {
				defer t.wg.Done()
				t.chain(r, false)
			}()
		}
	}()
}

// wait waits for the children's simulations, at most grace: then no new
// child is followed (stop), and the streams of processes still running are
// closed (those processes run on untraced) and their images end as they
// are; a child announced meanwhile is closed as it comes.
func (t *tree) wait(grace time.Duration, stop func()) {
	done := make(chan struct{})
	go func() {
		t.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return
	case <-time.After(grace):
	}
	stop()
	for {
		t.mu.Lock()
		for _, im := range t.images {
			if im.r != nil && !im.closed {
				im.closed = true
				im.r.Close()
			}
		}
		t.mu.Unlock()
		select {
		case <-done:
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// profile returns the profile of the tree, once every image was kept:
// the total of its programs' counters, with each program's summary, place
// in the tree and how it ended (those of the process memspy started
// first); the root process's last program ended as rootStatus says.
func (t *tree) profile(rootStatus string) (*profile.Profile, error) {
	if t.err != nil {
		return nil, t.err
	}
	var all []*image
	for _, root := range []bool{true, false} {
		for _, im := range t.images {
			if im.root == root {
				all = append(all, im)
			}
		}
	}
	procs := make([]profile.Process, 0, len(all))
	for i, im := range all {
		e := im.ending()
		pr := profile.Process{Pid: e.pid, Parent: e.parent, Command: e.cmd, Exec: e.exec, ExecUntraced: e.execUntraced}
		switch {
		case pr.Exec != "":
			pr.Exit = "exec"
		case im.root && (i+1 == len(all) || !all[i+1].root):
			pr.Exit = rootStatus
		case e.exited:
			pr.Exit = fmt.Sprintf("exit code %d", e.status)
		case e.killed:
			pr.Exit = "killed by a signal"
		case im.closed:
			pr.Exit = "running (not waited for)"
		default:
			pr.Exit = "unknown"
		}
		if im.p == nil { // its engine could not be made
			return nil, fmt.Errorf("process %d (%s): %w", pr.Pid, e.cmd, im.err)
		}
		pr.Profile = im.p
		procs = append(procs, pr)
	}
	total, err := t.total.Total()
	if err != nil {
		return nil, err
	}
	total.Processes = procs
	return total, nil
}
