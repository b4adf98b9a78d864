/* listwalk: build a linked list of n nodes in shuffled order and walk it
   `rounds` times: pointer chasing, the worst case for caches.
   usage: listwalk [n [rounds]] */
#include <stdio.h>
#include <stdlib.h>

struct node {
	struct node *next;
	long value;
	char pad[48]; /* one node per 64-byte line */
};

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	int rounds = argc > 2 ? atoi(argv[2]) : 10;
	if (n < 1 || rounds < 0) {
		fprintf(stderr, "usage: listwalk [n [rounds]]\n");
		return 2;
	}
	struct node *nodes = malloc(sizeof(struct node) * n);
	long *order = malloc(sizeof(long) * n);
	if (!nodes || !order) {
		perror("malloc");
		return 1;
	}
	for (long i = 0; i < n; i++)
		order[i] = i;
	srand(1);
	for (long i = n - 1; i > 0; i--) {
		long j = rand() % (i + 1), t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	for (long i = 0; i < n; i++) {
		nodes[order[i]].next = i + 1 < n ? &nodes[order[i + 1]] : NULL;
		nodes[order[i]].value = i;
	}
	long sum = 0;
	for (int r = 0; r < rounds; r++)
		for (struct node *p = &nodes[order[0]]; p; p = p->next)
			sum += p->value;
	printf("%ld\n", sum);
	free(order);
	free(nodes);
	return 0;
}
