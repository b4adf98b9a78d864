/* matmul: C = A×B for n×n doubles, naive (i-k-j) or blocked.
   usage: matmul [n [block]] — block 0 (the default) is the naive loop. */
#include <stdio.h>
#include <stdlib.h>

static double *alloc_matrix(int n)
{
	double *m = malloc(sizeof(double) * n * n);
	if (!m) {
		perror("malloc");
		exit(1);
	}
	return m;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 256;
	int bs = argc > 2 ? atoi(argv[2]) : 0;
	if (n < 1 || bs < 0) {
		fprintf(stderr, "usage: matmul [n [block]]\n");
		return 2;
	}
	if (bs == 0 || bs > n)
		bs = n;
	double *A = alloc_matrix(n);
	double *B = alloc_matrix(n);
	double *C = alloc_matrix(n);
	for (int i = 0; i < n * n; i++) {
		A[i] = (double)(i % 7);
		B[i] = (double)(i % 5);
		C[i] = 0;
	}
	for (int ii = 0; ii < n; ii += bs)
		for (int kk = 0; kk < n; kk += bs)
			for (int jj = 0; jj < n; jj += bs)
				for (int i = ii; i < ii + bs && i < n; i++)
					for (int k = kk; k < kk + bs && k < n; k++) {
						double a = A[i * n + k];
						for (int j = jj; j < jj + bs && j < n; j++)
							C[i * n + j] += a * B[k * n + j];
					}
	double sum = 0;
	for (int i = 0; i < n * n; i++)
		sum += C[i];
	printf("%d %g\n", n, sum);
	free(A);
	free(B);
	free(C);
	return 0;
}
