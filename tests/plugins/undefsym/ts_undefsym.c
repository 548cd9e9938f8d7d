/* ts_undefsym.so - refused: it needs a function nothing defines, so
 * dlopen(RTLD_NOW) fails before any of its code could run. */
#include "../testplugin.h"

TS_API extern int ts_test_no_such_function(void);

static struct ts_config *undefsym_init(const void *pattern, unsigned int len,
				       gfp_t gfp_mask, int flags)
{
	if (ts_test_no_such_function())
		return ERR_PTR(-EINVAL);
	return tp_init(pattern, len, gfp_mask, flags);
}

static struct ts_ops undefsym_ops = {
	.name = "undefsym",
	.init = undefsym_init,
	.find = tp_find,
	.get_pattern = tp_get_pattern,
	.get_pattern_len = tp_get_pattern_len,
};
TEXTSEARCH_PLUGIN(undefsym_ops, "unresolvable symbol");
