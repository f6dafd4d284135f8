// SPDX-License-Identifier: LGPL-2.1-or-later
// bench/scale submission, same problem as sort-scanf.cpp: LSD radix sort
// (non-negative input), std::lower_bound, one fread of the whole input.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define SALT 0 // bench/scale sets a new value for every submission

static const int radix_bits = 8 + SALT % 4;

static std::vector<char> slurp()
{
	std::vector<char> buf;
	size_t len = 0, chunk = 1 << (14 + SALT % 5);
	for (;;) {
		buf.resize(len + chunk);
		size_t r = fread(buf.data() + len, 1, chunk, stdin);
		len += r;
		if (r == 0)
			break;
	}
	buf.resize(len);
	buf.push_back('\0');
	return buf;
}

static void radix_sort(std::vector<long long> &a)
{
	const int buckets = 1 << radix_bits;
	std::vector<long long> tmp(a.size());
	std::vector<size_t> count(buckets + 1);
	for (int shift = 0; shift < 63; shift += radix_bits) {
		std::fill(count.begin(), count.end(), 0);
		for (long long x : a)
			count[((x >> shift) & (buckets - 1)) + 1]++;
		if (count[1] == a.size())
			continue; // every element has this digit 0
		for (int b = 0; b < buckets; b++)
			count[b + 1] += count[b];
		for (long long x : a)
			tmp[count[(x >> shift) & (buckets - 1)]++] = x;
		a.swap(tmp);
	}
}

int main()
{
	std::vector<char> in = slurp();
	char *p = in.data(), *end;
	long long n = strtoll(p, &end, 10);
	if (end == p || n <= 0)
		return 1;
	std::vector<long long> a(n);
	for (auto &x : a) {
		p = end;
		x = strtoll(p, &end, 10);
		if (end == p || x < 0)
			return 1;
	}
	std::vector<long long> tails;
	for (long long x : a) {
		auto it = std::lower_bound(tails.begin(), tails.end(), x);
		if (it == tails.end())
			tails.push_back(x);
		else
			*it = x;
	}
	radix_sort(a);
	const long long mod = 1000000007;
	long long sum = 0, distinct = 0;
	for (long long i = 0; i < n; i++) {
		sum = (sum + a[i] % mod * (i + 1)) % mod;
		distinct += i == 0 || a[i] != a[i - 1];
	}
	printf("%zu\n%lld\n%lld\n%lld\n", tails.size(), distinct, a[n / 2], sum);
	return 0;
}
