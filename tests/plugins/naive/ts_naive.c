/* ts_naive.so - a good plugin: what the broken ones are compared with. */
#include "../testplugin.h"

TP_OPS(naive_ops, "naive");
TEXTSEARCH_PLUGIN(naive_ops, "sliding-window test algorithm");
