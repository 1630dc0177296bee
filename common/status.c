#include "common/status.h"

int status_exit_code(Status st)
{
    switch (st) {
    case ST_OK:
        return 0;
    case ST_MISMATCH:
        return 1;
    case ST_BAD_INPUT:
        return 2;
    case ST_NO_DEVICE:
        return 3;
    case ST_NOMEM:
        return 2;
    case ST_INTERNAL:
        return 2;
    case ST_CANCELLED:
        return 130;
    }
    return 2;
}

const char *status_name(Status st)
{
    switch (st) {
    case ST_OK:
        return "ok";
    case ST_MISMATCH:
        return "mismatch";
    case ST_BAD_INPUT:
        return "bad input";
    case ST_NO_DEVICE:
        return "no device";
    case ST_NOMEM:
        return "out of memory";
    case ST_INTERNAL:
        return "internal error";
    case ST_CANCELLED:
        return "cancelled";
    }
    return "?";
}
