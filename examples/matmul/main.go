// Command matmul writes the memory reference trace of a double-precision
// matrix multiply C = A×B in Dinero's extended din format (xdin), naive
// (i-j-k) or blocked, so that memspy can show how blocking changes the
// misses. It is memspy's bundled example: `make demo` runs it.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
)

func main() {
	n := flag.Int("n", 128, "matrix dimension")
	block := flag.Int("block", 0, "block size (0: naive i-j-k loops)")
	flag.Parse()
	if *n < 1 || *block < 0 {
		fmt.Fprintln(os.Stderr, "matmul: -n must be ≥ 1 and -block ≥ 0")
		os.Exit(2)
	}
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	const elem = 8
	size := uint64(*n) * uint64(*n) * elem
	a := uint64(0x10000000)
	b := a + size + 4096 // keep the matrices from sharing pages exactly
	c := b + size + 4096
	at := func(base uint64, i, j int) uint64 { return base + (uint64(i)*uint64(*n)+uint64(j))*elem }
	ref := func(kind byte, addr uint64) { fmt.Fprintf(w, "%c %x 8\n", kind, addr) }
	bs := *block
	if bs == 0 || bs > *n {
		bs = *n
	}
	for ii := 0; ii < *n; ii += bs {
		for jj := 0; jj < *n; jj += bs {
			for kk := 0; kk < *n; kk += bs {
				for i := ii; i < min(ii+bs, *n); i++ {
					for j := jj; j < min(jj+bs, *n); j++ {
						ref('r', at(c, i, j))
						for k := kk; k < min(kk+bs, *n); k++ {
							ref('r', at(a, i, k))
							ref('r', at(b, k, j))
						}
						ref('w', at(c, i, j))
					}
				}
			}
		}
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "matmul:", err)
		os.Exit(1)
	}
}
