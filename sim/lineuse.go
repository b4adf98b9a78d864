package sim

import "math/bits"

// useBits is how many bit planes a byteUse histogram counts in before it
// adds them to its counts: up to 2^useBits-1 lines.
const useBits = 8

// byteUse counts, per data bin at one level, how many of the lines its
// misses filled (its access points': the bin of the fill, as UsedBytes
// counts, not the line's bin now, which a free changes) had each byte
// offset used while they were resident: a
// histogram over the offsets in the line, counted as a line leaves (or at
// the end of the run), never on a hit. A line's byte mask is added to its
// bin's bit-sliced counter (useBits planes of mask words: a few word
// operations per line, whatever the line size), whose planes are added to
// the counts every 2^useBits-1 lines.
type byteUse struct {
	words  int     // mask words per line
	index  []int32 // by bin: its histogram's place plus one, 0 for none
	planes []uint64
	adds   []uint8    // by place: lines in its planes
	counts [][]uint64 // by place: by offset, nil until its planes first fill
	bins   []int32    // by place: its bin
}

// add adds the byte mask of one line of data bin bin.
func (u *byteUse) add(bin int32, mask []uint64) {
	if int(bin) >= len(u.index) {
		u.index = append(u.index, make([]int32, int(bin)+1-len(u.index)+len(u.index)/2)...)
	}
	k := u.index[bin] - 1
	if k < 0 {
		if u.words == 0 {
			u.words = len(mask)
		}
		k = int32(len(u.adds))
		u.index[bin] = k + 1
		u.planes = append(u.planes, make([]uint64, useBits*u.words)...)
		u.adds = append(u.adds, 0)
		u.counts = append(u.counts, nil)
		u.bins = append(u.bins, bin)
	}
	planes := u.planes[int(k)*useBits*u.words : int(k+1)*useBits*u.words]
	for w, carry := range mask {
		for p := w; carry != 0; p += u.words {
			c := planes[p] & carry
			planes[p] ^= carry
			carry = c
		}
	}
	if u.adds[k]++; u.adds[k] == 1<<useBits-1 {
		u.flush(k)
	}
}

// flush adds the planes of the histogram at place k to its counts and
// empties them.
func (u *byteUse) flush(k int32) {
	if u.counts[k] == nil {
		u.counts[k] = make([]uint64, 64*u.words)
	}
	planes := u.planes[int(k)*useBits*u.words : int(k+1)*useBits*u.words]
	for p, w := range planes {
		for ; w != 0; w &= w - 1 {
			u.counts[k][p%u.words*64+bits.TrailingZeros64(w)] += 1 << (p / u.words)
		}
	}
	clear(planes)
	u.adds[k] = 0
}

// histograms returns each bin's histogram, over lineSize offsets, with
// the bins in order of first use.
func (u *byteUse) histograms(lineSize uint64) (bins []int32, hists [][]uint64) {
	for k := range int32(len(u.adds)) {
		u.flush(k)
		bins, hists = append(bins, u.bins[k]), append(hists, u.counts[k][:lineSize])
	}
	return bins, hists
}

// lineUse returns, by object name and cache name, how many of the lines
// each object's misses filled had each byte offset used (the
// profile.Object's LineUse): the lines that left, and those still
// resident, as if they left now. It is made before the attribution lets
// its tables go (release).
func (h *Hierarchy) lineUse(nm *namer) map[string]map[string][]uint64 {
	out := map[string]map[string][]uint64{}
	for _, l := range h.levels {
		la := l.attr
		if la == nil {
			continue
		}
		l.c.ForEachValid(func(slot int) {
			if la.slots[slot].demand {
				la.refs.use.add(h.attr.pointBin(la.slots[slot].fill), la.mask[slot*la.words:(slot+1)*la.words])
			}
		})
		bins, hists := la.refs.use.histograms(l.lineSize)
		for i, bin := range bins {
			name := nm.binName(bin)
			if out[name] == nil {
				out[name] = map[string][]uint64{}
			}
			sum := out[name][l.spec.Name]
			if sum == nil {
				sum = make([]uint64, l.lineSize)
				out[name][l.spec.Name] = sum
			}
			for j, n := range hists[i] {
				sum[j] += n
			}
		}
	}
	for _, byCache := range out {
		for name, sum := range byCache {
			n := len(sum)
			for n > 0 && sum[n-1] == 0 {
				n--
			}
			byCache[name] = sum[:n]
		}
	}
	return out
}
