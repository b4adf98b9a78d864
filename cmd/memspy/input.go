package main

import (
	"os"
	"sync/atomic"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// input is an opened trace file (or standard input) that counts the bytes
// read from it, for progress reporting.
type input struct {
	name string
	f    *os.File
	size int64 // -1 when unknown (pipes)
	read atomic.Int64
}

func openInput(path string) (*input, error) {
	if path == "-" {
		return &input{name: "-", f: os.Stdin, size: -1}, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	in := &input{name: path, f: f, size: -1}
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		in.size = fi.Size()
	}
	return in, nil
}

func (in *input) Read(p []byte) (int, error) {
	n, err := in.f.Read(p)
	in.read.Add(int64(n))
	return n, err
}

func (in *input) Close() error {
	if in.f == os.Stdin {
		return nil
	}
	return in.f.Close()
}

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// progress draws a progress bar of the input read on stderr when stderr is
// a terminal; otherwise it does nothing.
type progress struct {
	p    *mpb.Progress
	bar  *mpb.Bar
	in   *input
	last time.Time
}

func newProgress(in *input, what string) *progress {
	if !isTerminal(os.Stderr) {
		return nil
	}
	total := in.size
	if total <= 0 {
		total = 0
	}
	p := mpb.New(mpb.WithOutput(os.Stderr), mpb.WithWidth(40), mpb.WithRefreshRate(200*time.Millisecond))
	bar := p.AddBar(total,
		mpb.PrependDecorators(decor.Name(what+" "), decor.CountersKibiByte("% .1f / % .1f")),
		mpb.AppendDecorators(decor.Percentage(), decor.Name(" "), decor.AverageETA(decor.ET_STYLE_GO)),
	)
	return &progress{p: p, bar: bar, in: in}
}

// update is called after every batch; it touches the bar at most every
// 100 ms so the hot loop does not pay for drawing.
func (pr *progress) update(uint64) {
	if pr == nil {
		return
	}
	if now := time.Now(); now.Sub(pr.last) > 100*time.Millisecond {
		pr.last = now
		pr.bar.SetCurrent(pr.in.read.Load())
	}
}

// done removes the bar.
func (pr *progress) done() {
	if pr == nil {
		return
	}
	pr.bar.Abort(true)
	pr.p.Wait()
}
