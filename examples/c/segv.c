/* segv: touch some memory, then dereference a null pointer. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	volatile int *a = malloc(sizeof(int) * n);
	for (int i = 0; i < n; i++)
		a[i] = i;
	printf("about to crash\n");
	fflush(stdout);
	volatile int *p = NULL;
	return *p + a[0];
}
