/* ts_badname.so - refused: the file is ts_badname.so but the algorithm
 * inside calls itself something else. */
#include "../testplugin.h"

TP_OPS(badname_ops, "impostor");
TEXTSEARCH_PLUGIN(badname_ops, "name does not match the file");
