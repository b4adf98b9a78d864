package sim

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/memspy/memspy/attrib"
	"github.com/memspy/memspy/profile"
)

// namer names procedures and data bins for the profile, with unique
// names, through the Symbolizer when there is one.
type namer struct {
	h     *Hierarchy
	procs map[int32]*profile.Function // every procedure
	bins  map[int32]*profile.Object   // every bin an access point touches
	src   map[uint64]Source
	heap  []string // hex names of heap bins (attrib.HeapNames)
	taken map[string]bool
}

// newNamer names every bin that an access point touches (that of a site
// for which keep, if not nil, is true). Objects whose short names collide
// get the shortest end of their allocation call path that tells them
// apart ("main.86.alloc_matrix.31.m"), else their bin number ("info#12").
func (h *Hierarchy) newNamer(keep func(site int32) bool) *namer {
	n := &namer{h: h, procs: map[int32]*profile.Function{}, bins: map[int32]*profile.Object{}, src: map[uint64]Source{},
		heap: attrib.HeapNames(h.attr.data.Bins()), taken: map[string]bool{}}
	n.nameProcs()
	paths := map[int32][]string{}
	groups := map[string][]int32{}
	seen := newBitset(len(h.attr.data.Bins()))
	for id, r := range h.attr.sites { // (the bins of the access points)
		if seen.has(r.bin) || keep != nil && !keep(int32(id)) {
			continue
		}
		seen.set(r.bin)
		o, path := n.newObject(r.bin)
		n.bins[r.bin], paths[r.bin] = o, path
		groups[o.Name] = append(groups[o.Name], r.bin)
	}
	// A small global takes no name from another object: where names
	// meet, the small ones are named after their module too.
	for name, ids := range groups {
		if len(ids) < 2 {
			continue
		}
		var rest []int32
		for _, id := range ids {
			if b := n.h.attr.data.Bin(id); b.Pool != "" {
				o := n.bins[id]
				o.Name = name + "@" + b.Module
				o.FullName = o.Name
				continue
			}
			rest = append(rest, id)
		}
		groups[name] = rest
	}
	renamed := map[int32]string{}
	samePath := map[int32]bool{} // renamed by number: no end of the call path tells it apart
	for name, ids := range groups {
		if len(ids) > 1 {
			n.tellApart(name, ids, paths, renamed, samePath)
		}
	}
	ids := slices.Sorted(maps.Keys(n.bins))
	for _, id := range ids {
		o := n.bins[id]
		own := o.FullName == o.Name // no call path: the full name is the name, unique too
		if name, ok := renamed[id]; ok {
			o.Name = name
			if samePath[id] {
				// Its call path reads as another's: the full name, unique
				// too, takes the bin's number as well.
				o.FullName += fmt.Sprintf("#%d", id)
			}
		}
		if n.taken["o"+o.Name] { // a path-named object meets another's name
			o.Name = fmt.Sprintf("%s#%d", o.Name, id)
		}
		if own {
			o.FullName = o.Name
		}
		n.taken["o"+o.Name] = true
	}
	return n
}

// tellApart names the bins ids, whose objects all have the short name
// name, each after the shortest end of its call path (paths) that no
// other's of as many calls ends with, or by its number when none does
// (samePath), into renamed. Each length of ends is tried once for the
// bins still unnamed, against the ends of all: ends that one bin alone
// has name it.
func (n *namer) tellApart(name string, ids []int32, paths map[int32][]string, renamed map[int32]string, samePath map[int32]bool) {
	end := func(id int32, k int) string {
		p := paths[id]
		return strings.Join(append(slices.Clone(p[len(p)-k:]), name), ".")
	}
	left := ids // the bins not named yet
	seen := map[string]int{}
	for k := 1; len(left) > 0; k++ {
		clear(seen)
		for _, id := range ids {
			if k <= len(paths[id]) {
				seen[end(id, k)]++
			}
		}
		rest := left[:0:0]
		for _, id := range left {
			switch {
			case k > len(paths[id]):
				renamed[id] = fmt.Sprintf("%s#%d", name, id)
				samePath[id] = true
			case seen[end(id, k)] == 1:
				renamed[id] = end(id, k)
			default:
				rest = append(rest, id)
			}
		}
		left = rest
	}
}

// code returns what the Symbolizer knows of pc, kept for the next time
// when it knows anything (a trace's PCs outside every module it knows
// are many, and cheap to look up again).
func (n *namer) code(pc uint64) Source {
	s, ok := n.src[pc]
	if !ok {
		s = n.source(pc)
		if s != (Source{}) {
			n.src[pc] = s
		}
	}
	return s
}

// source returns what the Symbolizer knows of pc, without keeping it
// (for PCs looked up once: those of code outside every traced call).
func (n *namer) source(pc uint64) Source {
	if sym := n.h.attr.sym; sym != nil {
		return sym.Code(pc)
	}
	return Source{}
}

