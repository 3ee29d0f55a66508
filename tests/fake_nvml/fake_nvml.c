/*
 * A stand-in libnvidia-ml.so.1 for cudadoctor's tests.
 *
 * It implements the few NVML entry points that cudadoctor/probe/nvml.py reaches through the real
 * nvidia-ml-py bindings (pynvml), with NVML's C signatures and struct layouts, so the bindings
 * run unchanged against it. What it reports comes from a key=value text file named by the
 * environment variable FAKE_NVML_CONFIG, read at nvmlInit time ('#' starts a comment):
 *
 *   init=0                  return code of nvmlInit* (9 driver not loaded, 18 mismatch, ...)
 *   driver=535.104.05       cuda=12020       nvml=12.535.104.05       count=2
 *   gpu0.name=...  gpu0.uuid=...  gpu0.brand=2  gpu0.cc=8.0  gpu0.memory=<bytes>
 *   gpu0.memory_used=<bytes>  gpu0.pci=00000000:07:00.0  gpu0.pci_device_id=0x20B510DE
 *   gpu0.persistence=1
 *   gpu0.mig=1  gpu0.mig.max=7  gpu0.mig.count=2  gpu0.mig0.name/uuid/memory=...
 *   gpu0.retired_pending=0  gpu0.remap_pending=0  gpu0.remap_failure=0  gpu0.ecc_uncorrected=0
 *   gpu1.lost=1                          every call for gpu1 answers NVML_ERROR_GPU_IS_LOST
 *   fail.nvmlDeviceGetBrand=3            this function answers 3 (NOT_SUPPORTED) for every device
 *   gpu0.fail.nvmlDeviceGetMemoryInfo=3  ... for one device (gpu0.mig0.fail.X for one MIG device)
 *   fail.nvmlSystemGetDriverVersion=999  system functions fail the same way
 *   hang.nvmlDeviceGetCount_v2=1         this function never returns (a wedged driver)
 *   crash.nvmlDeviceGetName_v2=1         this function raises SIGSEGV (a crashing driver)
 *   reported_count=4294967295            what nvmlDeviceGetCount answers (no cap; count= stays the GPUs)
 *
 * Multi-GPU (the section at the end of this file says how each default is chosen):
 *   gpu0.socket=1  gpu0.switch=A         CPU socket and PCIe switch: the pair topology
 *   topo.0.4=50                          one pair's nvmlDeviceGetTopologyCommonAncestor level
 *   gpu0.nvlinks=18  gpu0.nvlinks_active=16  NVLink links (unset: no NVLink) and how many are up
 *   gpu0.nvlink_group=board              GPUs of one group reach each other over NVLink
 *   p2p=4  p2p.cross_socket=3  p2p.0.1=1  p2p.0.1.nvlink=0   nvmlDeviceGetP2PStatus answers
 *   fabric=1  gpu0.fabric=3  fabric.status=0  gpu0.fabric.clique=1   the NVSwitch fabric
 *   fabric.v1_only=1                     nvmlDeviceGetGpuFabricInfoV refuses its struct's version
 *
 * The variables FAKE_NVML_HANG and FAKE_NVML_CRASH name one function each (or "nvmlInit" for the
 * init calls) to hang or crash the same way without a config file.
 *
 * Unset keys have defaults (one A100-like GPU, driver 535.104.05, CUDA 12.2). gpuN.mig unset means
 * the GPU is not MIG-capable (NOT_SUPPORTED), like a GeForce. A symbol can be left out of the
 * library at link time (tests/nvml_stub.py does it with a linker version script), which is how
 * NVML_ERROR_FUNCTION_NOT_FOUND is produced: pynvml really fails to find it.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int nvmlReturn_t;

enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_GPU_IS_LOST = 15,
    NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
};

#define MAX_GPUS 64
#define MAX_MIG 7 /* what an A100/H100 reports as nvmlDeviceGetMaxMigDeviceCount */
#define MAX_ENTRIES 2048

