/* Scenario "attribution": an allowed connection, whose decision record (kept by
 * the sandbox's supervisor) must name the binary that made it. */

#include "probe.h"

void chk_attr_allowed_connect(void) { tcp_to(&o.allowed_tcp); }
