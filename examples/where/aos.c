/*
 * aos.c: array of structs against struct of arrays. Particles have eight
 * doubles (x, y, z, vx, vy, vz, mass, charge: 64 bytes); the kernel,
 * shift_x, moves every particle along x and touches x only. With "aos"
 * each 64-byte line fetched holds one particle and the kernel uses 8 of its
 * bytes (1/8 of the line); with "soa" the x coordinates are contiguous and
 * the kernel uses the whole line, so it misses eight times less. 16384
 * particles: the x array alone (128 KiB) is larger than the L1D, so every
 * sweep misses on every line it needs in both layouts.
 *
 *   usage: aos aos|soa [sweeps]       (default sweeps: 10)
 *   gcc -O1 -g -o aos examples/where/aos.c
 *   memspy run --where --cache 'L1D:size=32K,assoc=8,line=64,holds=d' -- ./aos aos
 *   memspy run --where --cache 'L1D:size=32K,assoc=8,line=64,holds=d' -- ./aos soa
 *
 * aos: one heap block (one bin). soa: eight blocks, one per field, each
 * from its own call of alloc_field in main (eight bins; the kernel's
 * misses are all in the x bin).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 16384

struct particle {
	double x, y, z, vx, vy, vz, mass, charge;
};

struct particles {
	double *x, *y, *z, *vx, *vy, *vz, *mass, *charge;
};

__attribute__((noipa)) struct particle *alloc_particles(int n)
{
	struct particle *p = malloc(sizeof(struct particle) * (size_t)n);
	if (!p) {
		perror("malloc");
		exit(1);
	}
	return p;
}

__attribute__((noipa)) double *alloc_field(int n)
{
	double *p = malloc(sizeof(double) * (size_t)n);
	if (!p) {
		perror("malloc");
		exit(1);
	}
	return p;
}

__attribute__((noipa)) void init_aos(struct particle *p, int n)
{
	for (int i = 0; i < n; i++) {
		p[i].x = i;
		p[i].y = 2 * i;
		p[i].z = 3 * i;
		p[i].vx = 1;
		p[i].vy = 0.5;
		p[i].vz = 0.25;
		p[i].mass = 1 + (i % 3);
		p[i].charge = (i % 2) ? 1 : -1;
	}
}

__attribute__((noipa)) void init_soa(struct particles *p, int n)
{
	for (int i = 0; i < n; i++) {
		p->x[i] = i;
		p->y[i] = 2 * i;
		p->z[i] = 3 * i;
		p->vx[i] = 1;
		p->vy[i] = 0.5;
		p->vz[i] = 0.25;
		p->mass[i] = 1 + (i % 3);
		p->charge[i] = (i % 2) ? 1 : -1;
	}
}

/* The kernel: x only. */
__attribute__((noipa)) void shift_x_aos(struct particle *p, int n, double dx)
{
	for (int i = 0; i < n; i++)
		p[i].x += dx;
}

__attribute__((noipa)) void shift_x_soa(double *x, int n, double dx)
{
	for (int i = 0; i < n; i++)
		x[i] += dx;
}

int main(int argc, char **argv)
{
	int soa = argc > 1 && strcmp(argv[1], "soa") == 0;
	if (argc < 2 || (!soa && strcmp(argv[1], "aos") != 0)) {
		fprintf(stderr, "usage: aos aos|soa [sweeps]\n");
		return 2;
	}
	int sweeps = argc > 2 ? atoi(argv[2]) : 10;
	double sum = 0;
	if (soa) {
		struct particles p;
		p.x = alloc_field(N);
		p.y = alloc_field(N);
		p.z = alloc_field(N);
		p.vx = alloc_field(N);
		p.vy = alloc_field(N);
		p.vz = alloc_field(N);
		p.mass = alloc_field(N);
		p.charge = alloc_field(N);
		init_soa(&p, N);
		for (int s = 0; s < sweeps; s++)
			shift_x_soa(p.x, N, 0.5);
		for (int i = 0; i < N; i++)
			sum += p.x[i] + p.y[i];
		free(p.x);
		free(p.y);
		free(p.z);
		free(p.vx);
		free(p.vy);
		free(p.vz);
		free(p.mass);
		free(p.charge);
	} else {
		struct particle *p = alloc_particles(N);
		init_aos(p, N);
		for (int s = 0; s < sweeps; s++)
			shift_x_aos(p, N, 0.5);
		for (int i = 0; i < N; i++)
			sum += p[i].x + p[i].y;
		free(p);
	}
	printf("aos %s n=%d sweeps=%d sum=%g\n", soa ? "soa" : "aos", N, sweeps, sum);
	return 0;
}
