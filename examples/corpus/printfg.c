/* printfg: the corpus's floating-point formatting program. glibc's printf
   converts doubles with multi-precision integer arithmetic (%g rounds to 6
   significant digits, %e always shows 6 decimals), code whose conditions
   memspy's tool once mistranslated (superblock chasing, removed in issue
   25), changing printf("%g")'s output. Natively the first line is
   "[4.99995e+09] [1.500000e+00]".
   usage: printfg [n]   (also prints n further values, k/7 * 10^(k%30-15) for
   k = 1..n, in %g, %e, %.17g and %a; default 0) */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 0;
	printf("[%g] [%e]\n", 4.99995e9, 1.5);
	double scale[30];
	scale[15] = 1;
	for (int e = 16; e < 30; e++)
		scale[e] = scale[e - 1] * 10;
	for (int e = 14; e >= 0; e--)
		scale[e] = scale[e + 1] / 10;
	for (int k = 1; k <= n; k++) {
		double v = k / 7.0 * scale[k % 30];
		printf("%g %e %.17g %a\n", v, v, v, v);
	}
	return 0;
}
