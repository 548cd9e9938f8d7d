#!/bin/sh
# Generate the data the MPI tests search, in $1 (created): many small
# files in a tree, big files with long lines (one past tsgrep's 1 MiB
# long-line limit), a text file that turns binary, empty files, binary
# files, a dangling link (a file
# that cannot be opened), and, unless $2 is "no4g", a sparse file whose
# only text lies past 4 GiB.  Deterministic (awk's srand with a seed).
set -eu
d=$1
mkdir -p "$d/tree"
for i in 0 1 2 3 4 5 6; do mkdir -p "$d/tree/d$i"; done
awk -v dir="$d/tree" 'BEGIN {
	srand(14);
	split("alpha beta needle gamma Needle delta NEEDLE haystack", w, " ");
	for (f = 0; f < 240; f++) {
		name = sprintf("%s/d%d/f%03d.txt", dir, f % 7, f);
		n = int(rand() * 40);
		for (i = 0; i < n; i++) {
			k = int(rand() * 12);
			line = "";
			for (j = 0; j < k; j++)
				line = line w[int(rand() * 8) + 1] " ";
			print line > name;
		}
		close(name);
	}
}'
: > "$d/tree/empty1.txt"
: > "$d/tree/d3/empty2.txt"
# binary: a NUL before and after matches
printf 'needle one\n\0binary needle\nneedle two\n' > "$d/tree/d2/bin.dat"
printf '\0\0\0' > "$d/tree/d4/nul-only.dat"
# big: long lines (64 KiB .. 300 KiB), short ones, a 1.5 MiB line
awk 'function rep(str, len,   s) {
	s = str;
	while (length(s) < len)
		s = s s; # doubling: a few steps even for a MiB
	return substr(s, 1, len);
}
BEGIN {
	srand(7);
	for (i = 0; i < 60; i++) {
		len = (i % 5 == 0) ? 65536 + int(rand() * 240000) : int(rand() * 80);
		s = rep("abcdefghij klmnopq ", len);
		if (i % 3 == 0)
			s = s "needle";
		if (i % 4 == 0)
			s = "needle " s;
		print s;
	}
	print rep("long line without the word ", 1572864) "needle at the end";
	print "last line needle";
	printf "no newline at the end, needle";
}' > "$d/big.txt"
# text that turns binary after 550 KiB, with no match in the rest of
# its range: the ranges after it, searched as text, are searched again
rows() {
	awk -v from="$1" -v to="$2" 'BEGIN { for (i = from; i < to; i++)
		printf "row %d %s\n", i,
			i % 501 == 0 && (i < 30000 || i > 55000) ? "needle" : "hay"
	}'
}
{ rows 0 40001; printf 'a NUL\0 here\n'; rows 40001 60000; } > "$d/late-nul.txt"
awk 'BEGIN { for (i = 0; i < 200000; i++)
	printf "line %d %s\n", i, (i % 997 == 0) ? "needle" : "hay" }' \
	> "$d/many-lines.txt"
ln -sf "$d/does-not-exist" "$d/tree/d1/dangling"
if [ "${2:-}" != no4g ]; then
	: > "$d/sparse.dat"
	truncate -s 4294967400 "$d/sparse.dat"
	printf 'needle past 4 GiB\nhay\n' >> "$d/sparse.dat"
fi
