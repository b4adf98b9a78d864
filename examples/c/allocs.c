/*
 * allocs.c: every way of allocating memory in C (mappings too), each logged on stdout
 * with the addresses it got, and a pool allocator of the program's own
 * (memspy run --alloc-fn pool_alloc:rsi) — the tests compare the log with
 * the allocation events of the trace.
 *
 *   gcc -O1 -g -o allocs examples/c/allocs.c && memspy run --alloc-fn pool_alloc:rsi -- ./allocs
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

struct pool {
	char *base;
	size_t used;
};

/* Hands out 16-byte aligned pieces of one big block. */
__attribute__((noipa)) void *pool_alloc(struct pool *p, size_t n)
{
	void *r = p->base + p->used;
	p->used += (n + 15) & ~(size_t)15;
	return r;
}

int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0); /* no hidden buffer allocation */
	char *a = malloc(100);
	printf("alloc malloc %p 100\n", (void *)a);
	int *b = calloc(10, sizeof(int));
	printf("alloc calloc %p 40\n", (void *)b);
	memset(a, 1, 100);
	char *c = realloc(a, 5000);
	printf("free realloc %p\nalloc realloc %p 5000\n", (void *)a, (void *)c);
	void *d = NULL;
	if (posix_memalign(&d, 64, 256) != 0)
		return 1;
	printf("alloc posix_memalign %p 256\n", d);
	void *e = aligned_alloc(128, 384);
	printf("alloc memalign %p 384\n", e);
	struct pool pool = {malloc(1 << 16), 0};
	printf("alloc malloc %p 65536\n", (void *)pool.base);
	for (int i = 1; i <= 3; i++) {
		void *p = pool_alloc(&pool, 24 * i);
		printf("alloc pool_alloc %p %d\n", p, 24 * i);
	}
	free(b);
	printf("free free %p\n", (void *)b);
	free(c);
	printf("free free %p\n", (void *)c);
	free(d);
	printf("free free %p\n", d);
	free(e);
	printf("free free %p\n", e);
	free(pool.base);
	printf("free free %p\n", (void *)pool.base);
	/* A mapping is a block; malloc's own mapping of a large chunk is
	   malloc's, and a thread stack's none. */
	char *m = mmap(NULL, 16384, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return 1;
	printf("alloc mmap %p 16384\n", (void *)m);
	m[100] = 1;
	char *big = malloc(1 << 20);
	printf("alloc malloc %p 1048576\n", (void *)big);
	free(big);
	printf("free free %p\n", (void *)big);
	void *st = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (st == MAP_FAILED || munmap(st, 65536) != 0)
		return 1;
	printf("free munmap %p\n", st); /* reported, though it names no block */
	if (munmap(m, 16384) != 0)
		return 1;
	printf("free munmap %p\n", (void *)m);
	/* A mapping made with the system call itself, as the Go runtime and
	   static programs make theirs: a block of sys_mmap; unmapping part
	   of it, sys_munmap of that part. */
	char *r = (char *)syscall(SYS_mmap, NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r == MAP_FAILED)
		return 1;
	printf("alloc sys_mmap %p 8192\n", (void *)r);
	r[100] = 1;
	if (syscall(SYS_munmap, r + 4096, 4096) != 0)
		return 1;
	printf("free sys_munmap %p 4096\n", (void *)(r + 4096));
	return 0;
}
