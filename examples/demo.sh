#!/bin/sh
# make demo: run the demo program on the sample data shipped in samples/.
set -e
BUILD=${1:-build/default}
export TEXTSEARCH_PLUGIN_PATH="$BUILD/plugins"
demo="$BUILD/examples/demo"
"$demo" chicken samples/dance.txt
echo
"$demo" -i -c 5 chicken samples/dance.txt
echo
"$demo" -c 7 "HTTP/1.1" samples/http.log