// function returns the function entry of the instruction at pc running
// in procedure proc, with no counters (not to be changed): proc's, or
// for code outside every traced call the function holding pc when known.
func (n *namer) function(pc uint64, proc int32) *profile.Function {
	if proc == attrib.UnknownProc && pc != 0 {
		if s := n.source(pc); s.Func != "" { // (not kept: the callers keep the function by PC)
			return &profile.Function{Name: s.Func, File: s.File, Module: s.Module, Entry: s.Entry}
		}
	}
	return n.procs[proc]
}

// nameProcs names every procedure and region. A procedure in a known
// module but in no function the Symbolizer knows (a stripped library's
// static function) is named by its module and link-time entry
// ("libc.so.6+0x9caa4", the Symbolizer's Place). Procedures whose names
// collide get their full C++ name when that tells them apart (overloads
// and template instantiations, whose short names leave parameters and
// template arguments out: "max(int, int)", "max(double, double)"), else
// their module's name (static functions of different modules or files:
// "init@libc.so.6"), else their entry ("init@0x1091e5"); a region keeps
// the name the program gave it (regions are one per name). The procedure
// of a PLT entry is the function its calls reached (attrib.Proc.Reaches),
// so that a call through the PLT counts as a call of that function.
func (n *namer) nameProcs() {
	groups := map[string][]int32{}
	sigs := map[int32]string{}
	procs := n.h.attr.code.Procs()
	for id, p := range procs {
		if p.Reaches != attrib.UnknownProc {
			continue
		}
		f := &profile.Function{Name: p.Name, Entry: p.Entry, Region: p.Region}
		if p.Entry != 0 {
			switch s := n.code(p.Entry); {
			case s.Func != "":
				f.Name, f.File, f.Line, f.Module = s.Func, s.File, s.Line, s.Module
				sigs[int32(id)] = s.Signature
			case s.Module != "": // (only with a Symbolizer)
				if name, ok := n.place(p.Entry); ok {
					f.Name, f.Module = name, s.Module
				}
			}
		}
		n.procs[int32(id)] = f
		groups[f.Name] = append(groups[f.Name], int32(id))
	}
	for _, ids := range groups {
		if len(ids) == 1 {
			continue
		}
		mods, nsig := map[string]int{}, map[string]int{}
		for _, id := range ids {
			mods[n.procs[id].Module]++
			nsig[sigs[id]]++
		}
		for _, id := range ids {
			f := n.procs[id]
			if f.Region {
				continue // the program's own name for it
			}
			if sig := sigs[id]; sig != "" && nsig[sig] == 1 {
				f.Name = sig
			} else if m := f.Module; m != "" && mods[m] == 1 {
				f.Name += "@" + filepath.Base(m)
			} else if place, ok := n.place(f.Entry); ok {
				f.Name += "@" + place
			} else {
				f.Name = fmt.Sprintf("%s@%#x", f.Name, f.Entry)
			}
		}
	}
	for id, p := range procs {
		if p.Reaches != attrib.UnknownProc {
			n.procs[int32(id)] = n.procs[p.Reaches]
		}
	}
}

// place names run-time address pc by its module and link-time address
// ("ld-linux-x86-64.so.2+0x1bc0"), when a Symbolizer knows the module.
func (n *namer) place(pc uint64) (string, bool) {
	if n.h.attr.sym == nil {
		return "", false
	}
	return n.h.attr.sym.Place(pc)
}

// binName returns the name of data bin id in the profile.
func (n *namer) binName(id int32) string {
	if o, ok := n.bins[id]; ok {
		return o.Name
	}
	o, _ := n.newObject(id)
	return o.Name
}

// newObject makes the object entry of data bin id, with its allocation
// call path as "func.line" elements for a heap bin the Symbolizer knows.
func (n *namer) newObject(id int32) (o *profile.Object, path []string) {
	b := n.h.attr.data.Bin(id)
	o = &profile.Object{Name: b.Name, Kind: b.Kind.String(), Size: b.Bytes, Pool: b.Pool}
	switch b.Kind {
	case attrib.Stack:
		switch {
		case len(b.Site) > 0: // stacks mapped as such (Go's goroutine stacks): named themselves
		case b.Name != "":
			o.Name = n.procs[b.Proc].Name + "." + b.Name
		default:
			o.Name = "locals@" + n.procs[b.Proc].Name
		}
	case attrib.Heap:
		o.Name, o.FullName = n.heap[id], n.heap[id]
		o.Blocks = b.Blocks
		if sym := n.h.attr.sym; sym != nil {
			if hs, ok := sym.HeapName(b.Site, b.Type); ok {
				o.Name, o.FullName, path = hs.Name, strings.Join(append(slices.Clone(hs.Path), hs.Name), "."), hs.Path
				o.AllocSite = hs.At
			}
		}
		for _, pc := range b.Site {
			s := n.code(pc - 1) // a return address: the call is just before it
			frame := fmt.Sprintf("%#x", pc)
			if s.Func != "" {
				frame = s.Func
			}
			if s.File != "" {
				frame += fmt.Sprintf(" %s:%d", filepath.Base(s.File), s.Line)
			}
			o.CallPath = append(o.CallPath, frame)
		}
	}
	if o.FullName == "" {
		o.FullName = o.Name
	}
	return o, path
}
