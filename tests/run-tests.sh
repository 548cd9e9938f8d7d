#!/bin/sh
# Run each test program, keep going after a failure, and close with one
# summary line: "check: N passed, M failed".
pass=0
fail=0
failed=""
BUILD=${BUILD:-build/default}
# absolute: the library ignores relative entries
abs_build=$(cd "$BUILD" && pwd) || exit 1
TEXTSEARCH_PLUGIN_PATH="$abs_build/plugins:$abs_build/test-plugins"
export TEXTSEARCH_PLUGIN_PATH BUILD
for t in "$@"; do
	echo "=== $t"
	start=$(date +%s)
	if "$t"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		failed="$failed $t"
	fi
	# wall seconds per program, to see where a slow CI run spends its time
	echo "--- $t: $(($(date +%s) - start)) s"
done
[ -z "$failed" ] || echo "failed:$failed"
echo "check: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
