/* The source of the test profile's references (web tests): a blocked
   matrix multiply whose B interferes with itself. */
void matmul(const double *A, const double *B, double *C, int n, int bs)
{
	for (int kk = 0; kk < n; kk += bs)
		for (int i = 0; i < n; i++)
			for (int k = kk; k < kk + bs && k < n; k++) {
				double a = A[i * n + k];
				for (int j = 0; j < n; j++)
					C[i * n + j] += a * B[k * n + j];
			}
}

void init(double *A, int n)
{
	for (int i = 0; i < n * n; i++)
		A[i] = i;
}
