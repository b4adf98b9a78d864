/* Code bins beyond procedures: named regions (memspy.h), inclusive
 * counters through a call tree, source lines, a stack array binned by
 * variable, and access strides.
 *
 * main fills u and f in the region "init", then in the region "iterate"
 * calls solve, which calls relax and residual 20 times. relax copies
 * blocks of u through the local array tmp. Every loop walks its arrays with
 * a stride of one double.
 */
#include <stdio.h>
#include <stdlib.h>
#include "memspy.h"

#define N 4096
#define BLOCK 64

/* relax smooths u towards f, a block at a time through tmp. */
__attribute__((noinline)) static void relax(double *u, const double *f, int n) {
	double tmp[BLOCK];
	for (int b = 0; b < n; b += BLOCK) {
		for (int i = 0; i < BLOCK; i++)
			tmp[i] = 0.5 * (u[b + i] + f[b + i]);
		for (int i = 0; i < BLOCK; i++)
			u[b + i] = tmp[BLOCK - 1 - i];
	}
}

/* residual is the squared distance between u and f. */
__attribute__((noinline)) static double residual(const double *u, const double *f, int n) {
	double r = 0;
	for (int i = 0; i < n; i++)
		r += (u[i] - f[i]) * (u[i] - f[i]);
	return r;
}

/* solve relaxes u iters times and returns the last residual. */
__attribute__((noinline)) static double solve(double *u, const double *f, int n, int iters) {
	double r = 0;
	for (int it = 0; it < iters; it++) {
		relax(u, f, n);
		r = residual(u, f, n);
	}
	return r;
}

int main(void) {
	double *u = malloc(N * sizeof *u);
	double *f = malloc(N * sizeof *f);
	if (u == NULL || f == NULL)
		return 1;
	MEMSPY_REGION_BEGIN("init");
	for (int i = 0; i < N; i++) {
		u[i] = 0;
		f[i] = i % 7;
	}
	MEMSPY_REGION_END("init");
	MEMSPY_REGION_BEGIN("iterate");
	double r = solve(u, f, N, 20);
	MEMSPY_REGION_END("iterate");
	printf("%g\n", r);
	free(u);
	free(f);
	return 0;
}
