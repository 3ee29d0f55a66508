"""Where the checks' facts come from, as their findings cite it, for sources more than one check module names."""

NVML_SOURCE = "NVML (nvidia-ml-py) on this host"
OS_PROBE_SOURCE = "/proc/driver/nvidia, /sys/module/nvidia, /dev, libcuda.so.1 on this host"
