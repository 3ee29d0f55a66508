/*
 * A stand-in libcuda.so.1 (the CUDA driver API) for cudadoctor's tests.
 *
 * It implements the entry points cudadoctor/probe/libcuda.py calls through ctypes, with the
 * driver API's C signatures. What they answer comes from a key=value file named by the
 * environment variable FAKE_CUDA_CONFIG ('#' starts a comment); unset keys have defaults:
 *
 *   version=12040        what cuDriverGetVersion reports (1000*major + 10*minor)
 *   version_rc=0         its return code (34 CUDA_ERROR_STUB_LIBRARY, 3 NOT_INITIALIZED, ...)
 *   hang=1               cuDriverGetVersion never returns (a wedged driver)
 *   crash=1              cuDriverGetVersion raises SIGSEGV (a crashing driver)
 *   delay_ms=N           cuDriverGetVersion answers after N milliseconds (a slow driver)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

typedef int CUresult;

static long config_number(const char *wanted, long fallback)
{
    const char *path = getenv("FAKE_CUDA_CONFIG");
    char line[256];
    long value = fallback;
    FILE *file;

    if (path == NULL || (file = fopen(path, "r")) == NULL)
        return fallback;
    while (fgets(line, sizeof line, file) != NULL) {
        char *hash = strchr(line, '#');
        char *eq;
        if (hash != NULL)
            *hash = '\0';
        eq = strchr(line, '=');
        if (eq == NULL)
            continue;
        *eq = '\0';
        if (strcmp(strtok(line, " \t"), wanted) == 0)
            value = strtol(eq + 1, NULL, 0); /* the last line for a key wins */
    }
    fclose(file);
    return value;
}

CUresult cuDriverGetVersion(int *version)
{
    CUresult result;
    long delay_ms = config_number("delay_ms", 0);
    if (delay_ms > 0) {
        struct timespec pause_for = {delay_ms / 1000, (delay_ms % 1000) * 1000000L};
        while (nanosleep(&pause_for, &pause_for) != 0)
            ; /* the rest of it, after a signal */
    }
    if (config_number("crash", 0))
        raise(SIGSEGV);
    while (config_number("hang", 0))
        pause(); /* until a signal ends the process */
    result = (CUresult)config_number("version_rc", 0);
    if (version == NULL)
        return 1; /* CUDA_ERROR_INVALID_VALUE */
    if (result != 0)
        return result;
    *version = (int)config_number("version", 12040);
    return 0;
}

CUresult cuGetErrorString(CUresult error, const char **text)
{
    if (text == NULL)
        return 1;
    switch (error) {
    case 0: *text = "no error"; break;
    case 3: *text = "initialization error"; break;
    case 34: *text = "CUDA driver is a stub library"; break;
    case 35: *text = "CUDA driver version is insufficient for CUDA runtime version"; break;
    case 100: *text = "no CUDA-capable device is detected"; break;
    case 803: *text = "system has unsupported display driver / cuda driver combination"; break;
    case 804: *text = "forward compatibility was attempted on non supported HW"; break;
    case 999: *text = "unknown error"; break;
    default: *text = NULL; return 1;
    }
    return 0;
}
