# Sourced by the Cortex-M7 tests: exits 77 (skipped), saying why, without
# arm-none-eabi-gcc, its newlib (libnewlib-arm-none-eabi), qemu-system-arm or
# make (scripts/install-deps.sh installs them).
for tool in arm-none-eabi-gcc qemu-system-arm make; do
  if ! command -v "$tool" >/dev/null; then
    echo "skipped: $tool is not installed (scripts/install-deps.sh installs it)"
    exit 77
  fi
done
if [ "$(arm-none-eabi-gcc -print-file-name=nano.specs)" = nano.specs ]; then
  echo "skipped: newlib for arm-none-eabi is not installed (libnewlib-arm-none-eabi)"
  exit 77
fi
