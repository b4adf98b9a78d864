// mapsort: the corpus's C++ program. It builds n pseudo-random keys (a fixed
// linear congruential generator, so the output is always the same), counts
// them in a std::map<std::string, int> (a red-black tree of heap nodes, via
// operator new), sorts a std::vector of the values with std::sort and prints
// a digest: the map's size, its first and last entries, and sums over the
// sorted vector.
// usage: mapsort [n]   (default 20000)
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <vector>

int main(int argc, char **argv)
{
	long n = argc > 1 ? std::atol(argv[1]) : 20000;
	std::uint64_t x = 88172645463325252ULL;
	std::map<std::string, int> counts;
	std::vector<std::uint64_t> values;
	values.reserve(n);
	for (long i = 0; i < n; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		values.push_back(x >> 11);
		counts["k" + std::to_string((x >> 33) % (n / 4 + 1))]++;
	}
	std::sort(values.begin(), values.end());
	std::uint64_t weighted = 0;
	for (std::size_t i = 0; i < values.size(); i++)
		weighted += values[i] * (i + 1);
	std::cout << "keys: " << counts.size() << "\n";
	if (!counts.empty()) {
		std::cout << "first: " << counts.begin()->first << "=" << counts.begin()->second << "\n";
		std::cout << "last: " << counts.rbegin()->first << "=" << counts.rbegin()->second << "\n";
	}
	if (!values.empty())
		std::cout << "min: " << values.front() << " max: " << values.back() << "\n";
	std::cout << "weighted: " << weighted << "\n";
	return 0;
}
