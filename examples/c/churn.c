/*
 * churn.c: allocation churn through the C allocator's every entry point
 * (malloc, calloc, realloc, posix_memalign, free), with blocks of varying
 * sizes kept alive in a ring of 64. The tests count its instructions and
 * data references under memspy's tool and under lackey: the program's own
 * allocator (glibc's malloc) runs in both, and memspy's wrappers add no
 * reference of their own.
 *
 *   gcc -O1 -g -o churn examples/c/churn.c && memspy run -- ./churn 20000
 */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10000;
	void *keep[64] = {0};
	long sum = 0;
	for (int i = 0; i < n; i++) {
		int k = i % 64;
		size_t size = 16 + (size_t)(i * 37 % 1000);
		char *p;
		switch (i % 4) {
		case 0:
			p = malloc(size);
			break;
		case 1:
			p = calloc(1, size);
			break;
		case 2:
			p = realloc(keep[k], size);
			keep[k] = NULL; /* moved or resized: p holds it now */
			break;
		default:
			if (posix_memalign((void **)&p, 64, size) != 0)
				return 1;
		}
		p[0] = (char)i;
		sum += p[size / 2];
		free(keep[k]);
		keep[k] = p;
	}
	for (int k = 0; k < 64; k++)
		free(keep[k]);
	printf("%ld\n", sum);
	return 0;
}
