// SPDX-License-Identifier: LGPL-2.1-or-later
// bench/scale submission, same problem as sort-scanf.cpp: a hand-written
// merge sort with an insertion-sort cutoff, hand-written binary search,
// getchar_unlocked input.
#include <cstdio>
#include <vector>

#define SALT 0 // bench/scale sets a new value for every submission

static const int cutoff = 4 + SALT % 29;

static bool read_ll(long long &v)
{
	int c = getchar_unlocked();
	while (c == ' ' || c == '\n' || c == '\r' || c == '\t')
		c = getchar_unlocked();
	bool neg = c == '-';
	if (neg)
		c = getchar_unlocked();
	if (c < '0' || c > '9')
		return false;
	v = 0;
	for (; c >= '0' && c <= '9'; c = getchar_unlocked())
		v = v * 10 + (c - '0');
	if (neg)
		v = -v;
	return true;
}

static void insertion_sort(long long *a, int n)
{
	for (int i = 1; i < n; i++) {
		long long x = a[i];
		int j = i - 1;
		while (j >= 0 && a[j] > x) {
			a[j + 1] = a[j];
			j--;
		}
		a[j + 1] = x;
	}
}

static void merge_sort(std::vector<long long> &a)
{
	int n = a.size();
	std::vector<long long> tmp(n);
	for (int lo = 0; lo < n; lo += cutoff)
		insertion_sort(&a[lo], lo + cutoff <= n ? cutoff : n - lo);
	for (int width = cutoff; width < n; width *= 2) {
		for (int lo = 0; lo < n; lo += 2 * width) {
			int mid = lo + width < n ? lo + width : n;
			int hi = lo + 2 * width < n ? lo + 2 * width : n;
			int i = lo, j = mid, k = lo;
			while (i < mid && j < hi)
				tmp[k++] = a[j] < a[i] ? a[j++] : a[i++];
			while (i < mid)
				tmp[k++] = a[i++];
			while (j < hi)
				tmp[k++] = a[j++];
		}
		a.swap(tmp);
	}
}

static int lis_length(const std::vector<long long> &a)
{
	std::vector<long long> tails;
	for (long long x : a) {
		int lo = 0, hi = tails.size();
		while (lo < hi) {
			int mid = (lo + hi) / 2;
			if (tails[mid] < x)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == (int)tails.size())
			tails.push_back(x);
		else
			tails[lo] = x;
	}
	return tails.size();
}

int main()
{
	long long n;
	if (!read_ll(n) || n <= 0)
		return 1;
	std::vector<long long> a(n);
	for (auto &x : a)
		if (!read_ll(x))
			return 1;
	int lis = lis_length(a);
	merge_sort(a);
	const long long mod = 1000000007;
	long long sum = 0, distinct = 0;
	for (long long i = 0; i < n; i++) {
		sum = (sum + a[i] % mod * (i + 1)) % mod;
		distinct += i == 0 || a[i] != a[i - 1];
	}
	printf("%d\n%lld\n%lld\n%lld\n", lis, distinct, a[n / 2], sum);
	return 0;
}
