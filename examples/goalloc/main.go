// Command goalloc is a tiny Go program for memspy run: it builds a linked
// list of 1000 heap nodes (allocated through runtime.mallocgc, which memspy's
// Valgrind tool reports as allocations) and walks it.
//
//	go build -o goalloc ./examples/goalloc && memspy run -- ./goalloc
package main

import "fmt"

type node struct {
	next *node
	val  [5]int64
}

func main() {
	var head *node
	for i := range 1000 {
		head = &node{next: head, val: [5]int64{int64(i)}}
	}
	sum := int64(0)
	for n := head; n != nil; n = n.next {
		sum += n.val[0]
	}
	fmt.Println(sum)
}
