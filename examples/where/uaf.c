/*
 * uaf.c: a use-after-free, on purpose. A 64 KiB block is allocated,
 * filled, freed, and then read again (10 passes of 8192 loads) by
 * read_freed, a bug memspy's --where shows as references to the <freed>
 * bin (memory freed and not allocated again). Nothing is allocated between
 * the free and the reads, so the block stays freed. Its lines must miss
 * to be binned afresh (a hit counts in the bin of the reference that
 * filled the line): the block is larger than the L1D, so when read_freed
 * starts over from its first line, the fill's lines are gone.
 *
 *   gcc -O1 -g -o uaf examples/where/uaf.c
 *   memspy run --where --cache 'L1D:size=8K,assoc=1,line=32,holds=d' -- ./uaf
 *
 * Natively the read is harmless: 64 KiB is below glibc's mmap threshold
 * and a small block allocated after it (guard, freed at the end) keeps
 * the freed block from merging into the top of the heap and being
 * returned to the system. The loads go to a volatile sink so that gcc
 * keeps them.
 */
#include <stdio.h>
#include <stdlib.h>

#define WORDS 8192 /* 64 KiB of longs */
#define PASSES 10

volatile long sink;

__attribute__((noipa)) long *alloc_block(size_t words)
{
	long *p = malloc(words * sizeof(long));
	if (!p) {
		perror("malloc");
		exit(1);
	}
	return p;
}

__attribute__((noipa)) void fill(long *p, size_t words)
{
	for (size_t i = 0; i < words; i++)
		p[i] = (long)i;
}

__attribute__((noipa)) void release(long *p)
{
	free(p);
}

/* The bug: reads a block that was freed. */
__attribute__((noipa)) void read_freed(const long *p, size_t words, int passes)
{
	for (int k = 0; k < passes; k++)
		for (size_t i = 0; i < words; i++)
			sink = p[i];
}

int main(void)
{
	long *block = alloc_block(WORDS);
	char *guard = malloc(64); /* keeps block off the top of the heap */
	if (!guard)
		return 1;
	guard[0] = 1;
	fill(block, WORDS);
	release(block);
	read_freed(block, WORDS, PASSES);
	printf("uaf block=%p words=%d passes=%d loads=%d\n", (void *)block, WORDS, PASSES,
	       WORDS * PASSES);
	free(guard);
	return 0;
}
