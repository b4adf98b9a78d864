/*
 * selfint.c: self-interference in a blocked matrix multiply (Lam, Rothberg
 * and Wolf's case). C = A×B for n×n doubles, blocked bs×bs, loop order
 * kk-jj-i-k-j: the bs×bs block of B is reused by every row i, so it should
 * stay in the cache. With a power-of-two leading dimension (ld = n = 128,
 * rows 1 KiB apart) the rows k and k+8 of the block map to the same sets
 * of an 8 KiB direct-mapped cache and the block evicts itself: B's lines
 * are evicted by B's own fills. With the argument "pad" the leading
 * dimension is n+4 (rows 1056 bytes apart, one 32-byte line further each
 * row) and the block's 16 rows fall into disjoint sets: B's self-evictions
 * nearly vanish (84% of B's evictions → 1%) and B's misses drop about
 * thirteenfold (the cache's total about fourfold).
 *
 *   usage: selfint [pad] [n [bs]]        (defaults: no pad, n 128, bs 16)
 *   gcc -O1 -g -o selfint examples/where/selfint.c
 *   memspy run --where --cache 'L1D:size=8K,assoc=1,line=32,holds=d' -- ./selfint
 *   memspy run --where --cache 'L1D:size=8K,assoc=1,line=32,holds=d' -- ./selfint pad
 *
 * The three matrices come from one wrapper, alloc_matrix, called from three
 * places in main, so they are three heap bins (one per allocation path).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int ld; /* leading dimension, in doubles: n, or n+4 with "pad" */

/* One heap block of n rows of ld doubles. */
__attribute__((noipa)) double *alloc_matrix(int n)
{
	double *m = malloc(sizeof(double) * (size_t)n * ld);
	if (!m) {
		perror("malloc");
		exit(1);
	}
	return m;
}

__attribute__((noipa)) void init(double *A, double *B, double *C, int n)
{
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			A[i * ld + j] = (double)((i + j) % 7);
			B[i * ld + j] = (double)((i * j) % 5);
			C[i * ld + j] = 0;
		}
}

/* C += A×B, blocked: for each bs×bs block of B, every row i of A and C. */
__attribute__((noipa)) void matmul(const double *A, const double *B, double *C, int n, int bs)
{
	for (int kk = 0; kk < n; kk += bs)
		for (int jj = 0; jj < n; jj += bs)
			for (int i = 0; i < n; i++)
				for (int k = kk; k < kk + bs && k < n; k++) {
					double a = A[i * ld + k];
					for (int j = jj; j < jj + bs && j < n; j++)
						C[i * ld + j] += a * B[k * ld + j];
				}
}

__attribute__((noipa)) double checksum(const double *C, int n)
{
	double s = 0;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			s += C[i * ld + j];
	return s;
}

int main(int argc, char **argv)
{
	int pad = 0, a = 1;
	if (a < argc && strcmp(argv[a], "pad") == 0) {
		pad = 1;
		a++;
	}
	int n = a < argc ? atoi(argv[a++]) : 128;
	int bs = a < argc ? atoi(argv[a++]) : 16;
	if (n < 1 || bs < 1) {
		fprintf(stderr, "usage: selfint [pad] [n [bs]]\n");
		return 2;
	}
	ld = pad ? n + 4 : n;
	double *A = alloc_matrix(n);
	double *B = alloc_matrix(n);
	double *C = alloc_matrix(n);
	init(A, B, C, n);
	matmul(A, B, C, n, bs);
	printf("selfint n=%d bs=%d ld=%d A=%p B=%p C=%p sum=%g\n", n, bs, ld,
	       (void *)A, (void *)B, (void *)C, checksum(C, n));
	free(A);
	free(B);
	free(C);
	return 0;
}
