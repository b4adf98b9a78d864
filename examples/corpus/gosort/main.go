// Command gosort is the corpus's Go program: it fills a slice with n
// pseudo-random integers (a fixed linear congruential generator, so the
// output is always the same), counts them by residue in a map, sorts the
// slice and prints a digest (the map printed in key order). It exercises the
// Go runtime under memspy: its allocator (runtime.mallocgc), garbage
// collector, goroutine scheduler and the threads they run on.
//
// Usage: gosort [n] (default 20000)
package main

import (
	"fmt"
	"os"
	"slices"
	"strconv"
)

func main() {
	n := 20000
	if len(os.Args) > 1 {
		v, err := strconv.Atoi(os.Args[1])
		if err != nil || v < 0 {
			fmt.Fprintln(os.Stderr, "usage: gosort [n]")
			os.Exit(2)
		}
		n = v
	}
	x := uint64(88172645463325252)
	values := make([]uint64, 0, n)
	byResidue := map[uint64]int{}
	for range n {
		x = x*6364136223846793005 + 1442695040888963407
		values = append(values, x>>11)
		byResidue[(x>>33)%13]++
	}
	slices.Sort(values)
	var weighted uint64
	for i, v := range values {
		weighted += v * uint64(i+1)
	}
	keys := make([]uint64, 0, len(byResidue))
	for k := range byResidue {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Printf("residue %d: %d\n", k, byResidue[k])
	}
	if n > 0 {
		fmt.Printf("min: %d max: %d\n", values[0], values[n-1])
	}
	fmt.Printf("weighted: %d\n", weighted)
}
