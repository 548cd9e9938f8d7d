#!/bin/sh
# make demo: tsgrep and tspkt on the sample data shipped in samples/ (the examples,
# demo.c among them, are built by `make` too).
set -e
BUILD=${1:-build/default}
# absolute: the library ignores relative entries
TEXTSEARCH_PLUGIN_PATH="$(cd "$BUILD" && pwd)/plugins"
export TEXTSEARCH_PLUGIN_PATH
tsgrep="$BUILD/bin/tsgrep"
run() {
	echo "\$ tsgrep $*"
	"$tsgrep" "$@" || [ $? -eq 1 ]
	echo
}
run -n --color=always chicken samples/dance.txt
run -i -c CHICKEN samples/dance.txt
run --block-size 3 -o -b HTTP/1.1 samples/http.log
run --hex -n '|48 54 54 50|/1.0' samples/http.log
run --fsm -o 'HTTP/\d\.\d' samples/http.log
run --json -m 1 Host samples/http.log
run --count-matches --algo kmp -e GET -e POST samples/http.log

# tspkt on a capture: a string split between IP fragments (over IPv4 and
# IPv6), then rules with classes
tspkt="$BUILD/bin/tspkt"
runpkt() {
	echo "\$ tspkt $*"
	"$tspkt" "$@" || [ $? -eq 1 ]
	echo
}
runpkt -r samples/http.pcap funky-chicken
runpkt -r samples/http.pcap -e 'class get string "GET /" layer payload to 5' \
	-e 'class dns hex-string "|07|example" layer payload'

# a real HTTP request on lo whose client wrote its header in three pieces:
# "User-Agent" and "X-Secret-Token" are cut between TCP segments; found in
# the reassembled stream, missed per packet (--no-stream)
runpkt -r samples/http-split.pcap User-Agent
runpkt --no-stream -r samples/http-split.pcap User-Agent
runpkt --json -r samples/http-split.pcap \
	-e 'class token string "X-Secret-Token" layer stream'