struct nvmlDevice_st {
    int gpu; /* physical GPU index */
    int mig; /* MIG slot, or -1 for the physical GPU */
};
typedef struct nvmlDevice_st *nvmlDevice_t;

typedef struct {
    unsigned long long total, free, used;
} nvmlMemory_t;

typedef struct {
    unsigned int version;
    unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;

#define NVML_MEMORY_V2_VERSION ((unsigned int)(sizeof(nvmlMemory_v2_t) | (2u << 24)))

typedef struct {
    char busIdLegacy[16];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;

/* ---- configuration ---------------------------------------------------------------------- */

static struct {
    char key[128];
    char value[256];
} entries[MAX_ENTRIES];
static int entry_count;
static int init_count; /* nvmlInit* successes minus nvmlShutdown calls */

static struct nvmlDevice_st gpus[MAX_GPUS];
static struct nvmlDevice_st migs[MAX_GPUS][MAX_MIG];

static char *trim(char *s)
{
    char *end;
    while (*s == ' ' || *s == '\t')
        s++;
    end = s + strlen(s);
    while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\n' || end[-1] == '\r'))
        *--end = '\0';
    return s;
}

static void load_config(void)
{
    const char *path = getenv("FAKE_NVML_CONFIG");
    char line[512];
    FILE *file;

    entry_count = 0;
    if (path == NULL || (file = fopen(path, "r")) == NULL)
        return;
    while (fgets(line, sizeof line, file) != NULL && entry_count < MAX_ENTRIES) {
        char *hash = strchr(line, '#');
        char *eq;
        if (hash != NULL)
            *hash = '\0';
        eq = strchr(line, '=');
        if (eq == NULL)
            continue;
        *eq = '\0';
        snprintf(entries[entry_count].key, sizeof entries[0].key, "%s", trim(line));
        snprintf(entries[entry_count].value, sizeof entries[0].value, "%s", trim(eq + 1));
        entry_count++;
    }
    fclose(file);
}

/* The value of a key built from a printf format, or NULL. The last line for a key wins. */
static const char *cfg(const char *format, ...)
{
    char key[160];
    va_list args;
    int i;

    va_start(args, format);
    vsnprintf(key, sizeof key, format, args);
    va_end(args);
    for (i = entry_count - 1; i >= 0; i--)
        if (strcmp(entries[i].key, key) == 0)
            return entries[i].value;
    return NULL;
}

static unsigned long long number(const char *value, unsigned long long fallback)
{
    return value != NULL ? strtoull(value, NULL, 0) : fallback;
}

static int gpu_count(void)
{
    unsigned long long count = number(cfg("count"), 1);
    return count > MAX_GPUS ? MAX_GPUS : (int)count;
}

static unsigned long long gpu_memory(int gpu)
{
    return number(cfg("gpu%d.memory", gpu), 85899345920ULL); /* 80 GiB */
}

/* "gpu3." for a physical GPU, "gpu3.mig1." for a MIG device. */
static const char *prefix(nvmlDevice_t device)
{
    static char text[32];
    if (device->mig < 0)
        snprintf(text, sizeof text, "gpu%d.", device->gpu);
    else
        snprintf(text, sizeof text, "gpu%d.mig%d.", device->gpu, device->mig);
    return text;
}

/* ---- faults: a call that never returns, a call that crashes ------------------------------ */

static int named_by(const char *variable, const char *function)
{
    const char *value = getenv(variable);
    return value != NULL && strcmp(value, function) == 0;
}

static void fault(const char *function)
{
    if (named_by("FAKE_NVML_CRASH", function) || number(cfg("crash.%s", function), 0))
        raise(SIGSEGV);
    if (named_by("FAKE_NVML_HANG", function) || number(cfg("hang.%s", function), 0))
        for (;;)
            pause();
}

/* ---- call gates: not initialised, bad handle, GPU lost, configured failures -------------- */

static nvmlReturn_t system_call(const char *function)
{
    fault(function);
    if (init_count <= 0)
        return NVML_ERROR_UNINITIALIZED;
    return (nvmlReturn_t)number(cfg("fail.%s", function), NVML_SUCCESS);
}

static int valid_handle(nvmlDevice_t device)
{
    if (device == NULL || device->gpu < 0 || device->gpu >= gpu_count())
        return 0;
    if (device->mig < 0)
        return device == &gpus[device->gpu];
    return device->mig < MAX_MIG && device == &migs[device->gpu][device->mig];
}

static nvmlReturn_t device_call(nvmlDevice_t device, const char *function)
{
    const char *code;
    fault(function);
    if (init_count <= 0)
        return NVML_ERROR_UNINITIALIZED;
    if (!valid_handle(device))
        return NVML_ERROR_INVALID_ARGUMENT;
    if (number(cfg("gpu%d.lost", device->gpu), 0))
        return NVML_ERROR_GPU_IS_LOST;
    if ((code = cfg("%sfail.%s", prefix(device), function)) != NULL)
        return (nvmlReturn_t)number(code, 0);
    if (device->mig >= 0 && (code = cfg("gpu%d.fail.%s", device->gpu, function)) != NULL)
        return (nvmlReturn_t)number(code, 0);
    return (nvmlReturn_t)number(cfg("fail.%s", function), NVML_SUCCESS);
}

static nvmlReturn_t copy_text(char *buffer, unsigned int length, const char *text)
{
    if (buffer == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (strlen(text) + 1 > length)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(buffer, text, strlen(text) + 1);
    return NVML_SUCCESS;
}

/* ---- library ---------------------------------------------------------------------------- */

nvmlReturn_t nvmlInitWithFlags(unsigned int flags)
{
    nvmlReturn_t result;
    int i, j;

    (void)flags;
    load_config();
    fault("nvmlInit");
    result = (nvmlReturn_t)number(cfg("init"), NVML_SUCCESS);
    if (result != NVML_SUCCESS)
        return result;
    for (i = 0; i < MAX_GPUS; i++) {
        gpus[i].gpu = i;
        gpus[i].mig = -1;
        for (j = 0; j < MAX_MIG; j++) {
            migs[i][j].gpu = i;
            migs[i][j].mig = j;
        }
    }
    init_count++;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlInit_v2(void)
{
    return nvmlInitWithFlags(0);
}

nvmlReturn_t nvmlShutdown(void)
{
    if (init_count <= 0)
        return NVML_ERROR_UNINITIALIZED;
    init_count--;
    return NVML_SUCCESS;
}

/* Texts for the codes pynvml's NVMLError table lists are that table's; the rest follow nvml.h. */
const char *nvmlErrorString(nvmlReturn_t result)
{
    switch (result) {
    case 0: return "Success";
    case 1: return "Uninitialized";
    case 2: return "Invalid Argument";
    case 3: return "Not Supported";
    case 4: return "Insufficient Permissions";
    case 5: return "Already Initialized";
    case 6: return "Not Found";
    case 7: return "Insufficient Size";
    case 8: return "Insufficient External Power";
    case 9: return "Driver Not Loaded";
    case 10: return "Timeout";
    case 11: return "Interrupt Request Issue";
    case 12: return "NVML Shared Library Not Found";
    case 13: return "Function Not Found";
    case 14: return "Corrupted infoROM";
    case 15: return "GPU is lost";
    case 16: return "GPU requires restart";
    case 17: return "The operating system has blocked the request.";
    case 18: return "RM has detected an NVML/RM version mismatch.";
    case 19: return "In use by another client";
    case 20: return "Insufficient Memory";
    case 21: return "No data";
    case 22: return "The requested vgpu operation is not available on target device, because ECC is enabled";
    case 23: return "Insufficient resources";
    case 24: return "Frequency not supported";
    case 25: return "Argument version mismatch";
    case 26: return "Deprecated";
    case 27: return "Not ready";
    case 28: return "GPU not found";
    case 29: return "Invalid state";
    case 30: return "Reset type not supported";
    default: return "Unknown Error";
    }
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
    nvmlReturn_t result = system_call("nvmlSystemGetDriverVersion");
    if (result != NVML_SUCCESS)
        return result;
    return copy_text(version, length, cfg("driver") ? cfg("driver") : "535.104.05");
}

nvmlReturn_t nvmlSystemGetNVMLVersion(char *version, unsigned int length)
{
    nvmlReturn_t result = system_call("nvmlSystemGetNVMLVersion");
    if (result != NVML_SUCCESS)
        return result;
    return copy_text(version, length, cfg("nvml") ? cfg("nvml") : "12.535.104.05");
}

static nvmlReturn_t cuda_version(const char *function, int *version)
{
    nvmlReturn_t result = system_call(function);
    if (result != NVML_SUCCESS)
        return result;
    if (version == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    *version = (int)number(cfg("cuda"), 12020);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *version)
{
    return cuda_version("nvmlSystemGetCudaDriverVersion", version);
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *version)
{
    return cuda_version("nvmlSystemGetCudaDriverVersion_v2", version);
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count)
{
    nvmlReturn_t result = system_call("nvmlDeviceGetCount_v2");
    if (result != NVML_SUCCESS)
        return result;
    if (count == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    *count = cfg("reported_count") ? (unsigned int)number(cfg("reported_count"), 0) : (unsigned int)gpu_count();
    return NVML_SUCCESS;
}

/* ---- devices ---------------------------------------------------------------------------- */

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
    nvmlReturn_t result;
    if (init_count <= 0)
        return NVML_ERROR_UNINITIALIZED;
    if (index >= (unsigned int)gpu_count() || device == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    result = device_call(&gpus[index], "nvmlDeviceGetHandleByIndex_v2");
    if (result == NVML_SUCCESS)
        *device = &gpus[index];
    return result;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
    char fallback[160];
    const char *value;
    nvmlReturn_t result = device_call(device, "nvmlDeviceGetName");
    if (result != NVML_SUCCESS)
        return result;
    if ((value = cfg("%sname", prefix(device))) != NULL)
        return copy_text(name, length, value);
    if (device->mig < 0)
        return copy_text(name, length, "NVIDIA A100-SXM4-80GB");
    value = cfg("gpu%d.name", device->gpu);
    snprintf(fallback, sizeof fallback, "%s MIG", value ? value : "NVIDIA A100-SXM4-80GB");
    return copy_text(name, length, fallback);
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
    char fallback[96];
    const char *value;
    nvmlReturn_t result = device_call(device, "nvmlDeviceGetUUID");
    if (result != NVML_SUCCESS)
        return result;
    if ((value = cfg("%suuid", prefix(device))) != NULL)
        return copy_text(uuid, length, value);
    if (device->mig < 0)
        snprintf(fallback, sizeof fallback, "GPU-00000000-0000-4000-8000-%012d", device->gpu);
    else
        snprintf(fallback, sizeof fallback, "MIG-00000000-0000-4000-8000-%06d%06d", device->gpu,
                 device->mig);
    return copy_text(uuid, length, fallback);
}

nvmlReturn_t nvmlDeviceGetBrand(nvmlDevice_t device, unsigned int *brand)
{
    nvmlReturn_t result = device_call(device, "nvmlDeviceGetBrand");
    if (result != NVML_SUCCESS)
        return result;
    if (brand == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    *brand = (unsigned int)number(cfg("gpu%d.brand", device->gpu), 2); /* NVML_BRAND_TESLA */
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor)
{
    const char *value;
    nvmlReturn_t result = device_call(device, "nvmlDeviceGetCudaComputeCapability");
    if (result != NVML_SUCCESS)
        return result;
    if (major == NULL || minor == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    value = cfg("gpu%d.cc", device->gpu);
    if (value == NULL || sscanf(value, "%d.%d", major, minor) != 2) {
        *major = 8;
        *minor = 0;
    }
    return NVML_SUCCESS;
}

static void memory_of(nvmlDevice_t device, unsigned long long *total, unsigned long long *used)
{
    if (device->mig < 0) {
        *total = gpu_memory(device->gpu);
    } else {
        unsigned long long count = number(cfg("gpu%d.mig.count", device->gpu), 1);
        *total = number(cfg("%smemory", prefix(device)), gpu_memory(device->gpu) / (count ? count : 1));
    }
    *used = number(cfg("%smemory_used", prefix(device)), 0);
    if (*used > *total)
        *used = *total;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
    nvmlReturn_t result = device_call(device, "nvmlDeviceGetMemoryInfo");
    if (result != NVML_SUCCESS)
        return result;
    if (memory == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    memory_of(device, &memory->total, &memory->used);
    memory->free = memory->total - memory->used;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory)
{
    nvmlReturn_t result = device_call(device, "nvmlDeviceGetMemoryInfo_v2");
    if (result != NVML_SUCCESS)
        return result;
    if (memory == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (memory->version != NVML_MEMORY_V2_VERSION)
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    memory_of(device, &memory->total, &memory->used);
    memory->reserved = 0;
    memory->free = memory->total - memory->used;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
    char fallback[32];
    const char *bus_id;
    nvmlReturn_t result = device_call(device, "nvmlDeviceGetPciInfo_v3");
    if (result != NVML_SUCCESS)
        return result;
    if (pci == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    memset(pci, 0, sizeof *pci);
    snprintf(fallback, sizeof fallback, "00000000:%02X:00.0", 0x07 + device->gpu);
    bus_id = cfg("gpu%d.pci", device->gpu) ? cfg("gpu%d.pci", device->gpu) : fallback;
    snprintf(pci->busId, sizeof pci->busId, "%s", bus_id);
    sscanf(bus_id, "%x:%x:%x", &pci->domain, &pci->bus, &pci->device);
    snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%04X:%02X:%02X.0", pci->domain & 0xFFFF,
             pci->bus & 0xFF, pci->device & 0xFF);
    pci->pciDeviceId = (unsigned int)number(cfg("gpu%d.pci_device_id", device->gpu), 0x20B510DE);
    pci->pciSubSystemId = (unsigned int)number(cfg("gpu%d.pci_subsystem_id", device->gpu), 0x153310DE);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t device, unsigned int *mode)
{
    nvmlReturn_t result = device_call(device, "nvmlDeviceGetPersistenceMode");
    if (result != NVML_SUCCESS)
        return result;
    if (mode == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    *mode = (unsigned int)number(cfg("gpu%d.persistence", device->gpu), 0);
    return NVML_SUCCESS;
}

/* ---- MIG -------------------------------------------------------------------------------- */

static nvmlReturn_t mig_capable(nvmlDevice_t device)
{
    if (device->mig >= 0)
        return NVML_ERROR_INVALID_ARGUMENT; /* asked of a MIG device, not its parent */
    return cfg("gpu%d.mig", device->gpu) != NULL ? NVML_SUCCESS : NVML_ERROR_NOT_SUPPORTED;
}

static unsigned int mig_limit(int gpu)
{
    unsigned long long limit = number(cfg("gpu%d.mig.max", gpu), MAX_MIG);
    return limit > MAX_MIG ? MAX_MIG : (unsigned int)limit;
}

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int *current, unsigned int *pending)
{
    nvmlReturn_t result = device_call(device, "nvmlDeviceGetMigMode");
    if (result == NVML_SUCCESS)
        result = mig_capable(device);
    if (result != NVML_SUCCESS)
        return result;
    if (current == NULL || pending == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    *current = (unsigned int)number(cfg("gpu%d.mig", device->gpu), 0);
    *pending = (unsigned int)number(cfg("gpu%d.mig.pending", device->gpu), *current);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int *count)
{
    nvmlReturn_t result = device_call(device, "nvmlDeviceGetMaxMigDeviceCount");
    if (result == NVML_SUCCESS)
        result = mig_capable(device);
    if (result != NVML_SUCCESS)
        return result;
    if (count == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    *count = mig_limit(device->gpu);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index,
                                                 nvmlDevice_t *mig)
{
    nvmlReturn_t result = device_call(device, "nvmlDeviceGetMigDeviceHandleByIndex");
    if (result == NVML_SUCCESS)
        result = mig_capable(device);
    if (result != NVML_SUCCESS)
        return result;
    if (mig == NULL || index >= mig_limit(device->gpu))
        return NVML_ERROR_INVALID_ARGUMENT;
    if (!number(cfg("gpu%d.mig", device->gpu), 0))
        return NVML_ERROR_NOT_FOUND; /* MIG mode off: no MIG devices */
    if (index >= number(cfg("gpu%d.mig.count", device->gpu), 0))
        return NVML_ERROR_NOT_FOUND; /* an empty slot */
    *mig = &migs[device->gpu][index];
    return NVML_SUCCESS;
}

/* ---- health ----------------------------------------------------------------------------- */

nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t device, unsigned int *pending)
{
    nvmlReturn_t result = device_call(device, "nvmlDeviceGetRetiredPagesPendingStatus");
    if (result != NVML_SUCCESS)
        return result;
    if (pending == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    *pending = (unsigned int)number(cfg("gpu%d.retired_pending", device->gpu), 0);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t device, unsigned int *corrected,
                                       unsigned int *uncorrected, unsigned int *pending,
                                       unsigned int *failure)
{
    nvmlReturn_t result = device_call(device, "nvmlDeviceGetRemappedRows");
    if (result != NVML_SUCCESS)
        return result;
    if (corrected == NULL || uncorrected == NULL || pending == NULL || failure == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    *corrected = (unsigned int)number(cfg("gpu%d.remap_corrected", device->gpu), 0);
    *uncorrected = (unsigned int)number(cfg("gpu%d.remap_uncorrected", device->gpu), 0);
    *pending = (unsigned int)number(cfg("gpu%d.remap_pending", device->gpu), 0);
    *failure = (unsigned int)number(cfg("gpu%d.remap_failure", device->gpu), 0);
    return NVML_SUCCESS;
}

/* errorType: 0 corrected, 1 uncorrected; counterType: 0 volatile, 1 aggregate. */
nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, unsigned int errorType,
                                         unsigned int counterType, unsigned long long *count)
{
    static const char *const keys[2][2] = {
        {"ecc_corrected", "ecc_corrected_aggregate"},
        {"ecc_uncorrected", "ecc_uncorrected_aggregate"},
    };
    nvmlReturn_t result = device_call(device, "nvmlDeviceGetTotalEccErrors");
    if (result != NVML_SUCCESS)
        return result;
    if (count == NULL || errorType > 1 || counterType > 1)
        return NVML_ERROR_INVALID_ARGUMENT;
    *count = number(cfg("gpu%d.%s", device->gpu, keys[errorType][counterType]), 0);
    return NVML_SUCCESS;
}

/* ---- multi-GPU: topology, peer-to-peer, NVLink, the NVSwitch fabric ----------------------- */

static int socket_of(int gpu)
{
    return (int)number(cfg("gpu%d.socket", gpu), 0);
}

static int nvlink_count(int gpu)
{
    return (int)number(cfg("gpu%d.nvlinks", gpu), 0);
}

/* The fabric state a GPU reports: its own gpuN.fabric, else the host's fabric=; -1 none. */
static int fabric_state(int gpu)
{
    const char *value = cfg("gpu%d.fabric", gpu);
    if (value == NULL)
        value = cfg("fabric");
    return value != NULL ? (int)number(value, 0) : -1;
}

/* Two GPUs reach each other over NVLink when they share an nvlink_group (a bridge pair, or the
 * GPUs of an NVSwitch board) and, on an NVSwitch board, both registered with a completed fabric
 * (a GPU that fails to register loses its NVLink peers). */
static int nvlink_peers(int a, int b)
{
    const char *ga = cfg("gpu%d.nvlink_group", a), *gb = cfg("gpu%d.nvlink_group", b);
    int fa = fabric_state(a), fb = fabric_state(b);
    if (ga == NULL || gb == NULL || strcmp(ga, gb) != 0)
        return 0;
    if ((fa >= 0 && fa != 3) || (fb >= 0 && fb != 3))
        return 0;
    if (fa >= 0 && number(cfg("gpu%d.fabric.status", a), number(cfg("fabric.status"), 0)) != 0)
        return 0;
    return 1;
}

static int pair_call(nvmlDevice_t a, nvmlDevice_t b, const char *function, nvmlReturn_t *result)
{
    *result = device_call(a, function);
    if (*result != NVML_SUCCESS)
        return 0;
    if (!valid_handle(b) || a->mig >= 0 || b->mig >= 0) {
        *result = NVML_ERROR_INVALID_ARGUMENT;
        return 0;
    }
    if (number(cfg("gpu%d.lost", b->gpu), 0)) {
        *result = NVML_ERROR_GPU_IS_LOST;
        return 0;
    }
    return 1;
}

/* topo.I.J=<level> for one pair (either order); else 50 (SYSTEM) across sockets, 10 (SINGLE) on
 * one PCIe switch (gpuN.switch), 40 (NODE) otherwise. */
nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t a, nvmlDevice_t b, unsigned int *level)
{
    const char *value, *sa, *sb;
    nvmlReturn_t result;
    if (!pair_call(a, b, "nvmlDeviceGetTopologyCommonAncestor", &result))
        return result;
    if (level == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    if ((value = cfg("topo.%d.%d", a->gpu, b->gpu)) != NULL || (value = cfg("topo.%d.%d", b->gpu, a->gpu)) != NULL) {
        *level = (unsigned int)number(value, 0);
        return NVML_SUCCESS;
    }
    sa = cfg("gpu%d.switch", a->gpu);
    sb = cfg("gpu%d.switch", b->gpu);
    if (socket_of(a->gpu) != socket_of(b->gpu))
        *level = 50;
    else if (sa != NULL && sb != NULL && strcmp(sa, sb) == 0)
        *level = 10;
    else
        *level = 40;
    return NVML_SUCCESS;
}

/* caps: 0 read, 1 write, 2 NVLink, 3 atomics. p2p.I.J=<status> (p2p.I.J.nvlink for index 2) sets
 * one pair; p2p=<status> every pair without NVLink; p2p.cross_socket=<status> (default 3, IOH
 * topology not supported) pairs across sockets; otherwise 0 (OK) over NVLink or one socket's PCIe.
 * NVLink is 0 between nvlink_peers, else 5 (not supported). */
nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t a, nvmlDevice_t b, unsigned int caps, unsigned int *status)
{
    const char *value;
    nvmlReturn_t result;
    int nvlink;
    if (!pair_call(a, b, "nvmlDeviceGetP2PStatus", &result))
        return result;
    if (status == NULL || caps > 4)
        return NVML_ERROR_INVALID_ARGUMENT;
    nvlink = nvlink_peers(a->gpu, b->gpu);
    if (caps == 2) {
        value = cfg("p2p.%d.%d.nvlink", a->gpu, b->gpu);
        *status = value != NULL ? (unsigned int)number(value, 0) : (nvlink ? 0u : 5u);
        return NVML_SUCCESS;
    }
    if ((value = cfg("p2p.%d.%d", a->gpu, b->gpu)) != NULL || (value = cfg("p2p.%d.%d", b->gpu, a->gpu)) != NULL)
        *status = (unsigned int)number(value, 0);
    else if (nvlink)
        *status = 0;
    else if ((value = cfg("p2p")) != NULL)
        *status = (unsigned int)number(value, 0);
    else if (socket_of(a->gpu) != socket_of(b->gpu))
        *status = (unsigned int)number(cfg("p2p.cross_socket"), 3);
    else
        *status = 0;
    return NVML_SUCCESS;
}

/* gpuN.nvlinks=<links> (unset: no NVLink, NOT_SUPPORTED), the first gpuN.nvlinks_active of them up
 * (default all). */
nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link, unsigned int *active)
{
    nvmlReturn_t result = device_call(device, "nvmlDeviceGetNvLinkState");
    int links;
    if (result != NVML_SUCCESS)
        return result;
    if (active == NULL || device->mig >= 0)
        return NVML_ERROR_INVALID_ARGUMENT;
    links = nvlink_count(device->gpu);
    if (links <= 0)
        return NVML_ERROR_NOT_SUPPORTED;
    if ((int)link >= links)
        return NVML_ERROR_INVALID_ARGUMENT;
    *active = (int)link < (int)number(cfg("gpu%d.nvlinks_active", device->gpu), (unsigned long long)links) ? 1u : 0u;
    return NVML_SUCCESS;
}

#define FABRIC_UUID_LEN 16

typedef struct {
    unsigned char clusterUuid[FABRIC_UUID_LEN];
    nvmlReturn_t status;
    unsigned int cliqueId;
    unsigned int state;
} nvmlGpuFabricInfo_t;

typedef struct {
    unsigned int version;
    unsigned char clusterUuid[FABRIC_UUID_LEN];
    nvmlReturn_t status;
    unsigned int cliqueId;
    unsigned int state;
    unsigned int healthMask;
} nvmlGpuFabricInfo_v2_t;

#define NVML_GPU_FABRIC_INFO_V2_VERSION ((unsigned int)(sizeof(nvmlGpuFabricInfo_v2_t) | (2u << 24)))

/* fabric=<state> for every GPU, gpuN.fabric=<state> for one (1 not started, 2 in progress,
 * 3 completed); fabric.status / gpuN.fabric.status: the registration's NVML code; unset: the GPU
 * is in no fabric (NOT_SUPPORTED). */
static nvmlReturn_t fabric_of(nvmlDevice_t device, unsigned char *uuid, nvmlReturn_t *status, unsigned int *clique,
                              unsigned int *state)
{
    int value = fabric_state(device->gpu);
    if (device->mig >= 0)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (value < 0)
        return NVML_ERROR_NOT_SUPPORTED;
    memset(uuid, 0, FABRIC_UUID_LEN);
    if (value == 3)
        memset(uuid, 0xab, FABRIC_UUID_LEN);
    *status = (nvmlReturn_t)number(cfg("gpu%d.fabric.status", device->gpu), number(cfg("fabric.status"), 0));
    *clique = (unsigned int)number(cfg("gpu%d.fabric.clique", device->gpu), value == 3 ? 1 : 0);
    *state = (unsigned int)value;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetGpuFabricInfo(nvmlDevice_t device, nvmlGpuFabricInfo_t *info)
{
    nvmlReturn_t result = device_call(device, "nvmlDeviceGetGpuFabricInfo");
    if (result != NVML_SUCCESS)
        return result;
    if (info == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    return fabric_of(device, info->clusterUuid, &info->status, &info->cliqueId, &info->state);
}

nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t device, nvmlGpuFabricInfo_v2_t *info)
{
    nvmlReturn_t result = device_call(device, "nvmlDeviceGetGpuFabricInfoV");
    if (result != NVML_SUCCESS)
        return result;
    if (info == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    /* fabric.v1_only=1: a driver that knows an older version of this struct only */
    if (info->version != NVML_GPU_FABRIC_INFO_V2_VERSION || number(cfg("fabric.v1_only"), 0))
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    info->healthMask = 0;
    return fabric_of(device, info->clusterUuid, &info->status, &info->cliqueId, &info->state);
}
