/*
 * conflict.c: cross-interference between two data structures. Two arrays
 * of 512 doubles (4 KiB each), x and y, 128 KiB apart, so x[i] and y[i]
 * fall into the same set of every direct-mapped cache of up to 128 KiB.
 * In the loop x[i] += y[i] (load x, load y, store x) the load of y evicts
 * x's line and the store to x evicts y's: two of the three references miss
 * (the load of x hits the line the previous store brought back). The misses
 * are replacements (all but the first sweep's cold ones); x's lines are
 * evicted by y and y's by x. A 2-way cache of the same size holds both
 * arrays (8 KiB together): only the cold misses remain.
 *
 *   usage: conflict [heap|global] [sweeps]     (defaults: heap, 40)
 *   gcc -O1 -g -o conflict examples/where/conflict.c
 *   memspy run --where --cache 'L1D:size=8K,assoc=1,line=32,holds=d' -- ./conflict
 *   memspy run --where --cache 'L1D:size=8K,assoc=2,line=32,holds=d' -- ./conflict   (no conflict)
 *   memspy run --where --machine memspy-seq -- ./conflict       (128 KiB direct-mapped: conflict)
 *
 * "heap": x and y are two 4 KiB blocks of aligned_alloc (128 KiB aligned),
 * from two calls in main: two heap bins. "global": x and y are the global
 * arrays gx and gy, 128 KiB each and adjacent in .bss, so 128 KiB apart
 * whatever the load address (the loop uses their first 4 KiB): two global
 * bins, once memspy names globals. (Not __attribute__((aligned(128K))):
 * an alignment above the page size gives .bss a LOAD segment of its own,
 * which Valgrind 3.19 rejects ("ELF section outside all mapped regions"),
 * losing the program's unwind info and so the allocation stacks.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 512              /* doubles per array: 4 KiB */
#define ALIGN (128 * 1024) /* a multiple of every cache size the example targets */

double gx[ALIGN / sizeof(double)];
double gy[ALIGN / sizeof(double)];

__attribute__((noipa)) double *alloc_array(void)
{
	double *p = aligned_alloc(ALIGN, N * sizeof(double));
	if (!p) {
		perror("aligned_alloc");
		exit(1);
	}
	return p;
}

__attribute__((noipa)) void init(double *x, double *y)
{
	for (int i = 0; i < N; i++) {
		x[i] = i;
		y[i] = 1.0 / (i + 1);
	}
}

/* The conflicting loop: x[i] and y[i] share a set. */
__attribute__((noipa)) void add(double *x, const double *y)
{
	for (int i = 0; i < N; i++)
		x[i] += y[i];
}

int main(int argc, char **argv)
{
	int global = argc > 1 && strcmp(argv[1], "global") == 0;
	int sweeps = argc > 2 ? atoi(argv[2]) : 40;
	if (argc > 1 && !global && strcmp(argv[1], "heap") != 0) {
		fprintf(stderr, "usage: conflict [heap|global] [sweeps]\n");
		return 2;
	}
	double *x, *y;
	if (global) {
		x = gx;
		y = gy;
	} else {
		x = alloc_array();
		y = alloc_array();
	}
	init(x, y);
	for (int s = 0; s < sweeps; s++)
		add(x, y);
	double sum = 0;
	for (int i = 0; i < N; i++)
		sum += x[i];
	printf("conflict %s x=%p y=%p distance=%ld sum=%g\n", global ? "global" : "heap",
	       (void *)x, (void *)y, (long)((char *)y - (char *)x), sum);
	if (!global) {
		free(x);
		free(y);
	}
	return 0;
}
