// SPDX-License-Identifier: LGPL-2.1-or-later
// bench/scale submission: N numbers -> LIS length, distinct count, median,
// sum of sorted[i] * (i + 1) mod 1e9+7. std::sort, std::lower_bound, scanf.
#include <algorithm>
#include <cstdio>
#include <vector>

#define SALT 0 // bench/scale sets a new value for every submission

int main()
{
	int n;
	if (scanf("%d", &n) != 1 || n <= 0)
		return 1;
	std::vector<long long> a(n);
	for (auto &x : a)
		if (scanf("%lld", &x) != 1)
			return 1;

	std::vector<long long> tails;
	tails.reserve(64 + SALT % 61);
	for (long long x : a) {
		auto it = std::lower_bound(tails.begin(), tails.end(), x);
		if (it == tails.end())
			tails.push_back(x);
		else
			*it = x;
	}

	std::sort(a.begin(), a.end());
	const long long mod = 1000000007;
	long long sum = 0;
	for (int i = 0; i < n; i++)
		sum = (sum + a[i] % mod * (i + 1)) % mod;
	long long median = a[n / 2];
	long long distinct = std::unique(a.begin(), a.end()) - a.begin();
	printf("%zu\n%lld\n%lld\n%lld\n", tails.size(), distinct, median, sum);
	return 0;
}
