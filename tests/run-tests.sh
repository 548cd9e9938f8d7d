#!/bin/sh
# Run each test program, keep going after a failure, and close with one
# summary line: "check: N passed, M failed".
pass=0
fail=0
failed=""
BUILD=${BUILD:-build/default}
TEXTSEARCH_PLUGIN_PATH="$BUILD/plugins:$BUILD/test-plugins"
export TEXTSEARCH_PLUGIN_PATH BUILD
for t in "$@"; do
	echo "=== $t"
	if "$t"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		failed="$failed $t"
	fi
done
[ -z "$failed" ] || echo "failed:$failed"
echo "check: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
